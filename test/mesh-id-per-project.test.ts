/**
 * Mesh message ids are unique per project, not across the hub: the same id in another project is
 * another message (a reused id tells nothing about a project its sender cannot see), on both stores;
 * the sender's proven principal is stored with the message and read back; and a database of the
 * storage version before (one table-wide UNIQUE id, no principal column) opens with every row kept.
 */

import { Database } from 'bun:sqlite';
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { SQL } from 'bun';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { silentLog } from '../lib/log.ts';
import { encodeText } from '../lib/mesh/payload.ts';
import { createPostgresMeshStore } from '../lib/mesh/postgres-store.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import type { MeshStore, MessageDraft } from '../lib/mesh/store.ts';
import { tempDir } from './support/node.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const held = { schedule: () => {}, now: () => 1_000, log: silentLog };
const draft = (project: string, id: string, body: string, principal?: string): MessageDraft => ({
  project,
  from: { name: 'alice', presenceId: 'p-1', ...(principal ? { principal } : {}) },
  messageId: id,
  target: { type: 'project' },
  payload: encodeText(body),
  attachments: [],
});
async function commit(s: MeshStore, drafts: MessageDraft[]) {
  const results = drafts.map((d) => s.append(d));
  await s.flush();
  return Promise.all(results);
}
const outcome = (r: Awaited<ReturnType<MeshStore['append']>>) =>
  r.ok ? `${r.result.message.messageRef}${r.result.replayed ? ' replayed' : ''}` : r.error.code;

let pg: FilePostgres;
const clients: SQL[] = [];
const dir = tempDir('lume-mesh-ids-');
let dbSeq = 0;
beforeAll(async () => {
  pg = await sharedPostgres();
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await pg?.release();
  rmSync(dir, { recursive: true, force: true });
});
async function pgClient(): Promise<SQL> {
  const sql = new SQL(await pg.createDatabase(`ids_${++dbSeq}`), { max: 4 });
  clients.push(sql);
  return sql;
}

const KINDS: { name: string; store(): Promise<MeshStore> }[] = [
  {
    name: 'sqlite',
    store: async () =>
      createSqliteMeshStore({ db: new Database(':memory:', { strict: true }), ...held }),
  },
  {
    name: 'postgres',
    store: async () => createPostgresMeshStore({ sql: await pgClient(), ...held }),
  },
];

for (const kind of KINDS)
  describe(`ids per project on ${kind.name}`, () => {
    test('the same id in another project is another message, in one group and after; within a project it still replays or conflicts', async () => {
      const s = await kind.store();
      await s.createProject({ name: 'secret' });
      await s.createProject({ name: 'open' });
      const first = await commit(s, [
        draft('secret', 'm-1', 'classified'),
        draft('open', 'm-1', 'probe'),
      ]);
      expect(first.map(outcome)).toEqual(['secret:1', 'open:1']);
      // Later, with different content: answered as new, never `message_id_conflict` from the other project.
      const later = await commit(s, [draft('open', 'm-2', 'x'), draft('secret', 'm-2', 'y')]);
      expect(later.map(outcome)).toEqual(['open:2', 'secret:2']);
      const again = await commit(s, [draft('open', 'm-1', 'probe'), draft('open', 'm-1', 'other')]);
      expect(again.map(outcome)).toEqual(['open:1 replayed', 'message_id_conflict']);
      expect([await s.count('secret'), await s.count('open')]).toEqual([2, 2]);
    });

    test("the sender's proven principal is stored and read back; none stays none", async () => {
      const s = await kind.store();
      await s.createProject({ name: 'p' });
      await commit(s, [draft('p', 'a', 'x', 'user:alice'), draft('p', 'b', 'y')]);
      const [a, b] = await s.range('p', 0, 2, []);
      expect(a!.from).toEqual({ name: 'alice', presenceId: 'p-1', principal: 'user:alice' });
      expect(b!.from).toEqual({ name: 'alice', presenceId: 'p-1' });
    });
  });

