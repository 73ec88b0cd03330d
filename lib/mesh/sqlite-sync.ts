/**
 * @module lib/mesh/sqlite-sync — the fsync of the SQLite mesh store's write-ahead log, off the
 * event loop: the connection runs with `synchronous = NORMAL` (a commit writes its frames to the
 * WAL without waiting for the disk) and this makes them durable with `fsync` on Bun's thread pool,
 * so the hub keeps reading and writing frames meanwhile. Nothing a commit wrote is acknowledged
 * before an fsync that started after it returned: durability stays that of `synchronous = FULL`.
 */

import type { Database } from 'bun:sqlite';
import { closeSync, fsync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

type Done = (error?: unknown) => void;

/** How the log's descriptor is fsynced, asynchronously (`node:fs` `fsync`; tests hold it). */
export type FsyncFn = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;

export interface WalSync {
  /** Calls `done` once every commit made so far is on disk (or with the fsync's error). */
  after(done: Done): void;
  /** The same as a promise. */
  settled(): Promise<void>;
  /** Whether an fsync is running. */
  readonly busy: boolean;
  /** Syncs what is waiting at once (the database is closing), then closes the log's descriptor. */
  close(): void;
}

/**
 * The WAL's syncer for a file database in WAL mode; undefined for an in-memory one, another
 * journal mode or a log it cannot open, whose commits stay as durable as the connection's
 * `synchronous` makes them (`FULL` from lib/mesh/schema.ts).
 */
export function createWalSync(db: Database, fsyncLog: FsyncFn = fsync): WalSync | undefined {
  const file = db.filename;
  if (!file || file === ':memory:' || file.startsWith('file:')) return undefined;
  const mode = (db.query('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode;
  if (mode !== 'wal') return undefined;
  // The log exists once the connection has read the database; its directory entry is made durable once.
  db.query('SELECT 1 FROM sqlite_master LIMIT 1').get();
  const wal = `${file}-wal`;
  // SQLite keeps this file (same inode) while the database is open: it deletes the log only when
  // its last connection closes, and a checkpoint rewinds or truncates it in place.
  let fd: number;
  try {
    fd = openSync(wal, 'r');
    syncDirectory(dirname(wal));
  } catch {
    return undefined; // the connection keeps syncing inside each commit
  }
  // Set only now: had anything above failed, the connection would still sync every commit itself.
  db.exec('PRAGMA synchronous = NORMAL');
  let waiting: Done[] = [];
  /** The callers of the fsync in flight. */
  let inFlight: Done[] = [];
  let running = false;
  let closed = false;

  const start = (): void => {
    const batch = waiting;
    waiting = [];
    inFlight = batch;
    running = true;
    fsyncLog(fd, (error) => {
      running = false;
      inFlight = [];
      if (closed) {
        closeSync(fd);
        return;
      }
      for (const done of batch) done(error ?? undefined);
      if (waiting.length > 0 && !running) start();
    });
  };

  return {
    get busy() {
      return running;
    },
    after(done) {
      if (closed) return done(new Error('mesh store: closed'));
      waiting.push(done);
      if (!running) start();
    },
    settled() {
      return new Promise((resolve, reject) => this.after((e) => (e ? reject(e) : resolve())));
    },
    close() {
      if (closed) return;
      closed = true;
      const batch = [...inFlight, ...waiting];
      waiting = [];
      inFlight = [];
      let error: unknown;
      try {
        fsyncSync(fd);
      } catch (e) {
        error = e;
      }
      // A sync in flight closes the descriptor when it returns (its callers were answered here).
      if (!running) closeSync(fd);
      for (const done of batch) done(error);
    },
  };
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
