/**
 * The notifications hubs exchange on PostgreSQL at message rate: commit notes and delivery notes
 * (split under the size limit); a hub tells its own notes apart without parsing them.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import {
  NOTE_LIMIT,
  commitNotePrefix,
  deliveryNotes,
  noteOrigin,
  parseCommitNote,
  parseDeliveryNote,
} from '../lib/mesh/postgres-notes.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const hub = 'hub-0f8fad5b-d9cb-469f-a165-70867728950e';

test('commit notes: the prefix the database completes, read back; malformed ones refused', () => {
  const note = `${commitNotePrefix(hub)}demo\t42`;
  expect(noteOrigin(note)).toBe(hub);
  expect(parseCommitNote(note)).toEqual({ hub, project: 'demo', sequence: 42 });
  for (const bad of [
    'c\thub\tdemo',
    'c\thub\tdemo\tx',
    'c\thub\tdemo\t-1',
    'c\thub\tdemo\t1\t2',
    'x\thub\tdemo\t1',
  ])
    expect(parseCommitNote(bad)).toBeUndefined();
});

test('delivery notes: outcomes split under the limit, read back in order; JSON notes have no origin here', () => {
  const items: [string, string][] = Array.from({ length: 300 }, (_, i) => [
    `p-${i}`,
    JSON.stringify({
      type: 'delivery',
      messageId: `m-${i}`,
      to: 'bob',
      status: 'failed',
      error: 'busy\n\té€𝄞'.repeat(10),
    }),
  ]);
  const notes = deliveryNotes(hub, items);
  expect(notes.length).toBeGreaterThan(1);
  const read = notes.flatMap((n) => {
    expect(Buffer.byteLength(n)).toBeLessThanOrEqual(NOTE_LIMIT);
    expect(noteOrigin(n)).toBe(hub);
    return parseDeliveryNote(n)!.items;
  });
  expect(read).toEqual(items);
  expect(deliveryNotes(hub, [])).toEqual([]);
  expect(noteOrigin(JSON.stringify({ k: 'j', h: hub }))).toBeUndefined();
  expect(parseDeliveryNote('d')).toBeUndefined();
});
