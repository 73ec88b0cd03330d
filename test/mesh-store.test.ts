/**
 * The mesh's building blocks in process: payload codec, references, and the store and history rules
 * as one case table run against both stores (bun:sqlite and PostgreSQL on a throw-away cluster),
 * plus what only a shared database has: two stores (two hubs) appending to one project.
 */

import { Database } from 'bun:sqlite';
import {
  afterAll,
  afterEach,
  beforeAll,
  describe,
  expect,
  setDefaultTimeout,
  test,
} from 'bun:test';
import { SQL } from 'bun';
import { silentLog } from '../lib/log.ts';
import { parseHistoryQuery } from '../lib/mesh/history.ts';
import { decodeText, encodeAttachment, encodeText, validateContent } from '../lib/mesh/payload.ts';
import { formatRef, parseRef } from '../lib/mesh/ref.ts';
import { createPostgresMeshStore } from '../lib/mesh/postgres-store.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import type { MeshStore, MessageDraft } from '../lib/mesh/store.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const MiB = 1024 * 1024;

describe('payload codec', () => {
  test('text under 32 KiB is identity, from 32 KiB on gzip+base64, and both decode back', () => {
    const small = 'a'.repeat(32 * 1024 - 1);
    const large = 'a'.repeat(32 * 1024);
    expect(encodeText(small).encoding).toBe('identity');
    expect(encodeText(large)).toEqual({
      encoding: 'gzip+base64',
      data: expect.any(String),
      uncompressedBytes: 32 * 1024,
    });
    expect(decodeText(encodeText(large))).toBe(large);
    expect(encodeText('héllo').uncompressedBytes).toBe(6);
  });

  test('attachments gzip only from 32 KiB and only when it shrinks', () => {
    const random = crypto.getRandomValues(new Uint8Array(40 * 1024));
    expect(encodeAttachment('r.bin', random).payload.encoding).toBe('base64');
    expect(encodeAttachment('z.bin', new Uint8Array(40 * 1024)).payload.encoding).toBe(
      'gzip+base64',
    );
    expect(encodeAttachment('s.bin', new Uint8Array(100)).payload.encoding).toBe('base64');
  });

  test('the shared 4 MiB budget, size mismatch and attachment rules', () => {
    const t = encodeText('see attached');
    const oneMiB = encodeAttachment('a.bin', crypto.getRandomValues(new Uint8Array(MiB)));
    expect(
      validateContent(t, [oneMiB, { ...oneMiB, name: 'b.bin' }, { ...oneMiB, name: 'c.bin' }]),
    ).toEqual({ ok: true, result: 12 + 3 * MiB });
    const codeOf = (p: unknown, a: unknown) => {
      const r = validateContent(p, a);
      return r.ok ? 'ok' : r.error.code;
    };
    expect(
      codeOf(t, [
        oneMiB,
        { ...oneMiB, name: 'b' },
        { ...oneMiB, name: 'c' },
        { ...oneMiB, name: 'd' },
      ]),
    ).toBe('payload_too_large');
    expect(codeOf({ ...t, uncompressedBytes: 11 }, [])).toBe('message_rejected');
    expect(codeOf(t, [oneMiB, oneMiB])).toBe('message_rejected'); // duplicate names
    for (const name of ['.', '..', 'a/b', 'a\\b', 'tab\there', '', 'x'.repeat(256)])
      expect(codeOf(t, [{ ...oneMiB, name }])).toBe('message_rejected');
    expect(codeOf(t, [{ ...oneMiB, name: 'report.final.pdf' }])).toBe('ok');
    expect(
      codeOf(t, [
        { name: 'x', payload: { encoding: 'base64', data: 'aGk', uncompressedBytes: 2 } },
      ]),
    ).toBe('message_rejected');
    expect(
      codeOf({ encoding: 'identity', data: 'x'.repeat(40_000), uncompressedBytes: 40_000 }, []),
    ).toBe('message_rejected');
  });

  test('identity text is counted in UTF-8 bytes as the encoder counts it, and must not be blank', () => {
    for (const text of ['héllo', 'a\ud800b', '\ud83d\ude00 ok', 'x'])
      expect(validateContent(encodeText(text), [])).toEqual({
        ok: true,
        result: new TextEncoder().encode(text).length,
      });
    const identity = (data: string, uncompressedBytes: number) =>
      validateContent({ encoding: 'identity', data, uncompressedBytes }, []);
    const codes = (r: ReturnType<typeof validateContent>) => (r.ok ? 'ok' : r.error.code);
    expect(codes(identity('a\ud800b', 3))).toBe('message_rejected'); // the lone surrogate is 3 bytes
    expect(codes(identity(' \n\t ', 4))).toBe('message_rejected'); // blank
    expect(codes(identity('hi', -1))).toBe('message_rejected');
    expect(codes(identity('hi', 1.5))).toBe('message_rejected');
    expect(codes(identity('hi', 5 * MiB))).toBe('payload_too_large');
    expect(
      codes(validateContent({ encoding: 'identity', data: 7, uncompressedBytes: 1 }, [])),
    ).toBe('message_rejected');
    expect(codes(validateContent(null, []))).toBe('message_rejected');
    // Short text sent gzipped is not its canonical form.
    const gz = encodeText('y'.repeat(40_000));
    expect(codes(validateContent(gz, []))).toBe('ok');
    const small = {
      encoding: 'gzip+base64',
      data: Buffer.from(Bun.gzipSync('hi')).toString('base64'),
      uncompressedBytes: 2,
    };
    expect(codes(validateContent(small, []))).toBe('message_rejected');
  });
});

