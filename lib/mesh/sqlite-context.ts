/**
 * @module lib/mesh/sqlite-context — what the parts of the SQLite mesh store share (the database,
 * each project's next sequence, epoch and last sequence on disk held in memory, the log's fsync,
 * the basics), made when the store opens.
 */

import type { Database } from 'bun:sqlite';
import type { Log } from '../log.ts';
import type { MeshLimits } from './limits.ts';
import { MESH_SCHEMA, migrateMeshSchema } from './schema.ts';
import { createWalSync, type FsyncFn, type WalSync } from './sqlite-sync.ts';
import { storeBasics, type StoreBasics } from './store.ts';

export interface SqliteStoreContext extends StoreBasics {
  db: Database;
  /** Next sequence per project, authoritative in memory between commits. */
  next: Map<string, number>;
  /** Each project's stream epoch: a new one whenever a project of that name is created again. */
  epochs: Map<string, string>;
  /** The fsync of a file database's log, off the event loop (undefined in memory). */
  sync?: WalSync;
  /**
   * With `sync`: each project's last sequence known to be on disk. A commit is readable in the
   * database before its fsync returns; reads stop here, so nobody sees a message a power cut could take.
   */
  durable?: Map<string, number>;
  /** The last sequence reads may show in a project. */
  visible(project: string): number;
}

/** Applies the schema if missing and reads every project's stream head into memory. */
export function openSqliteContext(opts: {
  db: Database;
  log: Log;
  now?: () => number;
  limits?: Partial<MeshLimits>;
  fsync?: FsyncFn;
}): SqliteStoreContext {
  const { db } = opts;
  db.exec(MESH_SCHEMA);
  migrateMeshSchema(db);
  const next = new Map<string, number>();
  const epochs = new Map<string, string>();
  for (const r of db.query('SELECT name, next_sequence, epoch FROM projects').all() as {
    name: string;
    next_sequence: number;
    epoch: string;
  }[]) {
    next.set(r.name, r.next_sequence);
    epochs.set(r.name, r.epoch);
  }
  const sync = createWalSync(db, opts.fsync);
  const durable = sync ? new Map([...next].map(([p, n]) => [p, n - 1])) : undefined;
  const visible = (project: string) => durable?.get(project) ?? Number.MAX_SAFE_INTEGER;
  return { ...storeBasics(opts), db, next, epochs, sync, durable, visible };
}
