/**
 * @module lib/a2a/store/retry-book — the `messageId`s of the SendMessages that started tasks, per
 * caller, so that a retry of one (the same caller, the same messageId, within the window) answers
 * the task the first made instead of running another turn (A2A v1.1 epic #1987). The interface,
 * and the embedded stores' book: `<dataDir>/<node>/sent-messages.sqlite` (bun:sqlite, WAL), which
 * survives a crash of the process. PostgreSQL's, shared by a node's processes, is
 * lib/a2a/store/postgres/retry-book.ts. Bounded by age (the window) and count, oldest first.
 */

import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MaybePromise } from './task-store.ts';

/** What a send that started a task left behind: the task, and the hash of its message. */
export interface SentEntry {
  taskId: string;
  /** `messageHash` of the message as the caller sent it. */
  hash: string;
  /** When it was sent (ms since the epoch). */
  at: number;
}

export interface RetryBookBounds {
  /** How long an entry answers retries (ms); older ones are ignored and deleted. */
  windowMs: number;
  /** Entries kept at most; past it the oldest are deleted. */
  max: number;
  now?: () => number;
}

/** Where sent messages are remembered. */
export interface RetryBook {
  /** The entry of `creator`'s `messageId` within the window, or undefined. */
  find(creator: string, messageId: string): MaybePromise<SentEntry | undefined>;
  /** Records (or takes over) the entry; resolves once it is durable. */
  put(creator: string, messageId: string, entry: SentEntry): MaybePromise<void>;
  close(): MaybePromise<void>;
}

/** Puts between two count checks. */
const PRUNE_EVERY = 1_000;

export class SqliteRetryBook implements RetryBook {
  private readonly db: Database;
  private readonly now: () => number;
  private puts = 0;
  /** Entries put in this event-loop turn, committed together at its end. */
  private readonly batch: {
    creator: string;
    messageId: string;
    e: SentEntry;
    resolve(): void;
    reject(e: Error): void;
  }[] = [];

  constructor(
    file: string,
    private readonly bounds: RetryBookBounds,
  ) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file, { create: true, strict: true });
    this.db.run('PRAGMA journal_mode = WAL');
    this.db.run('PRAGMA synchronous = NORMAL');
    this.db.run(`CREATE TABLE IF NOT EXISTS sent (
      creator TEXT NOT NULL, message_id TEXT NOT NULL, hash TEXT NOT NULL, task_id TEXT NOT NULL,
      at INTEGER NOT NULL, PRIMARY KEY (creator, message_id)) WITHOUT ROWID`);
    this.db.run('CREATE INDEX IF NOT EXISTS sent_by_time ON sent (at)');
    this.now = bounds.now ?? Date.now;
    this.prune();
  }

  find(creator: string, messageId: string): SentEntry | undefined {
    const row = this.db
      .query<{ task_id: string; hash: string; at: number }, [string, string, number]>(
        'SELECT task_id, hash, at FROM sent WHERE creator = ? AND message_id = ? AND at > ?',
      )
      .get(creator, messageId, this.now() - this.bounds.windowMs);
    return row ? { taskId: row.task_id, hash: row.hash, at: row.at } : undefined;
  }

  /**
   * Resolves once the entry is committed. The entries put in one event-loop turn commit together
   * in one transaction at its end (a group commit: one write however many sends arrived).
   */
  put(creator: string, messageId: string, e: SentEntry): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.batch.push({ creator, messageId, e, resolve, reject });
      if (this.batch.length === 1) setImmediate(() => this.commit());
    });
  }

  close(): void {
    this.commit();
    this.db.close();
  }

  private commit(): void {
    const batch = this.batch.splice(0);
    if (!batch.length) return;
    const insert = this.db.query(
      'INSERT INTO sent (creator, message_id, hash, task_id, at) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (creator, message_id) DO UPDATE SET hash = excluded.hash, task_id = excluded.task_id, at = excluded.at',
    );
    try {
      this.db.transaction(() => {
        for (const { creator, messageId, e } of batch)
          insert.run(creator, messageId, e.hash, e.taskId, e.at);
      })();
    } catch (err) {
      for (const b of batch) b.reject(err as Error);
      return;
    }
    for (const b of batch) b.resolve();
    this.puts += batch.length;
    if (this.puts >= PRUNE_EVERY) (this.puts = 0), this.prune();
  }

  /** Deletes the entries past the window, then the oldest past the count. */
  private prune(): void {
    this.db.query('DELETE FROM sent WHERE at <= ?').run(this.now() - this.bounds.windowMs);
    this.db
      .query(
        'DELETE FROM sent WHERE (creator, message_id) IN (SELECT creator, message_id FROM sent ORDER BY at DESC LIMIT -1 OFFSET ?)',
      )
      .run(this.bounds.max);
  }
}

/** Keys in the order they are written, so a message hashes the same however it was parsed. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/**
 * The SHA-256 of a message as the caller sent it, keys sorted, without the members the server
 * fills in (`taskId`, `contextId`): the same message hashes the same on every process and after
 * a restart.
 */
export function messageHash(message: object): string {
  const { taskId: _t, contextId: _c, ...rest } = message as Record<string, unknown>;
  return new Bun.CryptoHasher('sha256').update(JSON.stringify(canonical(rest))).digest('base64');
}