describe('message references', () => {
  test('format and parse, splitting on the last colon', () => {
    expect(formatRef('demo', 42)).toBe('demo:42');
    expect(parseRef('demo:42')).toEqual({ project: 'demo', sequence: 42 });
    for (const bad of [
      'demo:0',
      'demo:012',
      'demo:',
      ':4',
      'demo',
      'demo:1.5',
      'demo:99999999999999999',
      'de/mo:1',
      42,
    ])
      expect(parseRef(bad)).toBeUndefined();
  });
});

const NOW = 1_700_000_000_000;
const draft = (
  project: string,
  id: string,
  body: string,
  extra: Partial<MessageDraft> = {},
): MessageDraft => ({
  project,
  from: { name: 'alice', presenceId: 'p-1' },
  messageId: id,
  target: { type: 'project' },
  payload: encodeText(body),
  attachments: [],
  ...extra,
});

/** One implementation under test: fresh stores whose group commits run when the test calls flush(). */
interface Kind {
  name: 'sqlite' | 'postgres';
  store(): Promise<MeshStore>;
  /** A store whose database refuses the message with id `poison` (a failing disk, a broken constraint). */
  poisoned(): Promise<MeshStore>;
}

let pg: FilePostgres;
const clients: SQL[] = [];
let dbSeq = 0;
// initdb takes a few seconds on a busy machine: longer than a hook's default time.
beforeAll(async () => {
  pg = await sharedPostgres();
}, 60_000);
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await pg?.release();
});
/** A fresh database in the test cluster and a client on it. */
async function freshDatabase(): Promise<SQL> {
  return client(await pg.createDatabase(`store_${++dbSeq}`));
}
function client(url: string): SQL {
  const sql = new SQL(url, { max: 4 });
  clients.push(sql);
  return sql;
}
const held = { schedule: () => {}, now: () => NOW, log: silentLog };

const KINDS: Kind[] = [
  {
    name: 'sqlite',
    store: async () =>
      createSqliteMeshStore({ db: new Database(':memory:', { strict: true }), ...held }),
    async poisoned() {
      const db = new Database(':memory:', { strict: true });
      const s = createSqliteMeshStore({ db, ...held });
      db.exec(
        `CREATE TRIGGER boom BEFORE INSERT ON messages WHEN NEW.msg_id = 'poison' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`,
      );
      return s;
    },
  },
  {
    name: 'postgres',
    store: async () => createPostgresMeshStore({ sql: await freshDatabase(), ...held }),
    async poisoned() {
      const sql = await freshDatabase();
      const s = await createPostgresMeshStore({ sql, ...held });
      await sql
        .unsafe(`
        CREATE FUNCTION boom() RETURNS trigger AS $$ BEGIN
          IF NEW.msg_id = 'poison' THEN RAISE EXCEPTION 'disk on fire'; END IF; RETURN NEW;
        END $$ LANGUAGE plpgsql;
        CREATE TRIGGER boom BEFORE INSERT ON mesh_messages FOR EACH ROW EXECUTE FUNCTION boom();`)
        .simple();
      return s;
    },
  },
];

