/**
 * @module lib/a2a/store/task-index — the JSON-file task store's index, `<dir>/index.sqlite` (bun:sqlite,
 * WAL): one row per task file with what listing, counting, recovery and retention need (creator,
 * context, state, status time), so that start-up and a first `ListTasks` page cost the same with a
 * million tasks as with none. The files stay the truth: before a file is written its row is
 * updated and its id entered in `writing` (committed), and the id leaves `writing` after, so a
 * crash leaves only those ids to check against their files at the next start. Writes are grouped
 * into one transaction per event-loop turn; an id leaves `writing` with the next one.
 */

import { Database } from 'bun:sqlite';
import type { TaskState } from '../types.ts';

/** What the index keeps of a task. */
export interface IndexMeta {
  creator: string;
  contextId: string;
  state: TaskState;
  /** Status timestamp in ms, the ListTasks sort key. */
  ts: number;
}

/** The filters of one listing (the store has checked them). */
export interface IndexQuery {
  creator: string | null;
  contextId?: string;
  state?: TaskState;
  since?: number;
  /** The cursor: rows strictly after this (ts, id) in newest-first order. */
  after?: [number, string];
  limit: number;
}

/** Terminal states as SQL, the set retention may delete (never a task in progress). */
const TERMINAL_SQL = `state IN ('completed', 'failed', 'canceled', 'rejected')`;

// Lean on purpose: every index is written on every state change. The id, the newest-first listing
// per creator, the terminal tasks by age (retention) and the running ones (crash recovery); a
// listing filtered by context or state reads its creator's rows in order.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  creator TEXT NOT NULL,
  context TEXT NOT NULL,
  state TEXT NOT NULL,
  ts INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tasks_by_creator ON tasks (creator, ts, id);
