/**
 * The notifications hubs exchange on PostgreSQL at message rate: commit notes (split under the
 * size limit, carrying the messages with their routing fields) and delivery notes; a hub tells its
 * own notes apart without parsing them.
 */

import { expect, test } from 'bun:test';
import { sequencedJson, unsequencedJson } from '../lib/mesh/message-json.ts';
import {
  NOTE_LIMIT,
  commitLine,
  commitNoteParts,
  deliveryNotes,
  noteOrigin,
  parseCommitNote,
  parseDeliveryNote,
  readCommitLine,
} from '../lib/mesh/postgres-notes.ts';
import { MESH_LIMITS } from '../lib/mesh/limits.ts';
import { encodeText } from '../lib/mesh/payload.ts';
import { checkDraft, sequenced, type CheckedDraft, type MessageDraft } from '../lib/mesh/store.ts';

const hub = 'hub-0f8fad5b-d9cb-469f-a165-70867728950e';
const draft = (id: string, text: string, extra: Partial<MessageDraft> = {}): CheckedDraft => {
  const r = checkDraft(
    {
      project: 'demo',
      from: { name: 'alice', presenceId: 'p-alice' },
      messageId: id,
      target: { type: 'agent', name: 'bob', presenceId: 'p-bob' },
      payload: encodeText(text),
      attachments: [],
      ...extra,
    },
    MESH_LIMITS,
  );
  if (!r.ok) throw new Error(r.error.message);
  return r.result;
};
/** The note the database sends: the part with its first sequence put in. */
const noteOf = (p: { prefix: string; offset: number; tail: string }, first: number) => `${p.prefix}${first + p.offset}${p.tail}`;

test('a commit line carries the message: routed without decoding, equal to the committed message once read', () => {
  const cases = [
    draft('m-1', 'hello\tworld\nagain é€𝄞'),
    draft('m-2', 'to all', { target: { type: 'project' }, replyTo: 'demo:1' }),
    draft('m-3', 'nobody here', { target: { type: 'agent', name: 'carol' } }),
    draft('m-4', 'file', { attachments: [{ name: 'a.txt', payload: { encoding: 'base64', data: btoa('x'), uncompressedBytes: 1 } }] }),
  ];
  cases.forEach((c, i) => {
    const json = unsequencedJson(c, 1_700_000_000_000);
    const read = readCommitLine(commitLine(c.messageId, c.candidate, json), 'demo', 7 + i)!;
    const expected = sequenced(c, 7 + i, 1_700_000_000_000);
    expect(read.message).toEqual(expected);
    expect(JSON.parse(read.json)).toEqual(expected);
    expect(JSON.parse(JSON.stringify(read.message))).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(read.json).toBe(sequencedJson(json, 'demo', 7 + i));
  });
  expect(readCommitLine('m-1\talice\tp-alice', 'demo', 1)).toBeUndefined();
  expect(readCommitLine('m-1\talice\tp-alice\tbob\tp-bob\tnot json', 'demo', 1)).toBeUndefined();
});

test('commit notes stay under the limit, keep the order, and announce a message too large for any note without it', () => {
  const lines = Array.from({ length: 100 }, (_, i) => {
    const c = draft(`m-${i}`, i === 50 ? 'y'.repeat(9_000) : `${i} ${'é€𝄞'.repeat(40)}`);
    return commitLine(c.messageId, c.candidate, unsequencedJson(c, 1));
  });
  const parts = commitNoteParts(hub, 'demo', lines);
  expect(parts.length).toBeGreaterThan(3);
  const first = 9_007_199_254_740; // a large first sequence: the header still fits
  let next = 0;
  for (const p of parts) {
    const note = noteOf(p, first);
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(NOTE_LIMIT);
    expect(noteOrigin(note)).toBe(hub);
    const c = parseCommitNote(note)!;
    expect(c).toMatchObject({ hub, project: 'demo', first: first + next });
    if (next === 50) expect(c).toEqual({ hub, project: 'demo', first: first + 50, count: 1 });
    else expect(c.messages).toEqual(lines.slice(next, next + c.count));
    next += c.count;
  }
  expect(next).toBe(100);
  expect(parseCommitNote('c\thub\tdemo\t0\t1')).toBeUndefined();
  expect(parseCommitNote(`c\thub\tdemo\t2\t1\n${lines[0]}`)).toEqual({ hub: 'hub', project: 'demo', first: 1, count: 2 });
});

test('delivery notes: outcomes split under the limit, read back in order; JSON notes have no origin here', () => {
  const items: [string, string][] = Array.from({ length: 300 }, (_, i) => [`p-${i}`, JSON.stringify({ type: 'delivery', messageId: `m-${i}`, to: 'bob', status: 'failed', error: 'busy\n\t'.repeat(10) })]);
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
});
