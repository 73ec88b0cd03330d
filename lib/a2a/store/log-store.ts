/**
 * @module lib/a2a/store/log-store — the embedded task store as an append-only log: every record
 * changed in one event-loop turn is appended to the current segment with one `write`
 * (lib/a2a/store/log/segments.ts), one line of JSON each, and the caller is
 * answered after that write; a small SQLite index (lib/a2a/store/log/log-index.ts) says where each
 * task's newest record lies and commits in groups off the answer's path, replayed from the
 * segments after a crash. Reads are positioned reads through the bounded record cache; retention
 * writes deletion records; compaction copies live records forward and drops old segments; a
 * folder in the file-per-task layout is imported at the first start, and a log in the earlier
 * binary framing converted to JSON Lines (lib/a2a/store/log/convert.ts).
 */

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '../../limits.ts';
import type { Log } from '../../log.ts';
import type { A2AError } from '../errors.ts';
import { a2aError } from '../errors.ts';
import { RecordCache } from './record-cache.ts';
import { Compactor } from './log/compact.ts';
import { convertBinaryLog } from './log/convert.ts';
import { TurnBatch } from './log/turn-batch.ts';
import { bodyJson, encodeFrames, KIND_DELETE, KIND_RECORD, type Outgoing } from './log/frame.ts';
import { LogIndex } from './log/log-index.ts';
import { openLog } from './log/log-open.ts';
import { hasFileLayout, migrateFiles } from './log/migrate.ts';
import { Segments } from './log/segments.ts';
import { encodeRecord, metaOf, parseRecord } from './task-folder.ts';
import { listPage } from './list-page.ts';
import { hardBound, isTaskId, type TaskRecord, type TaskStore } from './task-store.ts';
import type { ListTasksPage, ListTasksQuery } from '../types.ts';

const HOUR_MS = 3_600_000;
/** Tasks deleted per step of retention. */
const PRUNE_BATCH = 500;
/**
 * The index commits at most this long after a write, or at once past COMMIT_ROWS changes: each
 * commit rewrites the B-trees' newest pages, so fewer and larger ones cost less per task.
 */
const COMMIT_MS = 1_000;
const COMMIT_ROWS = 2_000;
/** How often compaction looks for a segment worth it. */
const COMPACT_CHECK_MS = 1_000;

export interface LogTaskStoreOptions {
  dir: string;
  log: Log;
  cacheSize?: number;
  cacheBytes?: number;
  maxStored?: number;
  maxAgeHours?: number;
  /** JSON a `ListTasks` page carries past its first task (default LIMITS.taskListPageBytes). */
  listPageBytes?: number;
  /** A segment is closed for appends past this size (default LIMITS.taskLogSegmentBytes). */
  segmentBytes?: number;
  /**
   * Bytes of records (each task's newest) the log keeps (default LIMITS.taskMaxBytes): past it the
   * oldest terminal tasks are deleted, and while tasks in progress hold it new tasks are refused;
   * segments on disk past twice it (dead records compaction has not dropped yet) refuse too.
   */
  maxBytes?: number;
  /** `fdatasync` after each append: an answer survives a power loss too (default false). */
  sync?: boolean;
  now?: () => number;
}

export class LogTaskStore implements TaskStore {
  private readonly cache: RecordCache<TaskRecord>;
  private readonly segments: Segments;
  private readonly index: LogIndex;
  private readonly compactor: Compactor;
  /** Tasks saved this turn, not yet appended, and who waits for them. */
  private readonly dirty = new TurnBatch(
    (ids) => this.appendNow(ids),
    () => this.afterAppend(),
  );
  /** Records known to be in the log (read or written): a save of one is no new task. */
  private readonly onDisk = new WeakSet<TaskRecord>();
  /** New tasks saved whose append has not happened: they count against the hard bound. */
  private readonly creating = new Set<string>();
  private commitTimer: ReturnType<typeof setTimeout> | undefined;
  private nothingToPrune = false;
  private closed = false;
  private readonly timers: ReturnType<typeof setInterval>[] = [];

  /** JSON a `ListTasks` page carries past its first task (lib/a2a/store/list-page.ts). */
  private listPageBytes = LIMITS.taskListPageBytes;

  private constructor(
    private readonly dir: string,
    private readonly log: Log,
    cacheSize: number,
    cacheBytes: number,
    private readonly maxStored: number,
    private readonly maxAgeMs: number,
    private readonly maxBytes: number,
    segmentBytes: number,
    sync: boolean,
    private readonly now: () => number,
  ) {
    this.cache = new RecordCache(cacheSize, cacheBytes, (id) => this.dirty.has(id));
    convertBinaryLog(dir, log);
    this.segments = new Segments(dir, segmentBytes, sync);
    this.index = new LogIndex(join(dir, 'log.sqlite'));
    openLog(this.segments, this.index, log);
    if (hasFileLayout(dir)) migrateFiles(dir, this.segments, this.index, log);
    this.compactor = new Compactor(this.segments, this.index, log);
    const age = setInterval(() => this.prune(), Math.min(60_000, maxAgeMs / 10));
    const compact = setInterval(() => this.compactor.runSoon(), COMPACT_CHECK_MS);
    for (const t of [age, compact]) {
      t.unref?.();
      this.timers.push(t);
    }
    setImmediate(() => this.prune());
  }

