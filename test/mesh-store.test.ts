/** The mesh's building blocks in process: payload codec, references, the SQLite store and the history rules. */

import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import { silentLog } from '../lib/log.ts';
import { parseHistoryQuery } from '../lib/mesh/history.ts';
import { decodeText, encodeAttachment, encodeText, validateContent } from '../lib/mesh/payload.ts';
import { formatRef, parseRef } from '../lib/mesh/ref.ts';
import { createMeshStore, type MessageDraft } from '../lib/mesh/store.ts';

const MiB = 1024 * 1024;

describe('payload codec', () => {
  test('text under 32 KiB is identity, from 32 KiB on gzip+base64, and both decode back', () => {
    const small = 'a'.repeat(32 * 1024 - 1);
    const large = 'a'.repeat(32 * 1024);
    expect(encodeText(small).encoding).toBe('identity');
    expect(encodeText(large)).toEqual({ encoding: 'gzip+base64', data: expect.any(String), uncompressedBytes: 32 * 1024 });
    expect(decodeText(encodeText(large))).toBe(large);
    expect(encodeText('héllo').uncompressedBytes).toBe(6);
  });

  test('attachments gzip only from 32 KiB and only when it shrinks', () => {
    const random = crypto.getRandomValues(new Uint8Array(40 * 1024));
    expect(encodeAttachment('r.bin', random).payload.encoding).toBe('base64');
    expect(encodeAttachment('z.bin', new Uint8Array(40 * 1024)).payload.encoding).toBe('gzip+base64');
    expect(encodeAttachment('s.bin', new Uint8Array(100)).payload.encoding).toBe('base64');
  });

  test('the shared 4 MiB budget, size mismatch and attachment rules', () => {
    const t = encodeText('see attached');
    const oneMiB = encodeAttachment('a.bin', crypto.getRandomValues(new Uint8Array(MiB)));
    expect(validateContent(t, [oneMiB, { ...oneMiB, name: 'b.bin' }, { ...oneMiB, name: 'c.bin' }])).toEqual({ ok: true, result: 12 + 3 * MiB });
    const codeOf = (p: unknown, a: unknown) => {
      const r = validateContent(p, a);
      return r.ok ? 'ok' : r.error.code;
    };
    expect(codeOf(t, [oneMiB, { ...oneMiB, name: 'b' }, { ...oneMiB, name: 'c' }, { ...oneMiB, name: 'd' }])).toBe('payload_too_large');
    expect(codeOf({ ...t, uncompressedBytes: 11 }, [])).toBe('message_rejected');
    expect(codeOf(t, [oneMiB, oneMiB])).toBe('message_rejected'); // duplicate names
    for (const name of ['.', '..', 'a/b', 'a\\b', 'tab\there', '', 'x'.repeat(256)]) expect(codeOf(t, [{ ...oneMiB, name }])).toBe('message_rejected');
    expect(codeOf(t, [{ ...oneMiB, name: 'report.final.pdf' }])).toBe('ok');
    expect(codeOf(t, [{ name: 'x', payload: { encoding: 'base64', data: 'aGk', uncompressedBytes: 2 } }])).toBe('message_rejected');
    expect(codeOf({ encoding: 'identity', data: 'x'.repeat(40_000), uncompressedBytes: 40_000 }, [])).toBe('message_rejected');
  });
});

describe('message references', () => {
  test('format and parse, splitting on the last colon', () => {
    expect(formatRef('demo', 42)).toBe('demo:42');
    expect(parseRef('demo:42')).toEqual({ project: 'demo', sequence: 42 });
    for (const bad of ['demo:0', 'demo:012', 'demo:', ':4', 'demo', 'demo:1.5', 'demo:99999999999999999', 'de/mo:1', 42]) expect(parseRef(bad)).toBeUndefined();
  });
});

function store(db = new Database(':memory:', { strict: true })) {
  // Commits run when the test calls flush(), so a test can see group behaviour.
  return createMeshStore({ db, log: silentLog, now: () => 1_700_000_000_000, schedule: () => {} });
}
const draft = (project: string, id: string, body: string, extra: Partial<MessageDraft> = {}): MessageDraft => ({
  project,
  from: { name: 'alice', presenceId: 'p-1' },
  messageId: id,
  target: { type: 'project' },
  payload: encodeText(body),
  attachments: [],
  ...extra,
});