describe('a database of the storage version before', () => {
  test('SQLite version 3 (UNIQUE msg_id, no principal) opens with its rows, ids then per project', async () => {
    const path = join(dir, 'v3.db');
    const old = new Database(path, { create: true });
    old.exec(`
      CREATE TABLE projects (name TEXT PRIMARY KEY, display_name TEXT, description TEXT,
        created_by_cwd TEXT, created_at INTEGER NOT NULL, next_sequence INTEGER NOT NULL DEFAULT 1, epoch TEXT);
      CREATE TABLE messages (project TEXT NOT NULL, sequence INTEGER NOT NULL, msg_id TEXT NOT NULL UNIQUE,
        sender_name TEXT NOT NULL, sender_presence_id TEXT NOT NULL, target_kind TEXT NOT NULL,
        target_name TEXT, target_presence_id TEXT, encoding TEXT NOT NULL, data TEXT NOT NULL,
        uncompressed_bytes INTEGER NOT NULL, attachments TEXT NOT NULL, content_bytes INTEGER NOT NULL,
        created_at INTEGER NOT NULL, reply_to_sequence INTEGER, PRIMARY KEY (project, sequence));
      CREATE INDEX messages_by_sender ON messages (project, sender_name, sequence);
      INSERT INTO projects VALUES ('a', NULL, NULL, NULL, 1, 2, 'e1'), ('b', NULL, NULL, NULL, 1, 1, 'e2');
      INSERT INTO messages VALUES ('a', 1, 'm-1', 'alice', 'p-1', 'project', NULL, NULL, 'identity',
        'old', 3, '[]', 3, 5, NULL);
      PRAGMA user_version = 3;`);
    old.close();
    const s = createSqliteMeshStore({ db: openMeshDatabase(path), ...held });
    const [kept] = await s.range('a', 0, 1, []);
    expect(kept).toMatchObject({ messageId: 'm-1', messageRef: 'a:1', from: { name: 'alice' } });
    const r = await commit(s, [draft('b', 'm-1', 'new'), draft('a', 'm-1', 'other')]);
    expect(r.map(outcome)).toEqual(['b:1', 'message_id_conflict']);
    await s.close();
  });

  test('PostgreSQL version 1 (UNIQUE msg_id, no principal) opens with its rows, ids then per project', async () => {
    const sql = await pgClient();
    await sql
      .unsafe(`
      CREATE TABLE mesh_meta (key text PRIMARY KEY, value text NOT NULL);
      INSERT INTO mesh_meta VALUES ('version', '1');
      CREATE TABLE mesh_projects (name text PRIMARY KEY, display_name text, description text,
        created_by_cwd text, created_at bigint NOT NULL, next_sequence bigint NOT NULL DEFAULT 1, epoch text NOT NULL);
      CREATE TABLE mesh_messages (project text NOT NULL, sequence bigint NOT NULL, msg_id text NOT NULL UNIQUE,
        sender_name text NOT NULL, sender_presence_id text NOT NULL, target_kind text NOT NULL,
        target_name text, target_presence_id text, encoding text NOT NULL, data text NOT NULL,
        uncompressed_bytes integer NOT NULL, attachments text NOT NULL, content_bytes integer NOT NULL,
        created_at bigint NOT NULL, reply_to_sequence bigint, PRIMARY KEY (project, sequence));
      INSERT INTO mesh_projects VALUES ('a', NULL, NULL, NULL, 1, 2, 'e1'), ('b', NULL, NULL, NULL, 1, 1, 'e2');
      INSERT INTO mesh_messages VALUES ('a', 1, 'm-1', 'alice', 'p-1', 'project', NULL, NULL, 'identity',
        'old', 3, '[]', 3, 5, NULL);`)
      .simple();
    const s = await createPostgresMeshStore({ sql, ...held });
    const [kept] = await s.range('a', 0, 1, []);
    expect(kept).toMatchObject({ messageId: 'm-1', messageRef: 'a:1', from: { name: 'alice' } });
    const r = await commit(s, [draft('b', 'm-1', 'new'), draft('a', 'm-1', 'other')]);
    expect(r.map(outcome)).toEqual(['b:1', 'message_id_conflict']);
    const [{ value }] = await sql`SELECT value FROM mesh_meta WHERE key = 'version'`;
    expect(value).toBe('2');
  });
});
