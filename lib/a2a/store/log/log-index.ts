/**
 * @module lib/a2a/store/log/log-index — the task log's index, `<dir>/log.sqlite` (bun:sqlite, WAL):
 * per task only what queries need (creator, context, state, status time) and where its newest
 * record lies (segment, offset, size), the tasks per creator and the live bytes per segment, and
 * the log position everything before is reflected up to. Changes collect in memory and commit in
 * one transaction now and then, off the answer's path: what a crash loses of them the store
 * replays from the segments after that position (lib/a2a/store/log/log-open.ts).
 */

import { Database } from 'bun:sqlite';
import { type IndexMeta, type IndexQuery, pageOfIds } from '../task-index.ts';
import type { Loc } from './segments.ts';

/** Where a task's newest record lies, and whose the task is. */
export type Located = Loc & { creator: string };

type Op = { t: 'put'; meta: IndexMeta; loc: Loc } | { t: 'move'; loc: Loc } | { t: 'del' };

const TERMINAL_SQL = `state IN ('completed', 'failed', 'canceled', 'rejected')`;

// Three indexes written per task change, as before: newest-first listing per creator,
// terminal tasks by age (retention), running ones (crash recovery). No `writing` table, no triggers.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY, creator TEXT NOT NULL, context TEXT NOT NULL, state TEXT NOT NULL,
  ts INTEGER NOT NULL, seg INTEGER NOT NULL, off INTEGER NOT NULL, size INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tasks_by_creator ON tasks (creator, ts, id);
