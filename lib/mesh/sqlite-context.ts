/**
 * @module lib/mesh/sqlite-context — what the parts of the SQLite mesh store share (the database,
 * each project's next sequence and epoch held in memory, the basics), made when the store opens.
 */

import type { Database } from 'bun:sqlite';
import type { Log } from '../log.ts';
import type { MeshLimits } from './limits.ts';
import { MESH_SCHEMA, migrateMeshSchema } from './schema.ts';
import { storeBasics, type StoreBasics } from './store.ts';

export interface SqliteStoreContext extends StoreBasics {
  db: Database;
  /** Next sequence per project, authoritative in memory between commits. */
  next: Map<string, number>;
  /** Each project's stream epoch: a new one whenever a project of that name is created again. */
  epochs: Map<string, string>;
}

/** Applies the schema if missing and reads every project's stream head into memory. */
export function openSqliteContext(opts: {
  db: Database;
  log: Log;
  now?: () => number;
  limits?: Partial<MeshLimits>;
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
  return { ...storeBasics(opts), db, next, epochs };
}