  /**
   * Opens (creating if needed) a log folder: replays what the index missed, imports a
   * file-per-task folder once.
   * @throws the file-system error when the folder cannot be read or written.
   */
  static open(opts: LogTaskStoreOptions): LogTaskStore {
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
    const store = new LogTaskStore(
      opts.dir,
      opts.log,
      opts.cacheSize ?? LIMITS.taskCacheEntries,
      opts.cacheBytes ?? LIMITS.taskCacheBytes,
      opts.maxStored ?? LIMITS.taskMaxStored,
      (opts.maxAgeHours ?? LIMITS.taskMaxAgeHours) * HOUR_MS,
      opts.maxBytes ?? LIMITS.taskMaxBytes,
      // A segment of at most a quarter of the byte bound, so compaction has sealed ones to work on.
      Math.min(
        opts.segmentBytes ?? LIMITS.taskLogSegmentBytes,
        Math.max(4096, Math.floor((opts.maxBytes ?? LIMITS.taskMaxBytes) / 4)),
      ),
      opts.sync ?? false,
      opts.now ?? Date.now,
    );
    if (opts.listPageBytes) store.listPageBytes = opts.listPageBytes;
    return store;
  }

  count(): number {
    return this.index.count;
  }

  /** The segments' bytes on disk now. */
  get bytes(): number {
    return this.segments.bytes;
  }

  hasRoom(pending: () => number): boolean {
    if (this.segments.bytes >= 2 * this.maxBytes) {
      // Dead records fill the disk bound: drop them now (at most the bound copied), then look
      // again; not while live records fill it (each refusal would copy them all once more).
      if (this.segments.bytes - this.index.liveBytes < this.maxBytes / 2) return false;
      // One pass now (what is under half live), not a full cycle: that could copy every live
      // record on this request's path.
      this.segments.roll();
      while (this.compactor.step()) {}
      if (this.segments.bytes >= 2 * this.maxBytes) return false;
    }
    const fits = () =>
      this.index.liveBytes < this.maxBytes &&
      this.index.count + this.creating.size + pending() < hardBound(this.maxStored);
    if (fits()) return true;
    if (!this.nothingToPrune) this.prune();
    return fits();
  }

