/** @module lib/mesh/schema — the mesh store's SQLite schema (storage version 4) and how a database is opened. */

import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const STORE_VERSION = 4;

export const MESH_SCHEMA = `
CREATE TABLE IF NOT EXISTS projects (
  name TEXT PRIMARY KEY,
  display_name TEXT,
  description TEXT,
  created_by_cwd TEXT,
  created_at INTEGER NOT NULL,
  next_sequence INTEGER NOT NULL DEFAULT 1,
  epoch TEXT
);
CREATE TABLE IF NOT EXISTS messages (
  project TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  msg_id TEXT NOT NULL,
  sender_name TEXT NOT NULL,
  sender_presence_id TEXT NOT NULL,
  target_kind TEXT NOT NULL,
  target_name TEXT,
  target_presence_id TEXT,
  encoding TEXT NOT NULL,
  data TEXT NOT NULL,
  uncompressed_bytes INTEGER NOT NULL,
  attachments TEXT NOT NULL,
  content_bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  reply_to_sequence INTEGER,
  sender_principal TEXT,
  PRIMARY KEY (project, sequence)
);
CREATE INDEX IF NOT EXISTS messages_by_sender ON messages (project, sender_name, sequence);
`;

/** Message ids are the sender's, unique within their project (storage version 4). */
const ID_INDEX = 'CREATE UNIQUE INDEX IF NOT EXISTS messages_by_id ON messages (project, msg_id)';

/**
 * Version 3 kept one table-wide `UNIQUE (msg_id)`, which SQLite cannot drop: the table is copied
 * into one without it (every row kept), and the sender's principal column is added empty.
 */
const TO_VERSION_4 = `
ALTER TABLE messages RENAME TO messages_v3;
${messagesTable()}
INSERT INTO messages (project, sequence, msg_id, sender_name, sender_presence_id, target_kind,
  target_name, target_presence_id, encoding, data, uncompressed_bytes, attachments, content_bytes,
  created_at, reply_to_sequence)
SELECT project, sequence, msg_id, sender_name, sender_presence_id, target_kind, target_name,
  target_presence_id, encoding, data, uncompressed_bytes, attachments, content_bytes, created_at,
  reply_to_sequence FROM messages_v3;
DROP TABLE messages_v3;
`;

/** The `CREATE TABLE messages` statement of the current schema. */
function messagesTable(): string {
  const start = MESH_SCHEMA.indexOf('CREATE TABLE IF NOT EXISTS messages');
  return MESH_SCHEMA.slice(start, MESH_SCHEMA.indexOf(');', start) + 2);
}

/**
 * Brings an older database up to the current tables: `projects.epoch` names a project's message
 * stream, so a client that recovers by sequence can tell a recreated project from the one it saw.
 */
export function migrateMeshSchema(db: Database): void {
  const messageColumns = db.query('PRAGMA table_info(messages)').all() as { name: string }[];
  if (!messageColumns.some((c) => c.name === 'sender_principal')) {
    db.transaction(() => db.exec(TO_VERSION_4))();
    db.exec(MESH_SCHEMA);
  }
  db.exec(ID_INDEX);
  const columns = db.query('PRAGMA table_info(projects)').all() as { name: string }[];
  if (!columns.some((c) => c.name === 'epoch'))
    db.exec('ALTER TABLE projects ADD COLUMN epoch TEXT');
  // Projects made before epochs existed get a stable one derived from their creation time.
  db.exec("UPDATE projects SET epoch = 'c' || created_at WHERE epoch IS NULL");
}

/**
 * Opens (creating if needed) the mesh database file in WAL mode with `synchronous = FULL`, so a
 * committed message survives a power cut; the store then moves that fsync off the event loop
 * (lib/mesh/sqlite-sync.ts). `:memory:` opens an in-memory store (tests, benchmarks).
 * @throws Error when the file cannot be opened or has a newer storage version.
 */
export function openMeshDatabase(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec('PRAGMA busy_timeout = 5000');
  const version = (db.query('PRAGMA user_version').get() as { user_version: number }).user_version;
  if (version > STORE_VERSION)
    throw new Error(
      `mesh store: ${path} has storage version ${version}, newer than ${STORE_VERSION}`,
    );
  db.exec(MESH_SCHEMA);
  migrateMeshSchema(db);
  db.exec(`PRAGMA user_version = ${STORE_VERSION}`);
  return db;
}