CREATE INDEX IF NOT EXISTS tasks_terminal ON tasks (ts) WHERE ${TERMINAL_SQL};
CREATE INDEX IF NOT EXISTS tasks_running ON tasks (state) WHERE state IN ('submitted', 'working');
CREATE TABLE IF NOT EXISTS creators (creator TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS segments (seg INTEGER PRIMARY KEY, live INTEGER NOT NULL, n INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS position (k INTEGER PRIMARY KEY CHECK (k = 0), seg INTEGER NOT NULL, off INTEGER NOT NULL);
`;

/** Bumped when the rows must be rebuilt from the segments (0: a new or foreign database). */
const INDEX_VERSION = 2;

const PUT = `INSERT INTO tasks (id, creator, context, state, ts, seg, off, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET state = excluded.state, ts = excluded.ts, seg = excluded.seg,
  off = excluded.off, size = excluded.size`;

export class LogIndex {
  private readonly db: Database;
  private readonly locateQuery: ReturnType<Database['prepare']>;
  private readonly ops = new Map<string, Op>();
  /** Creators whose count changed since the last commit, and by how much. */
  private readonly creatorDelta = new Map<string, number>();
  /** Live bytes and records per segment, committed and pending alike. */
  private readonly live = new Map<number, { bytes: number; n: number }>();
  private readonly dirtySegs = new Set<number>();
  private pos: { seg: number; off: number } | undefined;
  private posDirty = false;
  private total = 0;
  /**
   * No id above this was ever indexed: a new task's UUIDv7 (time first) is above it, so its
   * lookup is answered without a query.
   */
  private maxId = '';
  /** True when the database was new (or outdated): the store fills it from the segments. */
  readonly needsRebuild: boolean;

  constructor(path: string) {
    this.db = new Database(path, { create: true, strict: true });
    this.db.exec('PRAGMA journal_mode = WAL');
    // A process crash loses no commit in WAL mode; what a power loss takes, the segments replay.
    this.db.exec('PRAGMA synchronous = NORMAL');
    this.db.exec('PRAGMA cache_size = -16384'); // 16 MiB of pages, docs/limits.md
    const v = (this.db.query('PRAGMA user_version').get() as { user_version: number }).user_version;
    this.needsRebuild = v !== INDEX_VERSION;
    if (this.needsRebuild)
      this.db.exec(
        'DROP TABLE IF EXISTS tasks; DROP TABLE IF EXISTS creators; DROP TABLE IF EXISTS segments; DROP TABLE IF EXISTS position',
      );
    this.db.exec(SCHEMA);
    this.locateQuery = this.db.prepare('SELECT creator, seg, off, size FROM tasks WHERE id = ?');
    for (const r of this.db.query('SELECT seg, live, n FROM segments').all() as {
      seg: number;
      live: number;
      n: number;
    }[])
      this.live.set(r.seg, { bytes: r.live, n: r.n });
    this.total = (
      this.db.query('SELECT coalesce(sum(n), 0) AS n FROM creators').get() as { n: number }
    ).n;
    const p = this.db.query('SELECT seg, off FROM position').get() as {
      seg: number;
      off: number;
    } | null;
    this.pos = p ?? undefined;
    this.maxId =
      (this.db.query('SELECT max(id) AS m FROM tasks').get() as { m: string | null }).m ?? '';
  }

  /** Records that a rebuild from the segments finished. */
  rebuilt(): void {
    this.commit();
    this.db.exec(`PRAGMA user_version = ${INDEX_VERSION}`);
  }

  /** The log position the committed rows reflect everything before; undefined when never set. */
  get position(): { seg: number; off: number } | undefined {
    return this.pos;
  }

  /** Changes not yet committed. */
  get pending(): number {
    return this.ops.size;
  }

  /** Tasks held (pending changes included). */
  get count(): number {
    return this.total;
  }

  /** Bytes of every task's newest record (what TASK_MAX_BYTES bounds). */
  get liveBytes(): number {
    let bytes = 0;
    for (const l of this.live.values()) bytes += l.bytes;
    return bytes;
  }

  /** Live bytes and records of a segment. */
  liveOf(seg: number): { bytes: number; n: number } {
    return this.live.get(seg) ?? { bytes: 0, n: 0 };
  }

  /** Where the task's newest record lies; undefined when the index holds no such task. */
  locate(id: string): Located | undefined {
    const op = this.ops.get(id);
    if (op?.t === 'del') return undefined;
    if (op?.t === 'put') return { ...op.loc, creator: op.meta.creator };
    if (!op && id > this.maxId) return undefined;
    const row = this.locateQuery.get(id) as Located | null;
    if (!row) return undefined;
    return op ? { ...op.loc, creator: row.creator } : row;
  }

  /** A new record of a task (`prev`: where the one before lay, as `locate` answered). */
  put(id: string, meta: IndexMeta, loc: Loc, prev: Located | undefined): void {
    this.ops.set(id, { t: 'put', meta, loc });
    if (id > this.maxId) this.maxId = id;
    if (prev) this.shift(prev, -1);
    else this.countCreator(meta.creator, 1);
    this.shift(loc, 1);
  }

  /** A record copied forward by compaction: same task, new place. */
  move(id: string, loc: Loc, prev: Located): void {
    const op = this.ops.get(id);
    if (op?.t === 'put') op.loc = loc;
    else this.ops.set(id, { t: 'move', loc });
    this.shift(prev, -1);
    this.shift(loc, 1);
  }

  /** A deleted task (retention), as `locate` found it. */
  del(id: string, prev: Located): void {
    this.ops.set(id, { t: 'del' });
    this.shift(prev, -1);
    this.countCreator(prev.creator, -1);
  }

  /** Everything before this log position is in the pending changes. */
  advance(pos: { seg: number; off: number }): void {
    this.pos = pos;
    this.posDirty = true;
  }

  /** A segment that is gone. */
  forget(seg: number): void {
    this.live.delete(seg);
    this.dirtySegs.add(seg);
  }

  /**
   * Commits the pending changes in one transaction.
   * @throws Error when the index cannot be written (disk full): the changes stay pending.
   */
  commit(): void {
    if (!this.ops.size && !this.posDirty && !this.dirtySegs.size) return;
    const put = this.db.query(PUT);
    const move = this.db.query('UPDATE tasks SET seg = ?, off = ?, size = ? WHERE id = ?');
    const del = this.db.query('DELETE FROM tasks WHERE id = ?');
    const creator = this.db.query(
      'INSERT INTO creators (creator, n) VALUES (?, ?) ON CONFLICT (creator) DO UPDATE SET n = n + excluded.n',
    );
    const seg = this.db.query(
      'INSERT INTO segments (seg, live, n) VALUES (?, ?, ?) ON CONFLICT (seg) DO UPDATE SET live = excluded.live, n = excluded.n',
    );
    const noSeg = this.db.query('DELETE FROM segments WHERE seg = ?');
    const pos = this.db.query('INSERT OR REPLACE INTO position (k, seg, off) VALUES (0, ?, ?)');
    this.db.transaction(() => {
      for (const [id, op] of this.ops) {
        if (op.t === 'put') {
          const { meta: m, loc: l } = op;
          put.run(id, m.creator, m.contextId, m.state, m.ts, l.seg, l.off, l.size);
        } else if (op.t === 'move') move.run(op.loc.seg, op.loc.off, op.loc.size, id);
        else del.run(id);
      }
      for (const [c, d] of this.creatorDelta) if (d) creator.run(c, d);
      for (const s of this.dirtySegs) {
        const l = this.live.get(s);
        if (l) seg.run(s, l.bytes, l.n);
        else noSeg.run(s);
      }
      if (this.pos) pos.run(this.pos.seg, this.pos.off);
    })();
    this.ops.clear();
    this.creatorDelta.clear();
    this.dirtySegs.clear();
    this.posDirty = false;
  }

  /** Drops every row (a rebuild from the segments starts from nothing). */
  reset(): void {
    this.ops.clear();
    this.creatorDelta.clear();
    this.live.clear();
    this.dirtySegs.clear();
    this.total = 0;
    this.maxId = '';
    this.pos = undefined;
    this.db.exec(
      'DELETE FROM tasks; DELETE FROM creators; DELETE FROM segments; DELETE FROM position',
    );
  }

  /** Ids of the tasks left `submitted` or `working` (committed first). */
  runningIds(): string[] {
    this.commit();
    return (
      this.db.query(`SELECT id FROM tasks WHERE state IN ('submitted', 'working')`).all() as {
        id: string;
      }[]
    ).map((r) => r.id);
  }

  /** Up to `limit` terminal tasks, oldest status first; with `before`, only older ones (committed first). */
  oldestTerminal(limit: number, before?: number): (Located & { id: string })[] {
    this.commit();
    const sql = `SELECT id, creator, seg, off, size FROM tasks WHERE ${TERMINAL_SQL}${
      before === undefined ? '' : ' AND ts < ?'
    } ORDER BY ts LIMIT ?`;
    return this.db
      .query(sql)
      .all(...(before === undefined ? [limit] : [before, limit])) as (Located & {
      id: string;
    })[];
  }

  /** One page of ids, newest status first (the id breaks ties), and the total matching (committed first). */
  page(q: IndexQuery): { ids: [string, number][]; total: number } {
    this.commit();
    const { ids, filter, args } = pageOfIds(this.db, q);
    const plain = q.contextId === undefined && q.since === undefined && q.state === undefined;
    const total = !plain
      ? (this.db.query(`SELECT count(*) AS n FROM tasks${filter}`).get(...args) as { n: number }).n
      : q.creator === null
        ? this.total
        : ((
            this.db.query('SELECT n FROM creators WHERE creator = ?').get(q.creator) as {
              n: number;
            } | null
          )?.n ?? 0);
    return { ids, total };
  }

  /** Commits what is pending, then closes the database. */
  close(): void {
    try {
      this.commit();
    } finally {
      this.db.close();
    }
  }

  private shift(loc: Loc, sign: 1 | -1): void {
    const l = this.live.get(loc.seg) ?? { bytes: 0, n: 0 };
    l.bytes += sign * loc.size;
    l.n += sign;
    this.live.set(loc.seg, l);
    this.dirtySegs.add(loc.seg);
  }

  private countCreator(creator: string, d: number): void {
    this.creatorDelta.set(creator, (this.creatorDelta.get(creator) ?? 0) + d);
    this.total += d;
  }
}
