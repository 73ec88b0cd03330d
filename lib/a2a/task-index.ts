/**
 * @module lib/a2a/task-index — the JSON-file task store's index, `<dir>/index.sqlite` (bun:sqlite,
 * WAL): one row per task file with what listing, counting, recovery and retention need (creator,
 * context, state, status time), so that start-up and a first `ListTasks` page cost the same with a
 * million tasks as with none. The files stay the truth: a row is marked `dirty` (committed) before
 * its file is written and cleared after, so a crash leaves only the dirty rows to check against
 * their files at the next start. Writes are grouped into one transaction per event-loop turn.
 */

import { Database } from 'bun:sqlite';
import type { TaskState } from './types.ts';

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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  creator TEXT NOT NULL,
  context TEXT NOT NULL,
  state TEXT NOT NULL,
  ts INTEGER NOT NULL,
  dirty INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tasks_by_creator ON tasks (creator, ts, id);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (creator, state, ts, id);
CREATE INDEX IF NOT EXISTS tasks_by_context ON tasks (creator, context, ts, id);
CREATE INDEX IF NOT EXISTS tasks_terminal ON tasks (ts) WHERE ${TERMINAL_SQL};
CREATE INDEX IF NOT EXISTS tasks_running ON tasks (state) WHERE state IN ('submitted', 'working');
CREATE INDEX IF NOT EXISTS tasks_dirty ON tasks (dirty) WHERE dirty = 1;
CREATE TABLE IF NOT EXISTS task_counts (
  creator TEXT NOT NULL,
  state TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (creator, state)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS tasks_counted AFTER INSERT ON tasks BEGIN
  INSERT INTO task_counts (creator, state, n) VALUES (NEW.creator, NEW.state, 1)
    ON CONFLICT (creator, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS tasks_uncounted AFTER DELETE ON tasks BEGIN
  UPDATE task_counts SET n = n - 1 WHERE creator = OLD.creator AND state = OLD.state;
END;
CREATE TRIGGER IF NOT EXISTS tasks_recounted AFTER UPDATE OF creator, state ON tasks
  WHEN OLD.creator IS NOT NEW.creator OR OLD.state IS NOT NEW.state BEGIN
  UPDATE task_counts SET n = n - 1 WHERE creator = OLD.creator AND state = OLD.state;
  INSERT INTO task_counts (creator, state, n) VALUES (NEW.creator, NEW.state, 1)
    ON CONFLICT (creator, state) DO UPDATE SET n = n + 1;
END;
`;

/** Bumped when the rows must be rebuilt from the files (0: a new or foreign database). */
const INDEX_VERSION = 1;

interface Pending {
  meta: IndexMeta;
  waiters: { resolve(): void; reject(e: unknown): void }[];
}

export class TaskIndex {
  private readonly db: Database;
  private readonly marks = new Map<string, Pending>();
  private readonly cleans = new Set<string>();
  private scheduled = false;
  private closed = false;
  /** True when the database was new (or outdated): the store fills it from the files. */
  readonly needsRebuild: boolean;

  constructor(path: string) {
    this.db = new Database(path, { create: true, strict: true });
    this.db.exec('PRAGMA journal_mode = WAL');
    // A process crash loses no commit in WAL mode; a power loss may lose the last ones, which
    // the dirty marks and the files repair (docs/reliability.md).
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
   * Marks the row dirty with the meta of the file about to be written; resolves once committed.
   * @throws Error (as a rejected promise) when the index cannot be written (disk full, closed).
   */
  mark(id: string, meta: IndexMeta): Promise<void> {
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

  /** The file of a marked row is written: its mark is cleared in the next commit. */
  clean(id: string): void {
    if (this.closed) return;
    this.cleans.add(id);
    this.schedule();
  }

  /** Writes rows at once, clean, in one transaction (a rebuild or a repair from the files). */
  putClean(rows: Iterable<[string, IndexMeta]>): void {
    const put = this.db.query(UPSERT);
    this.db.transaction(() => {
      for (const [id, m] of rows) put.run(id, m.creator, m.contextId, m.state, m.ts, 0);
    })();
  }

  /** Deletes rows (retention, or a file a crash left unwritten). */
  remove(ids: readonly string[]): void {
    const del = this.db.query('DELETE FROM tasks WHERE id = ?');
    this.db.transaction(() => {
      for (const id of ids) del.run(id);
    })();
  }

  /** Ids whose file may not match their row: the writes a crash interrupted. */
  dirtyIds(): string[] {
    return this.db
      .query('SELECT id FROM tasks WHERE dirty = 1')
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

  /** Up to `limit` terminal, clean tasks, oldest status first; with `before`, only older ones. */
  oldestTerminal(limit: number, before?: number): string[] {
    const sql = `SELECT id FROM tasks WHERE ${TERMINAL_SQL} AND dirty = 0${
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

  /** Rows of the tasks held, from the per-creator counts the triggers keep. */
  count(creator?: string | null, state?: TaskState): number {
    const where = [creator != null ? 'creator = ?' : '', state ? 'state = ?' : ''].filter(Boolean);
    const args = [creator ?? null, state ?? null].filter((a) => a !== null) as string[];
    const sql = `SELECT coalesce(sum(n), 0) AS n FROM task_counts${
      where.length ? ` WHERE ${where.join(' AND ')}` : ''
    }`;
    return (this.db.query(sql).get(...args) as { n: number }).n;
  }

  /** One page of ids, newest status first (the id breaks ties), and the total matching. */
  page(q: IndexQuery): { ids: [string, number][]; total: number } {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (q.creator !== null) where.push('creator = ?'), args.push(q.creator);
    if (q.contextId !== undefined) where.push('context = ?'), args.push(q.contextId);
    if (q.state !== undefined) where.push('state = ?'), args.push(q.state);
    if (q.since !== undefined) where.push('ts >= ?'), args.push(q.since);
    const filter = where.length ? ` WHERE ${where.join(' AND ')}` : '';
    const cursor = q.after ? `${filter ? ' AND' : ' WHERE'} (ts, id) < (?, ?)` : '';
    const rows = this.db
      .query(`SELECT id, ts FROM tasks${filter}${cursor} ORDER BY ts DESC, id DESC LIMIT ?`)
      .all(...args, ...(q.after ?? []), q.limit) as { id: string; ts: number }[];
    // The counts table answers the common listings at once; other filters count their range.
    const total =
      q.contextId === undefined && q.since === undefined
        ? this.count(q.creator, q.state)
        : (this.db.query(`SELECT count(*) AS n FROM tasks${filter}`).get(...args) as { n: number })
            .n;
    return { ids: rows.map((r) => [r.id, r.ts]), total };
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
    if (!this.marks.size && !this.cleans.size) return;
    const marks = [...this.marks];
    const cleans = [...this.cleans];
    this.marks.clear();
    this.cleans.clear();
    try {
      const put = this.db.query(UPSERT);
      const clear = this.db.query('UPDATE tasks SET dirty = 0 WHERE id = ?');
      this.db.transaction(() => {
        // Clears first: a row cleared and marked again in one turn stays dirty.
        for (const id of cleans) clear.run(id);
        for (const [id, { meta: m }] of marks)
          put.run(id, m.creator, m.contextId, m.state, m.ts, 1);
      })();
    } catch (e) {
      for (const [, p] of marks) for (const w of p.waiters) w.reject(e);
      return;
    }
    for (const [, p] of marks) for (const w of p.waiters) w.resolve();
  }
}

const UPSERT = `INSERT INTO tasks (id, creator, context, state, ts, dirty) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET creator = excluded.creator, context = excluded.context,
  state = excluded.state, ts = excluded.ts, dirty = excluded.dirty`;