/** Appends, commits the group, and returns the results in order. */
async function commit(s: MeshStore, drafts: MessageDraft[]) {
  const results = drafts.map((d) => s.append(d));
  await s.flush();
  return Promise.all(results);
}
const refs = (rs: Awaited<ReturnType<MeshStore['append']>>[]) =>
  rs.map((r) => (r.ok ? r.result.message.messageRef : r.error.code));

for (const kind of KINDS)
  describe(`store on ${kind.name}`, () => {
    test('per-project sequences without gaps; appends resolve only after their group commits', async () => {
      const s = await kind.store();
      await s.createProject({ name: 'a' });
      await s.createProject({ name: 'b' });
      const results = [
        s.append(draft('a', 'm1', 'x')),
        s.append(draft('b', 'm2', 'x')),
        s.append(draft('a', 'm3', 'x')),
      ];
      let settled = false;
      void Promise.all(results).then(() => (settled = true));
      await Bun.sleep(0);
      expect(settled).toBe(false);
      await s.flush();
      expect(refs(await Promise.all(results))).toEqual(['a:1', 'b:1', 'a:2']);
      expect(await s.position('a')).toEqual({ epoch: expect.any(String), sequence: 2 });
      expect(await s.count('a')).toBe(2);
    });

    test('identical retry answers the original; different content or attachments conflict; retry inside one group waits for it', async () => {
      const s = await kind.store();
      await s.createProject({ name: 'a' });
      const first = s.append(draft('a', 'm1', 'hello'));
      const sameGroup = s.append(
        draft('a', 'm1', 'hello', { from: { name: 'alice', presenceId: 'p-other' } }),
      );
      await s.flush();
      const r1 = await first;
      const r2 = await sameGroup;
      expect(r2).toEqual({
        ok: true,
        result: { message: r1.ok ? r1.result.message : (null as never), replayed: true },
      });
      const [later] = await commit(s, [draft('a', 'm1', 'hello')]);
      expect(later!.ok && later!.result).toEqual({
        message: r1.ok ? r1.result.message : (null as never),
        replayed: true,
      });
      const [conflict, withFile, otherTarget] = await commit(s, [
        draft('a', 'm1', 'bye'),
        draft('a', 'm1', 'hello', { attachments: [encodeAttachment('f', new Uint8Array([1]))] }),
        draft('a', 'm1', 'hello', { target: { type: 'agent', name: 'bob' } }),
      ]);
      expect([conflict, withFile, otherTarget].map((r) => !r!.ok && r!.error.code)).toEqual([
        'message_id_conflict',
        'message_id_conflict',
        'message_id_conflict',
      ]);
      expect(await s.count('a')).toBe(1);
    });

    test('history: limit clamp, exclusive cursors, from, ascending answers, and the 4 MiB budget', async () => {
      const s = await kind.store();
      await s.createProject({ name: 'p' });
      const drafts = [];
      for (let i = 1; i <= 12; i++)
        drafts.push(
          draft('p', `m${i}`, `n${i}`, {
            from: { name: i % 3 === 0 ? 'bob' : 'alice', presenceId: 'x' },
          }),
        );
      await commit(s, drafts);
      const seqs = async (q: Record<string, string>) => {
        const p = parseHistoryQuery({ project: 'p', ...q });
        if (!p.ok) return `${p.error.code}: ${p.error.message}`;
        return (await s.history(p.result)).map((m) => m.sequence);
      };
      expect(await seqs({})).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
      expect(await seqs({ limit: '3' })).toEqual([10, 11, 12]);
      expect(await seqs({ limit: '0' })).toEqual([12]);
      expect(((await seqs({ limit: '9999' })) as number[]).length).toBe(12);
      expect(await seqs({ before: 'p:5', limit: '2' })).toEqual([3, 4]);
      expect(await seqs({ after: 'p:5', limit: '2' })).toEqual([6, 7]);
      expect(await seqs({ from: 'bob' })).toEqual([3, 6, 9, 12]);
      expect(await seqs({ from: 'bob', before: 'p:9' })).toEqual([3, 6]);
      expect(await seqs({ before: 'p:5', after: 'p:1' })).toBe(
        'A2A_BAD_REQUEST: before and after cannot be combined',
      );
      expect(await seqs({ before: 'q:5' })).toBe(
        'A2A_BAD_REQUEST: before belongs to another project',
      );
      expect(await seqs({ limit: 'ten' })).toBe('A2A_BAD_REQUEST: limit must be an integer');
      expect(await seqs({ from: 'a/b' })).toBe('A2A_BAD_REQUEST: from is not a valid roster name');

      await s.createProject({ name: 'big' });
      const blob = (i: number) =>
        encodeAttachment(`f${i}`, crypto.getRandomValues(new Uint8Array(1.5 * MiB)));
      await commit(
        s,
        [1, 2, 3, 4].map((i) => draft('big', `b${i}`, 'blob', { attachments: [blob(i)] })),
      );
      // Newest first until the budget is spent, answered oldest first.
      expect((await s.history({ project: 'big', limit: 50 })).map((m) => m.sequence)).toEqual([
        3, 4,
      ]);
      expect(
        (await s.history({ project: 'big', after: 1, limit: 50 })).map((m) => m.sequence),
      ).toEqual([2, 3]);
      // A message reads back exactly as it was accepted.
      const [stored] = await s.history({ project: 'big', before: 2, limit: 1 });
      expect(stored).toEqual(await s.get('big:1'));
      expect(stored!.attachments[0]!.payload.uncompressedBytes).toBe(1.5 * MiB);
    });

    test('replyTo resolves within the project; project registry; delete restarts sequences under a new epoch', async () => {
      const s = await kind.store();
      expect(await s.createProject({ name: 'demo', description: 'a test' })).toEqual({
        ok: true,
        result: { name: 'demo', description: 'a test', createdAt: NOW },
      });
      expect(await s.createProject({ name: 'demo' })).toEqual({
        ok: false,
        error: { code: 'project-conflict', message: 'project demo already exists' },
      });
      expect((await s.createProject({ name: '-bad' })).ok).toBe(false);
      await s.createProject({ name: 'alpha' });
      expect((await s.listProjects()).map((p) => p.name)).toEqual(['alpha', 'demo']);
      expect(await s.hasProject('alpha')).toBe(true);
      expect(await s.getProject('demo')).toEqual({
        name: 'demo',
        description: 'a test',
        createdAt: NOW,
      });
      const epoch = (await s.position('demo'))!.epoch;
      expect(
        refs(
          await commit(s, [
            draft('demo', 'm1', 'root'),
            draft('demo', 'm2', 'reply', { replyTo: 'demo:1' }),
          ]),
        ),
      ).toEqual(['demo:1', 'demo:2']);
      expect((await s.get('demo:2'))?.replyTo).toBe('demo:1');
      expect(
        refs(
          await commit(s, [
            draft('demo', 'm3', 'x', { replyTo: 'alpha:1' }),
            draft('demo', 'm4', 'x', { replyTo: 'demo:9' }),
          ]),
        ),
      ).toEqual(['unknown_reply', 'unknown_reply']);
      expect(await s.deleteProject('demo')).toBe(true);
      expect(await s.deleteProject('demo')).toBe(false);
      expect(await s.get('demo:1')).toBeUndefined();
      expect(refs(await commit(s, [draft('demo', 'm9', 'gone')]))).toEqual(['unknown_project']);
      await s.createProject({ name: 'demo' });
      expect(refs(await commit(s, [draft('demo', 'm1-again', 'again')]))).toEqual(['demo:1']);
      expect((await s.position('demo'))!.epoch).not.toBe(epoch);
    });

    test('a failed group commit refuses its messages and hands their sequences out again', async () => {
      const s = await kind.poisoned();
      await s.createProject({ name: 'p' });
      expect(refs(await commit(s, [draft('p', 'ok-1', 'x'), draft('p', 'poison', 'x')]))).toEqual([
        'message_rejected',
        'message_rejected',
      ]);
      expect(refs(await commit(s, [draft('p', 'ok-2', 'x')]))).toEqual(['p:1']);
    });

    test('missed: what a name missed after a sequence; range: what a hub delivers to its presences', async () => {
      const s = await kind.store();
      await s.createProject({ name: 'p' });
      const from = (name: string) => ({ name, presenceId: `id-${name}` });
      const to = (name: string) => ({ type: 'agent' as const, name, presenceId: `id-${name}` });
      await commit(s, [
        draft('p', 'm1', 'all', { from: from('alice') }),
        draft('p', 'm2', 'to bob', { from: from('alice'), target: to('bob') }),
        draft('p', 'm3', 'to carol', { from: from('alice'), target: to('carol') }),
        draft('p', 'm4', 'all from bob', { from: from('bob') }),
        draft('p', 'm5', 'to bob again', { from: from('carol'), target: to('bob') }),
      ]);
      const ids = (ms: { messageId: string }[]) => ms.map((m) => m.messageId);
      const missed = await s.missed('p', 'bob', 1, 10);
      expect([ids(missed.messages), missed.complete]).toEqual([['m2', 'm5'], true]);
      const newest = await s.missed('p', 'bob', 0, 2);
      expect([ids(newest.messages), newest.complete]).toEqual([['m2', 'm5'], false]);
      expect(ids(await s.range('p', 0, 5, ['id-bob']))).toEqual(['m1', 'm2', 'm4', 'm5']);
      expect(ids(await s.range('p', 1, 4, ['id-carol', 'id-dave']))).toEqual(['m3', 'm4']);
      expect(ids(await s.range('p', 0, 5, []))).toEqual(['m1', 'm4']);
    });
  });

