/**
 * @module lib/mesh/postgres-store — the mesh store on PostgreSQL, for several hubs on one database.
 * This file wires its parts: appends and the group commit (lib/mesh/postgres-appends.ts, one
 * transaction per group in postgres-insert.ts), the project registry (postgres-projects.ts) and
 * the reads (postgres-reads.ts), on the tables of postgres-schema.ts.
 */

import type { SQL } from 'bun';
import type { Log } from '../log.ts';
import type { MeshLimits } from './limits.ts';
import { createPostgresAppends } from './postgres-appends.ts';
import { StoreHealth, type PostgresStoreContext } from './postgres-context.ts';
import { postgresProjects } from './postgres-projects.ts';
import { postgresReads } from './postgres-reads.ts';
import { applyMeshSchema } from './postgres-schema.ts';
import { storeBasics, type MeshStore } from './store.ts';

export interface PostgresMeshStoreOptions {
  /** A Bun.sql client; the caller owns it (and closes it after the store). */
  sql: SQL;
  log: Log;
  now?: () => number;
  limits?: Partial<MeshLimits>;
  /** This hub's id, carried by its commit announcements so it can tell them from other hubs'. */
  origin?: string;
  /** Starts a group commit when none is running; defaults to `setImmediate`. */
  schedule?: (fn: () => void) => void;
  /** At most this many messages, and about this many bytes, per transaction. */
  maxBatch?: number;
  maxBatchBytes?: number;
}

/** Applies the schema if missing and returns the store. */
export async function createPostgresMeshStore(opts: PostgresMeshStoreOptions): Promise<MeshStore> {
  const { sql } = opts;
  const ctx: PostgresStoreContext = {
    ...storeBasics(opts),
    sql,
    origin: opts.origin ?? '',
    health: new StoreHealth(),
  };
  await applyMeshSchema(sql);
  const { append, flush, close } = createPostgresAppends(ctx, {
    schedule: opts.schedule ?? ((fn) => void setImmediate(fn)),
    maxBatch: opts.maxBatch ?? 4096,
    maxBatchBytes: opts.maxBatchBytes ?? 16 * 1024 * 1024,
  });
  return {
    kind: 'postgres',
    limits: ctx.limits,
    ...postgresProjects(ctx, flush),
    append,
    ...postgresReads(ctx),

    async position(project) {
      await flush();
      const [r] = await sql`SELECT next_sequence, epoch FROM mesh_projects WHERE name = ${project}`;
      if (!r) return undefined;
      const sequence = Number(r.next_sequence) - 1;
      return { epoch: r.epoch as string, sequence };
    },

    ready: () => ctx.health.report(() => sql`SELECT 1`),
    flush,
    close,
  };
}
