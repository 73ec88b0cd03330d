/**
 * @module lib/mesh/sqlite-store — the mesh store on bun:sqlite (one hub, the embedded default). This
 * file wires its parts: the shared context (lib/mesh/sqlite-context.ts), appends and the group
 * commit (sqlite-appends.ts), the project registry (sqlite-projects.ts) and the reads
 * (sqlite-reads.ts).
 */

import type { Database } from 'bun:sqlite';
import type { Log } from '../log.ts';
import type { MeshLimits } from './limits.ts';
import { createSqliteAppends } from './sqlite-appends.ts';
import { openSqliteContext } from './sqlite-context.ts';
import { sqliteProjects } from './sqlite-projects.ts';
import { sqliteReads } from './sqlite-reads.ts';
import type { FsyncFn } from './sqlite-sync.ts';
import type { MeshStore } from './store.ts';

export interface SqliteMeshStoreOptions {
  db: Database;
  now?: () => number;
  log: Log;
  limits?: Partial<MeshLimits>;
  /** Runs a group commit later; defaults to `setImmediate` (after the current turn's frames). */
  schedule?: (fn: () => void) => void;
  /** A group this large commits at once. */
  maxBatch?: number;
  /** How a file database's log is fsynced after a group commit (`node:fs` `fsync`; tests hold it). */
  fsync?: FsyncFn;
}

/** Creates the store on an open database (the schema is applied if missing). */
export function createSqliteMeshStore(opts: SqliteMeshStoreOptions): MeshStore {
  const ctx = openSqliteContext(opts);
  const { db, next, epochs, sync } = ctx;
  /** Commits the open group and waits for the log's fsync (a failed one was logged and refused its group). */
  const settle = async () => {
    flush();
    await sync?.settled().catch(() => {});
  };
  const { append, flush } = createSqliteAppends(ctx, {
    schedule: opts.schedule ?? ((fn) => void setImmediate(fn)),
    maxBatch: opts.maxBatch ?? 2048,
  });
  return {
    kind: 'sqlite',
    limits: ctx.limits,
    ...sqliteProjects(ctx, flush),
    append,
    ...sqliteReads(ctx),

    async position(project) {
      if (!next.has(project)) return undefined;
      await settle();
      const n = next.get(project);
      if (n === undefined) return undefined;
      return { epoch: epochs.get(project)!, sequence: ctx.durable?.get(project) ?? n - 1 };
    },

    ready() {
      db.query('SELECT 1').get();
      return true;
    },

    flush: settle,

    async close() {
      flush(true);
      sync?.close();
      db.close();
    },
  };
}
