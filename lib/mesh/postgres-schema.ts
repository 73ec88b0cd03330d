/**
 * @module lib/mesh/postgres-schema — the mesh's tables on PostgreSQL (storage version 2): projects with
 * their sequence counter and epoch, messages, and the cluster's hubs and presences (leases). Every
 * name starts with `mesh_`, so the mesh can share a database with other stores.
 */

import type { SQL } from 'bun';

const STORE_VERSION = 2;

/** The channel every hub listens on: commits (project and last sequence), presence changes, delivery outcomes. */
export const MESH_CHANNEL = 'lume_mesh';

const DDL = `
CREATE TABLE IF NOT EXISTS mesh_meta (
  key text PRIMARY KEY,
  value text NOT NULL
);
CREATE TABLE IF NOT EXISTS mesh_projects (
  name text PRIMARY KEY,
  display_name text,
  description text,
  created_by_cwd text,
  created_at bigint NOT NULL,
  next_sequence bigint NOT NULL DEFAULT 1,
  epoch text NOT NULL
);
CREATE TABLE IF NOT EXISTS mesh_messages (
  project text NOT NULL,
  sequence bigint NOT NULL,
  msg_id text NOT NULL,
  sender_name text NOT NULL,
  sender_presence_id text NOT NULL,
  target_kind text NOT NULL,
  target_name text,
  target_presence_id text,
  encoding text NOT NULL,
  data text NOT NULL,
  uncompressed_bytes integer NOT NULL,
  attachments text NOT NULL,
  content_bytes integer NOT NULL,
  created_at bigint NOT NULL,
  reply_to_sequence bigint,
  sender_principal text,
  PRIMARY KEY (project, sequence)
);
CREATE INDEX IF NOT EXISTS mesh_messages_by_sender ON mesh_messages (project, sender_name, sequence);
-- Version 2: ids unique per project (version 1 had one table-wide UNIQUE (msg_id)), and the
-- sender's proven principal; rows of version 1 keep their data, with no principal.
ALTER TABLE mesh_messages ADD COLUMN IF NOT EXISTS sender_principal text;
CREATE UNIQUE INDEX IF NOT EXISTS mesh_messages_by_id ON mesh_messages (project, msg_id);
ALTER TABLE mesh_messages DROP CONSTRAINT IF EXISTS mesh_messages_msg_id_key;
CREATE TABLE IF NOT EXISTS mesh_hubs (
  hub_id text PRIMARY KEY,
  url text,
  started_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS mesh_presences (
  project text NOT NULL,
  name text NOT NULL,
  presence_id text NOT NULL UNIQUE,
  hub_id text NOT NULL,
  joined_at bigint NOT NULL,
  resume_hash bytea NOT NULL,
  PRIMARY KEY (project, name)
);
CREATE INDEX IF NOT EXISTS mesh_presences_by_hub ON mesh_presences (hub_id);
`;

/**
 * Creates the tables when missing. Hubs starting together take an advisory lock first, since two
 * concurrent `CREATE TABLE IF NOT EXISTS` of one table can still collide.
 * @throws Error when the database holds a newer storage version.
 */
export async function applyMeshSchema(sql: SQL): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('lume_mesh_schema'))`;
    await tx.unsafe(DDL).simple();
    const [row] = await tx`SELECT value FROM mesh_meta WHERE key = 'version'`;
    const version = row ? Number(row.value) : 0;
    if (version > STORE_VERSION)
      throw new Error(
        `mesh store: the database has storage version ${version}, newer than ${STORE_VERSION}`,
      );
    if (version < STORE_VERSION)
      await tx`INSERT INTO mesh_meta (key, value) VALUES ('version', ${String(STORE_VERSION)}) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;
  });
}
