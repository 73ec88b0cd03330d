/**
 * @module lib/a2a/store/files-store — the embedded task store: one JSON file per task in sharded
 * folders (lib/a2a/store/task-folder.ts), written atomically (lib/atomic-file.ts), an index in SQLite
 * for listing, counting and retention (lib/a2a/store/task-index.ts), and a cache bounded by entries and
 * by bytes. Retention keeps at most `maxStored` tasks, `maxBytes` of files and none older than
 * `maxAgeMs`, deleting terminal tasks oldest first and never a task in progress.
 */

import { mkdirSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../atomic-file.ts';
import { LIMITS, utf8Bytes } from '../../limits.ts';
import type { Log } from '../../log.ts';
import { type A2AError, a2aError } from '../errors.ts';
import { RecordCache } from './record-cache.ts';
import { TaskBytes } from './task-bytes.ts';
import { encodeRecord, metaOf, prepareFolder, readTaskFile, taskFilePath } from './task-folder.ts';
import { TaskIndex } from './task-index.ts';
import { listPage } from './list-page.ts';
import { hardBound, isTaskId, type TaskRecord, type TaskStore } from './task-store.ts';
import type { ListTasksPage, ListTasksQuery } from '../types.ts';
import { WriteQueue } from './write-queue.ts';

const HOUR_MS = 3_600_000;
/** Tasks deleted per step of retention, so that one step never holds the event loop for long. */
const PRUNE_BATCH = 500;

/** The part of a record its index row follows (creator and context never change). */
const indexKey = (rec: TaskRecord): string =>
  `${rec.task.status.state} ${rec.task.status.timestamp}`;

export interface FileTaskStoreOptions {
  dir: string;
  log: Log;
  /** Full records kept in memory; older ones are read back from their files (default LIMITS.taskCacheEntries). */
  cacheSize?: number;
  /** Total stored size of the records kept in memory (default LIMITS.taskCacheBytes). */
  cacheBytes?: number;
  /** JSON a `ListTasks` page carries past its first task (default LIMITS.taskListPageBytes). */
  listPageBytes?: number;
  /** Tasks kept at most; past it the oldest terminal ones are deleted (default LIMITS.taskMaxStored). */
  maxStored?: number;
  /** Age of the oldest terminal task kept, in hours (default LIMITS.taskMaxAgeHours). */
  maxAgeHours?: number;
  /** Bytes of task files kept; past it the oldest terminal ones are deleted, new tasks refused (default LIMITS.taskMaxBytes). */
  maxBytes?: number;
  now?: () => number;
}

export class FileTaskStore implements TaskStore {
  private readonly writes = new WriteQueue(() => this.settled());
  private readonly cache: RecordCache<TaskRecord>;
  private readonly index: TaskIndex;
  /** What the index row of a record says (state and status time), to skip rows that would not change. */
  private readonly indexed = new WeakMap<TaskRecord, string>();
  /** Records whose file exists: their writes replace it instead of creating it. */
  private readonly onDisk = new WeakSet<TaskRecord>();
  /** Ids being deleted by retention: already gone for readers. */
  private readonly deleting = new Set<string>();
  private stored: number;
  /** New tasks saved whose first write has not landed: they count against the hard bound. */
  private readonly creating = new Set<string>();
  private pruning = false;
  /** The last retention step past the count found no terminal task, and nothing was written since. */
  private nothingToPrune = false;
  /** Resolves when the retention step under way has removed its files. */
  private pruned: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly ageTimer: ReturnType<typeof setInterval>;

  /** JSON a `ListTasks` page carries past its first task (lib/a2a/store/list-page.ts). */
  private listPageBytes = LIMITS.taskListPageBytes;
  private maxBytes = LIMITS.taskMaxBytes;
  /** Each task file's size: a store full of bytes refuses new tasks as one full of tasks does. */
  private readonly bytes: TaskBytes;

  private constructor(
    private readonly dir: string,
    private readonly log: Log,
    cacheSize: number,
    cacheBytes: number,
    private readonly maxStored: number,
    private readonly maxAgeMs: number,
    private readonly now: () => number,
  ) {
    this.cache = new RecordCache(cacheSize, cacheBytes, (id) => this.writes.has(id));
    this.index = new TaskIndex(join(dir, 'index.sqlite'));
    prepareFolder(dir, this.index, log);
    this.stored = this.index.count();
    this.bytes = TaskBytes.scan(dir);
    // Age is checked every minute (or a tenth of the age, when shorter); unref'd: it keeps no process up.
    this.ageTimer = setInterval(() => this.prune(), Math.min(60_000, maxAgeMs / 10));
    this.ageTimer.unref?.();
    setImmediate(() => this.prune());
  }

  /** Opens (creating if needed) a store folder: start-up reads the index, not the files. */
  static open(opts: FileTaskStoreOptions): FileTaskStore {
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
    const store = new FileTaskStore(
      opts.dir,
      opts.log,
      opts.cacheSize ?? LIMITS.taskCacheEntries,
      opts.cacheBytes ?? LIMITS.taskCacheBytes,
      opts.maxStored ?? LIMITS.taskMaxStored,
      (opts.maxAgeHours ?? LIMITS.taskMaxAgeHours) * HOUR_MS,
      opts.now ?? Date.now,
    );
    if (opts.listPageBytes) store.listPageBytes = opts.listPageBytes;
    if (opts.maxBytes) store.maxBytes = opts.maxBytes;
    return store;
  }

  count(): number {
    return this.stored;
  }

  hasRoom(pending: () => number): boolean | Promise<boolean> {
    const fits = () =>
      this.stored + this.creating.size + pending() < hardBound(this.maxStored) &&
      this.bytes.total < this.maxBytes;
    if (fits()) return true;
    // At the bound: a retention step under way is waited for and followed by the next; otherwise
    // one runs now, unless the last found nothing terminal and nothing was written since (a store
    // full of tasks in progress refuses without touching the index).
    if (this.pruning)
      return this.pruned.then(() => {
        this.prune();
        return fits();
      });
    if (!this.nothingToPrune) this.prune();
    return fits();
  }

  /** What the in-memory cache holds now: records and their stored bytes. */
  get cached(): { entries: number; bytes: number } {
    return this.cache.stats;
  }

  /** False once `close` ran: the store takes no more writes (readiness reports it). */
  get isOpen(): boolean {
    return !this.closed;
  }

  /** The record for an id, or undefined when the id is malformed, unknown or unreadable. */
  get(id: string): TaskRecord | undefined {
    if (!isTaskId(id) || this.deleting.has(id)) return undefined;
    const hit = this.cache.get(id);
    if (hit) return hit;
    const read = readTaskFile(this.dir, id, this.log);
    if (!read) return undefined;
    this.onDisk.add(read.rec);
    this.indexed.set(read.rec, indexKey(read.rec));
    this.cache.set(read.rec, read.bytes);
    return read.rec;
  }

  /**
   * Records a new or changed task and writes it to disk. Writes to one task are serialised and
   * coalesced: the returned promise resolves once a write that includes this change is renamed
   * into place (and its index row committed).
   * @throws Error (as a rejected promise) when the file cannot be written.
   */
  save(rec: TaskRecord): Promise<void> {
    const id = rec.task.id;
    if (!isTaskId(id))
      return Promise.reject(new Error(`refusing to store task with id ${JSON.stringify(id)}`));
    if (this.closed) return Promise.reject(new Error('the task store is closed'));
    if (!this.onDisk.has(rec)) this.creating.add(id);
    const written = this.writes.enqueue(id, (taken) => this.writeFile(id, taken), true);
    // After the write is queued, so that trimming a full cache cannot evict this record before it is written.
    this.cache.set(rec);
    return written;
  }

  /** Resolves when every write started so far has finished. */
  flush(): Promise<void> {
    return this.writes.flush();
  }

  /** Finishes the writes in flight, then refuses new ones (at shutdown). */
  async close(): Promise<void> {
    await this.flush();
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ageTimer);
    this.index.close();
  }

  /** A page of the index, after the writes in flight, so a listing includes every task saved before it. */
  list(
    q: ListTasksQuery,
    creator: string | null,
  ): Promise<ListTasksPage | A2AError> | ListTasksPage | A2AError {
    if (this.writes.size) return this.writes.flush().then(() => this.listNow(q, creator));
    return this.listNow(q, creator);
  }

  /** Runs retention steps until nothing more is past a bound. */
  async retain(): Promise<number> {
    let deleted = 0;
    for (;;) {
      while (this.pruning) await this.pruned;
      const n = this.prune();
      if (!n) return deleted;
      deleted += n;
    }
  }

  /** Ids of the tasks left `submitted` or `working` (crash recovery, before anything is served). */
  runningIds(): string[] {
    return this.index.runningIds();
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

  /**
   * Writes a task's file (and first its index row, when state or status time changed). What is
   * written is the record as it stands when the row commits, at the end of the event-loop turn:
   * an agent that works through a few awaits (a catalog call) makes one file, not one per step.
   */
  private async writeFile(id: string, taken: () => void): Promise<void> {
    let rec = this.cache.peek(id);
    if (!rec) {
      this.creating.delete(id);
      return taken();
    }
    let body = '';
    let key = indexKey(rec);
    // The record's state now: the row and the file say the same, and later changes wait for the next write.
    const take = () => {
      taken();
      rec = this.cache.peek(id) ?? rec!;
      key = indexKey(rec);
      body = encodeRecord(rec);
      return metaOf(rec);
    };
    const target = taskFilePath(this.dir, id);
    try {
      // The row is committed (with the id in `writing`) before the file is written: a crash in
      // between leaves an entry the next start checks against the file, never a file the index
      // does not know. A write that changes neither state nor status time (an artifact, a push
      // config) leaves the row alone: the file before and after it says the same to the index.
      const marked = this.indexed.get(rec) !== key;
      if (marked) await this.index.mark(id, take);
      else take();
      const size = utf8Bytes(body);
      this.cache.setSize(id, size);
      // First write of a new task: exclusive create, no rename. The caller is answered only after
      // it completes, so a crash mid-write leaves an unacknowledged, unparsable file that the
      // next start removes; nothing a client was told exists can be torn. Later writes (or a first
      // one that finds the file there) replace it through a temporary file. Written inline, not
      // through the thread pool: a record of a few KB into the page cache costs less CPU than the
      // hop there and back (docs/benchmarks.md), as the index commit before it does.
      const created =
        !this.onDisk.has(rec) &&
        writeFileAtomicSync(target, body, { ifAbsent: true, direct: true });
      if (!created) writeFileAtomicSync(target, body);
      else this.stored++;
      this.bytes.set(id, size);
      this.onDisk.add(rec);
      if (marked) {
        this.index.clean(id);
        this.indexed.set(rec, key);
      }
    } catch (e) {
      this.log('error', 'task write failed', { task: id, error: (e as Error).message });
      throw e;
    } finally {
      this.creating.delete(id);
    }
  }

  /** After each write: trim the cache, and start retention once the count passes its bound. */
  private settled(): void {
    this.nothingToPrune = false;
    this.cache.trim();
    if (this.overBound() && !this.pruning) setImmediate(() => this.prune());
  }

  /**
   * One step of retention: the oldest terminal tasks past the count, then those past the age, at
   * most PRUNE_BATCH; repeats on the next turn while there is more. A task with a write in flight
   * stays; a task in progress is never selected.
   */
  private prune(): number {
    if (this.closed || this.pruning) return 0;
    const excess = this.stored - this.maxStored;
    const overBytes = this.bytes.total > this.maxBytes;
    let ids =
      excess > 0
        ? this.index.oldestTerminal(Math.min(excess, PRUNE_BATCH))
        : overBytes
          ? this.pastBytes(this.index.oldestTerminal(PRUNE_BATCH))
          : this.index.oldestTerminal(PRUNE_BATCH, this.now() - this.maxAgeMs);
    if ((excess > 0 || overBytes) && !ids.length) this.nothingToPrune = true;
    ids = ids.filter((id) => !this.writes.has(id));
    if (!ids.length) return 0;
    this.pruning = true;
    this.index.remove(ids);
    this.stored -= ids.length;
    for (const id of ids) {
      const rec = this.cache.peek(id);
      if (rec) this.onDisk.delete(rec); // saved again later, it is a new file
      this.cache.delete(id);
      this.bytes.delete(id);
      this.deleting.add(id);
    }
    this.pruned = Promise.all(
      ids.map((id) =>
        unlink(taskFilePath(this.dir, id)).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT')
            this.log('warn', 'task file not removed', { task: id, error: e.message });
        }),
      ),
    ).then(() => {
      for (const id of ids) this.deleting.delete(id);
      this.pruning = false;
      if (ids.length === PRUNE_BATCH || this.overBound()) setImmediate(() => this.prune());
    });
    return ids.length;
  }

  private overBound(): boolean {
    return this.stored > this.maxStored || this.bytes.total > this.maxBytes;
  }

  /** Of the oldest terminal tasks `ids`, those whose files bring the store back under its byte bound. */
  private pastBytes(ids: string[]): string[] {
    let excess = this.bytes.total - this.maxBytes;
    const out: string[] = [];
    for (const id of ids) {
      if (excess <= 0) break;
      out.push(id);
      excess -= this.bytes.of(id);
    }
    return out;
  }
}