describe('two stores on one PostgreSQL database (two hubs)', () => {
  test('appends from both interleave into one gap-free sequence; a messageId is idempotent across them', async () => {
    const url = await pg.createDatabase(`store_${++dbSeq}`);
    const [sql, other] = [client(url), client(url)];
    const a = await createPostgresMeshStore({ sql, log: silentLog, origin: 'hub-a' });
    const b = await createPostgresMeshStore({ sql: other, log: silentLog, origin: 'hub-b' });
    await a.createProject({ name: 'p' });
    expect(await b.createProject({ name: 'p' })).toEqual({
      ok: false,
      error: { code: 'project-conflict', message: 'project p already exists' },
    });
    const sends = [];
    for (let i = 0; i < 300; i++) sends.push((i % 2 ? a : b).append(draft('p', `m${i}`, `n${i}`)));
    const results = await Promise.all(sends);
    expect(results.every((r) => r.ok && !r.result.replayed)).toBe(true);
    const seqs = results.map((r) => (r.ok ? r.result.message.sequence : 0)).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    // The same id through the other hub: the stored original, or a conflict when the content differs.
    const original = results[1]!.ok ? results[1]!.result.message : (null as never);
    expect(await b.append(draft('p', 'm1', 'n1'))).toEqual({
      ok: true,
      result: { message: original, replayed: true },
    });
    expect(await b.append(draft('p', 'm1', 'changed'))).toMatchObject({
      ok: false,
      error: { code: 'message_id_conflict' },
    });
    // One id sent to both at once is stored once.
    const [x, y] = await Promise.all([
      a.append(draft('p', 'twice', 'same')),
      b.append(draft('p', 'twice', 'same')),
    ]);
    expect([x, y].map((r) => r.ok && r.result.replayed).sort()).toEqual([false, true]);
    expect(await a.count('p')).toBe(301);
    expect((await b.position('p'))!.sequence).toBe(301);
  });
});