describe('store', () => {
  test('per-project sequences without gaps; appends resolve only after their group commits', async () => {
    const s = store();
    s.createProject({ name: 'a' });
    s.createProject({ name: 'b' });
    const results = [s.append(draft('a', 'm1', 'x')), s.append(draft('b', 'm2', 'x')), s.append(draft('a', 'm3', 'x'))];
    let settled = false;
    void Promise.all(results).then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    s.flush();
    expect((await Promise.all(results)).map((r) => r.ok && r.result.message.messageRef)).toEqual(['a:1', 'b:1', 'a:2']);
  });

  test('identical retry answers the original; different content or attachments conflict; retry inside one group waits for it', async () => {
    const s = store();
    s.createProject({ name: 'a' });
    const first = s.append(draft('a', 'm1', 'hello'));
    const sameGroup = s.append(draft('a', 'm1', 'hello', { from: { name: 'alice', presenceId: 'p-other' } }));
    s.flush();
    const r1 = await first;
    const r2 = await sameGroup;
    expect(r2).toEqual({ ok: true, result: { message: r1.ok ? r1.result.message : (null as never), replayed: true } });
    const later = await s.append(draft('a', 'm1', 'hello'));
    expect(later.ok && later.result.replayed).toBe(true);
    const conflict = await s.append(draft('a', 'm1', 'bye'));
    const withFile = await s.append(draft('a', 'm1', 'hello', { attachments: [encodeAttachment('f', new Uint8Array([1]))] }));
    const otherTarget = await s.append(draft('a', 'm1', 'hello', { target: { type: 'agent', name: 'bob' } }));
    expect([conflict, withFile, otherTarget].map((r) => !r.ok && r.error.code)).toEqual(['message_id_conflict', 'message_id_conflict', 'message_id_conflict']);
  });

  test('history: limit clamp, exclusive cursors, from, ascending answers, and the 4 MiB budget', async () => {
    const s = store();
    s.createProject({ name: 'p' });
    const pending = [];
    for (let i = 1; i <= 12; i++) pending.push(s.append(draft('p', `m${i}`, `n${i}`, { from: { name: i % 3 === 0 ? 'bob' : 'alice', presenceId: 'x' } })));
    s.flush();
    await Promise.all(pending);
    const seqs = (q: Record<string, string>) => {
      const p = parseHistoryQuery({ project: 'p', ...q });
      if (!p.ok) return p.error.code + ': ' + p.error.message;
      return s.history(p.result).map((m) => m.sequence);
    };
    expect(seqs({})).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(seqs({ limit: '3' })).toEqual([10, 11, 12]);
    expect(seqs({ limit: '0' })).toEqual([12]);
    expect(seqs({ limit: '9999' }).length).toBe(12);
    expect(seqs({ before: 'p:5', limit: '2' })).toEqual([3, 4]);
    expect(seqs({ after: 'p:5', limit: '2' })).toEqual([6, 7]);
    expect(seqs({ from: 'bob' })).toEqual([3, 6, 9, 12]);
    expect(seqs({ from: 'bob', before: 'p:9' })).toEqual([3, 6]);
    expect(seqs({ before: 'p:5', after: 'p:1' })).toBe('A2A_BAD_REQUEST: before and after cannot be combined');
    expect(seqs({ before: 'q:5' })).toBe('A2A_BAD_REQUEST: before belongs to another project');
    expect(seqs({ limit: 'ten' })).toBe('A2A_BAD_REQUEST: limit must be an integer');
    expect(seqs({ from: 'a/b' })).toBe('A2A_BAD_REQUEST: from is not a valid roster name');

    const big = store();
    big.createProject({ name: 'big' });
    const blob = (i: number) => encodeAttachment(`f${i}`, crypto.getRandomValues(new Uint8Array(1.5 * MiB)));
    const bigs = [1, 2, 3, 4].map((i) => big.append(draft('big', `b${i}`, 'blob', { attachments: [blob(i)] })));
    big.flush();
    await Promise.all(bigs);
    const page = big.history({ project: 'big', limit: 50 });
    // Newest first until the budget is spent, answered oldest first.
    expect(page.map((m) => m.sequence)).toEqual([3, 4]);
    expect(big.history({ project: 'big', after: 1, limit: 50 }).map((m) => m.sequence)).toEqual([2, 3]);
  });

  test('replyTo resolves within the project; project registry; delete restarts sequences', async () => {
    const s = store();
    expect(s.createProject({ name: 'demo', description: 'a test' })).toEqual({ ok: true, result: { name: 'demo', description: 'a test', createdAt: 1_700_000_000_000 } });
    expect(s.createProject({ name: 'demo' })).toEqual({ ok: false, error: { code: 'project-conflict', message: 'project demo already exists' } });
    expect(s.createProject({ name: '-bad' }).ok).toBe(false);
    s.createProject({ name: 'alpha' });
    expect(s.listProjects().map((p) => p.name)).toEqual(['alpha', 'demo']);
    const root = s.append(draft('demo', 'm1', 'root'));
    const reply = s.append(draft('demo', 'm2', 'reply', { replyTo: 'demo:1' }));
    s.flush();
    expect((await root).ok && (await reply).ok).toBe(true);
    expect(s.get('demo:2')?.replyTo).toBe('demo:1');
    const bad = await s.append(draft('demo', 'm3', 'x', { replyTo: 'alpha:1' }));
    expect(!bad.ok && bad.error.code).toBe('unknown_reply');
    expect(s.deleteProject('demo')).toBe(true);
    expect(s.get('demo:1')).toBeUndefined();
    s.createProject({ name: 'demo' });
    const again = s.append(draft('demo', 'm1', 'again'));
    s.flush();
    const r = await again;
    expect(r.ok && r.result.message.messageRef).toBe('demo:1');
  });

  test('a failed group commit refuses its messages and hands their sequences out again', async () => {
    const db = new Database(':memory:', { strict: true });
    const s = store(db);
    s.createProject({ name: 'p' });
    db.exec(`CREATE TRIGGER boom BEFORE INSERT ON messages WHEN NEW.msg_id = 'poison' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`);
    const a = s.append(draft('p', 'ok-1', 'x'));
    const b = s.append(draft('p', 'poison', 'x'));
    s.flush();
    expect([await a, await b].map((r) => !r.ok && r.error.code)).toEqual(['message_rejected', 'message_rejected']);
    const c = s.append(draft('p', 'ok-2', 'x'));
    s.flush();
    const rc = await c;
    expect(rc.ok && rc.result.message.sequence).toBe(1);
  });
});