CREATE INDEX IF NOT EXISTS tasks_terminal ON tasks (ts) WHERE ${TERMINAL_SQL};
CREATE INDEX IF NOT EXISTS tasks_running ON tasks (state) WHERE state IN ('submitted', 'working');
CREATE TABLE IF NOT EXISTS writing (id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS creators (creator TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS tasks_counted AFTER INSERT ON tasks BEGIN
  INSERT INTO creators (creator, n) VALUES (NEW.creator, 1)
    ON CONFLICT (creator) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS tasks_uncounted AFTER DELETE ON tasks BEGIN
  UPDATE creators SET n = n - 1 WHERE creator = OLD.creator;
END;
`;

/** How long finished writes wait to leave `writing` when no new mark commits them sooner. */
const CLEAN_DELAY_MS = 20;

/** Bumped when the rows must be rebuilt from the files (0: a new or foreign database). */
const INDEX_VERSION = 2;

interface Pending {
  /** The row, or what reads it from the record when the commit runs (the latest state then). */
  meta: IndexMeta | (() => IndexMeta);
  waiters: { resolve(): void; reject(e: unknown): void }[];
}

export class TaskIndex {
  private readonly db: Database;
  private readonly marks = new Map<string, Pending>();
  private readonly cleans = new Set<string>();
  private scheduled = false;
  /** Set while cleans wait alone for a commit (they ride with the next marks when any come). */
  private cleanTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** True when the database was new (or outdated): the store fills it from the files. */
  readonly needsRebuild: boolean;

  constructor(path: string) {
    this.db = new Database(path, { create: true, strict: true });
    this.db.exec('PRAGMA journal_mode = WAL');
    // A process crash loses no commit in WAL mode; a power loss may lose the last ones, which
    // the `writing` entries and the files repair (docs/reliability.md).
    this.db.exec('PRAGMA synchronous = NORMAL');
    this.db.exec('PRAGMA cache_size = -16384'); // 16 MiB of pages, docs/limits.md
    const version = (this.db.query('PRAGMA user_version').get() as { user_version: number })
      .user_version;
    this.needsRebuild = version !== INDEX_VERSION;
    if (this.needsRebuild)
      this.db.exec('DROP TABLE IF EXISTS tasks; DROP TABLE IF EXISTS task_counts');
    this.db.exec(SCHEMA);
  }

  /** Records that the rebuild from the files finished. */
  rebuilt(): void {
    this.db.exec(`PRAGMA user_version = ${INDEX_VERSION}`);
  }

  /**
   * Updates the row to the meta of the file about to be written and enters its id in `writing`;
   * resolves once committed. A function is called when the commit runs: the file's writer takes
   * its record's state at that moment, so changes made until then share one row and one file.
   * @throws Error (as a rejected promise) when the index cannot be written (disk full, closed).
   */
  mark(id: string, meta: IndexMeta | (() => IndexMeta)): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the task index is closed'));
    return new Promise((resolve, reject) => {
      const p = this.marks.get(id);
      if (p) {
        p.meta = meta;
        p.waiters.push({ resolve, reject });
      } else this.marks.set(id, { meta, waiters: [{ resolve, reject }] });
      this.schedule();
    });
  }

  /** The file of a marked row is written: its id leaves `writing` in the next commit. */
  clean(id: string): void {
    if (this.closed) return;
    this.cleans.add(id);
    // No hurry: an id left in `writing` costs only a check at the next start. Under load the
    // next turn's marks commit it; alone, it waits a little, so an idle turn makes no commit.
    if (!this.scheduled && !this.cleanTimer) {
      this.cleanTimer = setTimeout(() => this.commit(), CLEAN_DELAY_MS);
      this.cleanTimer.unref?.();
    }
  }

  /** Writes rows at once, clean, in one transaction (a rebuild or a repair from the files). */
  putClean(rows: Iterable<[string, IndexMeta]>): void {
    const put = this.db.query(UPSERT);
    const done = this.db.query('DELETE FROM writing WHERE id = ?');
    this.db.transaction(() => {
      for (const [id, m] of rows) {
        put.run(id, m.creator, m.contextId, m.state, m.ts);
        done.run(id);
      }
    })();
  }

  /** Deletes rows (retention, or a file a crash left unwritten). */
  remove(ids: readonly string[]): void {
    const del = this.db.query('DELETE FROM tasks WHERE id = ?');
    const done = this.db.query('DELETE FROM writing WHERE id = ?');
    this.db.transaction(() => {
      for (const id of ids) {
        del.run(id);
        done.run(id);
      }
    })();
  }

  /** Ids whose file may not match their row: the writes a crash interrupted. */
  writingIds(): string[] {
    return this.db
      .query('SELECT id FROM writing')
      .all()
      .map((r) => (r as { id: string }).id);
  }

  /** Ids of the tasks left `submitted` or `working` (crash recovery). */
  runningIds(): string[] {
    return this.db
      .query(`SELECT id FROM tasks WHERE state IN ('submitted', 'working')`)
      .all()
      .map((r) => (r as { id: string }).id);
  }

  /** Up to `limit` terminal tasks, oldest status first; with `before`, only older ones. */
  oldestTerminal(limit: number, before?: number): string[] {
    const sql = `SELECT id FROM tasks WHERE ${TERMINAL_SQL}${
      before === undefined ? '' : ' AND ts < ?'
    } ORDER BY ts LIMIT ?`;
    const args = before === undefined ? [limit] : [before, limit];
    return this.db
      .query(sql)
      .all(...args)
      .map((r) => (r as { id: string }).id);
  }

  has(id: string): boolean {
    return this.db.query('SELECT 1 FROM tasks WHERE id = ?').get(id) !== null;
  }

  /** Tasks held, all or one creator's, from the per-creator counts the triggers keep. */
  count(creator?: string | null): number {
    const row =
      creator == null
        ? this.db.query('SELECT coalesce(sum(n), 0) AS n FROM creators').get()
        : this.db
            .query('SELECT coalesce(sum(n), 0) AS n FROM creators WHERE creator = ?')
            .get(creator);
    return (row as { n: number }).n;
  }

  /** One page of ids, newest status first (the id breaks ties), and the total matching. */
  page(q: IndexQuery): { ids: [string, number][]; total: number } {
    const { ids, filter, args } = pageOfIds(this.db, q);
    // The counts answer an unfiltered listing at once; a filtered one counts its creator's rows.
    const total =
      q.contextId === undefined && q.since === undefined && q.state === undefined
        ? this.count(q.creator)
        : (this.db.query(`SELECT count(*) AS n FROM tasks${filter}`).get(...args) as { n: number })
            .n;
    return { ids, total };
  }

  /** Commits what is pending, then closes the database; later marks are refused. */
  close(): void {
    if (this.closed) return;
    this.commit();
    this.closed = true;
    this.db.close();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.commit());
  }

  /** One transaction for the turn's clears and marks; a mark's waiters learn how it went. */
  private commit(): void {
    this.scheduled = false;
    clearTimeout(this.cleanTimer);
    this.cleanTimer = undefined;
    if (!this.marks.size && !this.cleans.size) return;
    const marks: [string, IndexMeta, Pending][] = [];
    for (const [id, p] of this.marks) {
      // A record that cannot be read (its writer threw) fails its own mark only.
      try {
        marks.push([id, typeof p.meta === 'function' ? p.meta() : p.meta, p]);
      } catch (e) {
        for (const w of p.waiters) w.reject(e);
      }
    }
    const cleans = [...this.cleans];
    this.marks.clear();
    this.cleans.clear();
    try {
      const put = this.db.query(UPSERT);
      const clear = this.db.query('DELETE FROM writing WHERE id = ?');
      const writing = this.db.query('INSERT OR IGNORE INTO writing (id) VALUES (?)');
      this.db.transaction(() => {
        // Clears first: an id cleared and marked again in one turn stays in `writing`.
        for (const id of cleans) clear.run(id);
        for (const [id, m] of marks) {
          put.run(id, m.creator, m.contextId, m.state, m.ts);
          writing.run(id);
        }
      })();
    } catch (e) {
      for (const [, , p] of marks) for (const w of p.waiters) w.reject(e);
      return;
    }
    for (const [, , p] of marks) for (const w of p.waiters) w.resolve();
  }
}

// A task's creator and context never change; only its state and status time.
const UPSERT = `INSERT INTO tasks (id, creator, context, state, ts) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET state = excluded.state, ts = excluded.ts`;

/**
 * One page of ids from a `tasks` table with `id`, `creator`, `context`, `state` and `ts` columns
 * (the JSON files' index and the task log's), newest status first, the id breaking ties; with the
 * filter and its arguments, for the caller's count of the rows that match.
 */
export function pageOfIds(
  db: Database,
  q: IndexQuery,
): { ids: [string, number][]; filter: string; args: (string | number)[] } {
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (q.creator !== null) where.push('creator = ?'), args.push(q.creator);
  if (q.contextId !== undefined) where.push('context = ?'), args.push(q.contextId);
  if (q.state !== undefined) where.push('state = ?'), args.push(q.state);
  if (q.since !== undefined) where.push('ts >= ?'), args.push(q.since);
  const filter = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const cursor = q.after ? `${filter ? ' AND' : ' WHERE'} (ts, id) < (?, ?)` : '';
  const rows = db
    .query(`SELECT id, ts FROM tasks${filter}${cursor} ORDER BY ts DESC, id DESC LIMIT ?`)
    .all(...args, ...(q.after ?? []), q.limit) as { id: string; ts: number }[];
  return { ids: rows.map((r) => [r.id, r.ts]), filter, args };
}
