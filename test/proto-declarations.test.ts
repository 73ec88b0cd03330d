/**
 * @module test/proto-declarations — the shipped lib/a2a/proto/declarations.json is what parsing
 * lib/a2a/proto/a2a.proto (and the google types beside it) gives today, so the two never drift; and
 * the schema resolved from it names every A2A method and message the binding uses.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { DECLARATIONS_FILE, declarationsText } from '../lib/a2a/proto/declarations.ts';
import { A2A_METHODS, A2A_PACKAGE, A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';

setDefaultTimeout(10_000);

describe('a2a.proto declarations', () => {
  test('the shipped file is what parsing a2a.proto gives (run `bun lib/a2a/proto/declarations.ts` after editing it)', () => {
    expect(readFileSync(DECLARATIONS_FILE, 'utf8')).toBe(declarationsText());
  });

  test('the schema resolves from the shipped declarations', () => {
    expect(A2A_PACKAGE).toBe('lf.a2a.v1');
    for (const m of A2A_METHODS.values()) {
      expect(A2A_SCHEMA.messages.has(m.input)).toBe(true);
      expect(A2A_SCHEMA.messages.has(m.output)).toBe(true);
    }
    const card = A2A_SCHEMA.messages.get('lf.a2a.v1.AgentCard')!;
    expect(card.byNo.get(card.fields[0]!.no)).toBe(card.fields[0]);
    expect(A2A_SCHEMA.enums.get('lf.a2a.v1.TaskState')!.numbers.get('TASK_STATE_COMPLETED')).toBe(
      3,
    );
  });
});
