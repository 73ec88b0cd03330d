/**
 * The SQLite mesh store on a file fsyncs its log off the event loop (lib/mesh/sqlite-sync.ts): an
 * append is answered only after an fsync that started after its group's commit returned, and
 * until then no read shows the message, though its row is already in the database. The fsync is
 * held here by hand (the store's `fsync` option), so each step waits on the store, not on time.
 */

import { Database } from 'bun:sqlite';
import { expect, setDefaultTimeout, test } from 'bun:test';
import { fsync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { silentLog } from '../lib/log.ts';
import { encodeText } from '../lib/mesh/payload.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import type { MessageDraft } from '../lib/mesh/store.ts';
import type { FsyncFn } from '../lib/mesh/sqlite-sync.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const draft = (id: string, body: string, to?: string): MessageDraft => ({
  project: 'p',
  from: { name: 'alice', presenceId: 'p-1' },
  messageId: id,
  target: to ? { type: 'agent', name: to, presenceId: `${to}-1` } : { type: 'project' },
  payload: encodeText(body),
  attachments: [],
});

/** An fsync that runs only when released; `requested` resolves when the store asks for one. */
function heldFsync() {
  const held: (() => void)[] = [];
  let asked: (() => void) | undefined;
  const fn: FsyncFn = (fd, cb) => {
    held.push(() => fsync(fd, cb));
    asked?.();
  };
  return {
    fn,
    /** Resolves once an fsync is waiting. */
    requested: () => (held.length > 0 ? Promise.resolve() : new Promise<void>((r) => (asked = r))),
    releaseAll() {
      for (const run of held.splice(0)) run();
    },
    get waiting() {
      return held.length;
    },
  };
}

test('an append is answered after its fsync; until then the row is committed but no read shows it', async () => {
  const dir = tempDir('lume-a2a-mesh-sync-');
  const file = join(dir, 'mesh.sqlite');
  const hold = heldFsync();
  const store = createSqliteMeshStore({
    db: openMeshDatabase(file),
    log: silentLog,
    fsync: hold.fn,
  });
  const created = store.createProject({ name: 'p' });
  await hold.requested();
  hold.releaseAll();
  expect((await created).ok).toBe(true);
  const other = new Database(file, { readonly: true });

  let answered = false;
  const first = store.append(draft('m-1', 'hello', 'bob')).then((r) => {
    answered = true;
    return r;
  });
  await hold.requested();
  // Committed: another connection reads the row. Not yet fsynced: not answered, not shown.
  expect(other.query('SELECT msg_id FROM messages').all()).toEqual([{ msg_id: 'm-1' }]);
  expect(answered).toBe(false);
  expect(await store.get('p:1')).toBeUndefined();
  expect(await store.history({ project: 'p', limit: 50 })).toEqual([]);
  expect(await store.count('p')).toBe(0);
  expect((await store.missed('p', 'bob', 0, 50)).messages).toEqual([]);
  expect(await store.range('p', 0, 1, ['bob-1'])).toEqual([]);

  // A retry while its fsync is pending waits for the same outcome; nothing is stored twice.
  const retry = store.append(draft('m-1', 'hello', 'bob'));
  const position = store.position('p');
  hold.releaseAll();
  const r = await first;
  expect(r.ok && [r.result.message.sequence, r.result.replayed]).toEqual([1, false]);
  const again = await retry;
  expect(again.ok && [again.result.message.sequence, again.result.replayed]).toEqual([1, true]);
  // position waited for the log: everything up to the head it names can be read.
  await hold.requested();
  hold.releaseAll();
  expect(await position).toMatchObject({ sequence: 1 });
  expect((await store.history({ project: 'p', limit: 50 })).map((m) => m.messageId)).toEqual([
    'm-1',
  ]);
  expect(await store.count('p')).toBe(1);
  expect((await store.get('p:1'))?.messageId).toBe('m-1');
  expect(other.query('SELECT count(*) AS n FROM messages').get()).toEqual({ n: 1 });
  other.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('appends made while an fsync runs wait for it, then commit as one group, answered in order', async () => {
  const dir = tempDir('lume-a2a-mesh-sync-');
  const file = join(dir, 'mesh.sqlite');
  const hold = heldFsync();
  const store = createSqliteMeshStore({
    db: openMeshDatabase(file),
    log: silentLog,
    fsync: hold.fn,
  });
  const created = store.createProject({ name: 'p' });
  await hold.requested();
  hold.releaseAll();
  await created;
  const other = new Database(file, { readonly: true });
  const rows = () => other.query('SELECT msg_id FROM messages ORDER BY sequence').all();

  const order: number[] = [];
  const track = (p: ReturnType<typeof store.append>) =>
    p.then((r) => {
      if (r.ok) order.push(r.result.message.sequence);
      return r;
    });
  const a = track(store.append(draft('a', 'one')));
  await hold.requested(); // group 1 committed, its fsync asked for and held
  const b = track(store.append(draft('b', 'two')));
  const c = track(store.append(draft('c', 'three')));
  // The turn ends with b and c still open: no commit while group 1's fsync runs.
  await new Promise<void>((r) => setImmediate(r));
  expect(hold.waiting).toBe(1);
  expect(rows()).toEqual([{ msg_id: 'a' }]);
  hold.releaseAll(); // group 1 answered; b and c commit together and their fsync starts
  await a;
  await hold.requested();
  expect(order).toEqual([1]);
  expect(rows()).toEqual([{ msg_id: 'a' }, { msg_id: 'b' }, { msg_id: 'c' }]);
  hold.releaseAll();
  await Promise.all([b, c]);
  expect(order).toEqual([1, 2, 3]);
  other.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('close answers what waits for the log and a reopened store has every answered message', async () => {
  const dir = tempDir('lume-a2a-mesh-sync-');
  const file = join(dir, 'mesh.sqlite');
  const hold = heldFsync();
  const store = createSqliteMeshStore({
    db: openMeshDatabase(file),
    log: silentLog,
    fsync: hold.fn,
  });
  const created = store.createProject({ name: 'p' });
  await hold.requested();
  hold.releaseAll();
  await created;
  const sent = Array.from({ length: 5 }, (_, i) => store.append(draft(`m-${i}`, `hi ${i}`)));
  await hold.requested();
  await store.close(); // syncs at once; the held fsync is never released
  const results = await Promise.all(sent);
  expect(results.map((r) => r.ok && r.result.message.sequence)).toEqual([1, 2, 3, 4, 5]);

  const reopened = createSqliteMeshStore({ db: openMeshDatabase(file), log: silentLog });
  expect(await reopened.count('p')).toBe(5);
  const retried = await reopened.append(draft('m-3', 'hi 3'));
  expect(retried.ok && [retried.result.message.sequence, retried.result.replayed]).toEqual([
    4,
    true,
  ]);
  expect(await reopened.count('p')).toBe(5);
  await reopened.close();
  rmSync(dir, { recursive: true, force: true });
});