  get cached(): { entries: number; bytes: number } {
    return this.cache.stats;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** The record for an id, or undefined when the id is malformed, unknown or unreadable. */
  get(id: string): TaskRecord | undefined {
    if (!isTaskId(id)) return undefined;
    const hit = this.cache.get(id);
    if (hit) return hit;
    if (this.closed) return undefined;
    const loc = this.index.locate(id);
    if (!loc) return undefined;
    const f = this.segments.read(loc);
    let rec: TaskRecord | undefined;
    try {
      rec =
        f && f.id === id && f.kind === KIND_RECORD ? parseRecord(bodyJson(f.body), id) : undefined;
    } catch {}
    if (!rec) {
      this.log('warn', 'task log line unreadable (not intact): skipped', {
        task: id,
        segment: this.segments.fileOf(loc.seg),
        at: loc.off,
      });
      return undefined;
    }
    this.onDisk.add(rec);
    this.cache.set(rec, loc.size);
    return rec;
  }

  /**
   * Records a new or changed task: appended with every other task changed in this turn, at its
   * end; the promise resolves once that write is done (the record as it stands then).
   * @throws Error (as a rejected promise) when the log cannot be written.
   */
  save(rec: TaskRecord): Promise<void> {
    const id = rec.task.id;
    if (!isTaskId(id))
      return Promise.reject(new Error(`refusing to store task with id ${JSON.stringify(id)}`));
    if (this.closed) return Promise.reject(new Error('the task store is closed'));
    if (!this.onDisk.has(rec)) this.creating.add(id);
    const p = this.dirty.add(id);
    // After the id is dirty, so that trimming a full cache cannot evict this record before it is written.
    this.cache.set(rec);
    return p;
  }

  flush(): Promise<void> {
    return this.dirty.written;
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.closed) return;
    this.closed = true;
    this.compactor.stop();
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.commitTimer);
    try {
      this.index.close();
    } finally {
      this.segments.close();
    }
  }

  list(
    q: ListTasksQuery,
    creator: string | null,
  ): Promise<ListTasksPage | A2AError> | ListTasksPage | A2AError {
    if (this.dirty.size) return this.dirty.written.then(() => this.listNow(q, creator));
    return this.listNow(q, creator);
  }

  async retain(): Promise<number> {
    await this.flush();
    let deleted = 0;
    for (let n = this.prune(); n; n = this.prune()) deleted += n;
    return deleted;
  }

  /** Ids of the tasks left `submitted` or `working` (crash recovery, before anything is served). */
  runningIds(): string[] {
    return this.index.runningIds();
  }

  /**
   * A full compaction cycle now (tests and maintenance; it may copy every live record): afterwards
   * the segments hold the live records only (lib/a2a/store/log/compact.ts).
   */
  compact(): void {
    this.dirty.run();
    this.compactor.full();
  }

  /** Resolves once background compaction has nothing left due (it runs now if something is). */
  compacted(): Promise<void> {
    return this.compactor.settled();
  }

  /** Bytes of every task's newest record: what a full compaction leaves on disk. */
  get liveBytes(): number {
    return this.index.liveBytes;
  }

  private listNow(q: ListTasksQuery, creator: string | null): ListTasksPage | A2AError {
    if (this.closed) return a2aError('INTERNAL_ERROR', 'the task store is closed');
    return listPage(
      q,
      creator,
      (iq) => this.index.page(iq),
      (id) => this.get(id),
      this.listPageBytes,
    );
  }

  /** The oldest of `rows` whose deletion brings the records' bytes under the bound (at least one). */
  private withinBytes<R extends { size: number }>(rows: R[]): R[] {
    let excess = this.index.liveBytes - this.maxBytes;
    let n = 0;
    while (n < rows.length && excess > 0) excess -= rows[n++]!.size;
    return rows.slice(0, Math.max(1, n));
  }

  /** The turn's write: every saved task's record as it stands now, in one append. */
  private appendNow(ids: string[]): void {
    const items: Outgoing[] = [];
    const recs: TaskRecord[] = [];
    for (const id of ids) {
      const rec = this.cache.peek(id);
      if (!rec) continue;
      items.push({ kind: KIND_RECORD, id, json: encodeRecord(rec) });
      recs.push(rec);
    }
    try {
      if (items.length) this.appendRecords(items, recs);
    } catch (e) {
      this.log('error', 'task write failed', { tasks: items.length, error: (e as Error).message });
      throw e;
    }
  }

  private appendRecords(items: Outgoing[], recs: TaskRecord[]): void {
    const sizes: number[] = [];
    const at = this.segments.append(encodeFrames(items, sizes));
    let off = at.off;
    for (let i = 0; i < items.length; i++) {
      const rec = recs[i]!;
      const id = rec.task.id;
      const loc = { seg: at.seg, off, size: sizes[i]! };
      this.index.put(id, metaOf(rec), loc, this.index.locate(id));
      this.onDisk.add(rec);
      this.cache.setSize(id, loc.size);
      off += loc.size;
    }
    this.index.advance(this.segments.end);
  }

  /** After each append: the waiters of later saves, the cache, the index's commit, retention. */
  private afterAppend(): void {
    this.creating.clear();
    this.nothingToPrune = false;
    this.cache.trim();
    this.scheduleCommit();
    if (this.index.count > this.maxStored || this.index.liveBytes > this.maxBytes)
      setImmediate(() => this.prune());
  }

  private scheduleCommit(): void {
    if (this.index.pending >= COMMIT_ROWS) return this.commitNow();
    if (this.commitTimer) return;
    this.commitTimer = setTimeout(() => this.commitNow(), COMMIT_MS);
    this.commitTimer.unref?.();
  }

  private commitNow(): void {
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    if (this.closed) return;
    try {
      this.index.commit();
    } catch (e) {
      // The changes stay pending and the log holds them: the next commit, or a replay, has them.
      this.log('error', 'task log index commit failed', { error: (e as Error).message });
    }
  }

  /**
   * One step of retention: the oldest terminal tasks past the count, then those past the age, at
   * most PRUNE_BATCH, each deleted by a deletion record; never a task in progress or one being saved.
   */
  private prune(): number {
    if (this.closed) return 0;
    const excess = this.index.count - this.maxStored;
    const overBytes = this.index.liveBytes > this.maxBytes;
    let rows =
      excess > 0 || overBytes
        ? this.index.oldestTerminal(excess > 0 ? Math.min(excess, PRUNE_BATCH) : PRUNE_BATCH)
        : this.index.oldestTerminal(PRUNE_BATCH, this.now() - this.maxAgeMs);
    if ((excess > 0 || overBytes) && !rows.length) this.nothingToPrune = true;
    if (overBytes && excess <= 0) rows = this.withinBytes(rows);
    rows = rows.filter((r) => !this.dirty.has(r.id));
    if (!rows.length) return 0;
    try {
      this.segments.append(
        encodeFrames(
          rows.map((r) => ({ kind: KIND_DELETE, id: r.id })),
          [],
        ),
      );
    } catch (e) {
      this.log('error', 'task deletions not written', { error: (e as Error).message });
      return 0;
    }
    for (const r of rows) {
      const rec = this.cache.peek(r.id);
      if (rec) this.onDisk.delete(rec); // saved again later, it is a new task
      this.cache.delete(r.id);
      this.index.del(r.id, r);
    }
    this.index.advance(this.segments.end);
    this.scheduleCommit();
    if (
      rows.length === PRUNE_BATCH ||
      this.index.count > this.maxStored ||
      this.index.liveBytes > this.maxBytes
    )
      setImmediate(() => this.prune());
    this.compactor.runSoon();
    return rows.length;
  }
}
