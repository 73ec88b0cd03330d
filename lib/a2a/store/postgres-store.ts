/**
 * @module lib/a2a/store/postgres-store — the task store on PostgreSQL (through Bun's built-in client), shared by
 * every process of a node: one row per task keyed by (node, id), a version column for optimistic
 * concurrency, a lease naming the process that runs the task's turn, and LISTEN/NOTIFY carrying
 * (node, id, version) so a stream on one process gets the events another produced. See
 * docs/scale-out.md for the model.
 */

import { SQL } from 'bun';
import { isA2AError, type A2AError } from '../errors.ts';
import type { ListTasksPage, ListTasksQuery, PushConfig, TaskEvent } from '../types.ts';
import { LIMITS, utf8Bytes } from '../../limits.ts';
import type { Log } from '../../log.ts';
import { RecordCache } from './record-cache.ts';
import { WriteQueue } from './write-queue.ts';
import { listTasks } from './postgres/list.ts';
import { pruneTasks } from './postgres/retention.ts';
import { countTasks, TaskCount, TERMINAL } from './postgres/task-count.ts';
import { CHANNEL, dropOldTables, migrate, toRecord, type Row } from './postgres/schema.ts';
import {
  heartbeat,
  orphanedTasks,
  readTask,
  renewLeases,
  updateTaskAt,
  type Writer,
} from './postgres/statements.ts';
import { InsertBatch } from './postgres/insert-batch.ts';
import { updateInTransaction, updatePushInTransaction } from './postgres/transactions.ts';
import {
  isTaskId,
  type RemoteChange,
  type TaskCluster,
  type TaskRecord,
  type TaskStore,
  type TurnState,
} from './task-store.ts';

export interface PostgresTaskStoreOptions {
  url: string; // postgres://…
  /** The node whose tasks these are: rows of other nodes in the same tables are never seen. */
  node: string;
  log: Log;
  /** Records kept in memory, their total JSON size, a `ListTasks` page's JSON (defaults in LIMITS). */
  cacheSize?: number;
  cacheBytes?: number;
  listPageBytes?: number;
  /** How long a turn's lease and a stream's watch last without renewal (default 15 s). */
  leaseMs?: number;
  maxConnections?: number; // in the pool (default 10)
  /** Retention: tasks kept at most, their stored bytes, the oldest terminal one's age in hours (LIMITS). */
  maxStored?: number;
  maxBytes?: number;
  maxAgeHours?: number;
}

/** What the task's next write stores: the newest copy of the record. */
interface NextWrite {
  rec: TaskRecord;
}

export class PostgresTaskStore implements TaskStore, TaskCluster {
  readonly process = crypto.randomUUID();
  readonly cluster: TaskCluster = this;
  private readonly sql: SQL;
  private readonly node: string;
  /** This process as the writer of the node's rows. */
  private readonly writer: Writer;
  /** New tasks' first writes, one INSERT per event-loop turn. */
  private readonly inserts: InsertBatch;
  private readonly log: Log;
  private readonly leaseMs: number;
  private readonly writes = new WriteQueue(() => this.cache.trim());
  private readonly next = new Map<string, NextWrite>();
  private readonly cache: RecordCache<TaskRecord>;
  /** Tasks whose turn runs here (counted per turn), and tasks streamed here (counted per stream). */
  private readonly held = new Map<string, number>();
  private readonly watched = new Map<string, number>();
  /** The version this process last saw of each held or watched task. */
  private readonly known = new Map<string, number>();
  /** One fetch at a time per task, so its changes reach the engine in order. */
  private readonly fetches = new Map<string, Promise<void>>();
  private handler: (id: string, change: RemoteChange) => void = () => {};
  private orphanHandler: ((ids: string[]) => void) | undefined;
  private readonly ready: Promise<void>;
  private readonly opened: Promise<void>;
  private listening: Promise<{ unlisten(): Promise<void> }> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  /** True once the tables an earlier schema wrote are dropped. */
  private oldTablesGone = false;
  /** False after a heartbeat failed, until one succeeds. */
  private reachable = true;
  private readonly maxStored: number;
  private readonly maxAgeMs: number;
  private readonly listPageBytes: number;
  private readonly tasks = new TaskCount(() => this.maxStored);
  private retaining: Promise<number> | undefined;

  constructor(opts: PostgresTaskStoreOptions) {
    this.sql = new SQL(opts.url, { max: opts.maxConnections ?? 10 });
    this.node = opts.node;
    this.writer = { node: opts.node, process: this.process };
    this.inserts = new InsertBatch(this.sql, this.writer);
    this.log = opts.log;
    this.leaseMs = opts.leaseMs ?? 15_000;
    this.maxStored = opts.maxStored ?? LIMITS.taskMaxStored;
    this.maxAgeMs = (opts.maxAgeHours ?? LIMITS.taskMaxAgeHours) * 3_600_000;
    this.tasks.maxBytes = opts.maxBytes ?? LIMITS.taskMaxBytes;
    this.listPageBytes = opts.listPageBytes ?? LIMITS.taskListPageBytes;
    this.cache = new RecordCache(
      opts.cacheSize ?? LIMITS.taskCacheEntries,
      opts.cacheBytes ?? LIMITS.taskCacheBytes,
      (id) => this.writes.has(id),
    );
    this.ready = migrate(this.sql).then((gone) => {
      this.oldTablesGone = gone;
      return this.tasks.start(this.sql, this.node);
    });
    this.opened = this.ready.then(() => this.listen());
    this.opened.catch((e) =>
      this.log('error', 'task database unavailable', { error: (e as Error).message }),
    );
  }

  /** Resolves once the tables exist and this process listens for other processes' changes. */
  async open(): Promise<void> {
    await this.opened;
  }

  private async listen(): Promise<void> {
    await this.heartbeat();
    this.listening = this.sql.listen(
      CHANNEL,
      (payload) => this.notified(payload),
      () => this.resync(),
    );
    await this.listening;
    let beats = 0;
    this.timer = setInterval(
      () => {
        void this.renew();
        // Once a lease: look for tasks a gone process left running.
        if (++beats % 3 === 0) void this.findOrphans();
        // About once a minute: retention (and after every 1 % of the bound inserted, below).
        if (beats % Math.max(1, Math.round(60_000 / Math.max(50, this.leaseMs / 3))) === 0)
          this.retainSoon();
      },
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    this.timer.unref?.();
    void this.findOrphans();
  }

  /** This process is alive for one more lease (the others read it to tell whose tasks are orphaned). */
  private heartbeat(): Promise<void> {
    return heartbeat(this.sql, this.writer, this.leaseMs);
  }

  private async findOrphans(): Promise<void> {
    if (this.closed || !this.orphanHandler) return;
    try {
      const ids = await orphanedTasks(this.sql, this.writer);
      if (ids.length) this.orphanHandler(ids);
    } catch (e) {
      this.log('warn', 'looking for orphaned tasks failed', { error: (e as Error).message });
    }
  }

  // ---- TaskStore ----

  async get(id: string): Promise<TaskRecord | undefined> {
    if (!isTaskId(id)) return undefined;
    await this.ready;
    const hit = this.cache.peek(id);
    // A record with a write of ours in flight is newer here than in the database.
    if (hit && this.writes.has(id)) return this.touch(id, hit);
    const cached = hit?.version ?? -1;
    const [row] = await this.sql<Row[]>`
      SELECT version, CASE WHEN version = ${cached} THEN NULL ELSE task END AS task, push, creator,
        CASE WHEN version = ${cached} THEN NULL ELSE events END AS events
      FROM lume_a2a_tasks WHERE node = ${this.node} AND id = ${id}`;
    if (!row) return undefined;
    if (row.task === null && hit) {
      hit.push = JSON.parse(row.push) as PushConfig[];
      return this.touch(id, hit);
    }
    const rec = toRecord(row);
    if (rec) this.cache.set(rec, utf8Bytes(row.task!));
    return rec;
  }

  save(rec: TaskRecord): Promise<void> {
    const id = rec.task.id;
    if (!isTaskId(id))
      return Promise.reject(new Error(`refusing to store task with id ${JSON.stringify(id)}`));
    if (this.closed) return Promise.reject(new Error('the task store is closed'));
    if (rec.version === undefined) this.tasks.saving(id);
    let next = this.next.get(id);
    if (!next) this.next.set(id, (next = { rec }));
    next.rec = rec;
    // The write takes what is pending when it starts; changes made while it waits join it.
    const written = this.writes.enqueue(id, () => {
      const { rec: latest } = this.next.get(id)!;
      this.next.delete(id);
      return this.write(id, latest);
    });
    // After the write is queued, so that trimming a full cache cannot evict this record before it is written.
    this.cache.set(rec);
    return written;
  }

  async list(q: ListTasksQuery, creator: string | null): Promise<ListTasksPage | A2AError> {
    await this.ready;
    return listTasks(this.sql, this.node, q, creator, this.listPageBytes);
  }

  get isOpen(): boolean {
    return !this.closed && this.reachable;
  }

  get cached(): { entries: number; bytes: number } {
    return this.cache.stats;
  }

  async count(): Promise<number> {
    await this.ready;
    return (await countTasks(this.sql, this.node)).n;
  }

  hasRoom(pending: () => number): boolean | Promise<boolean> {
    return this.tasks.room(pending, this.retaining, () =>
      this.closed ? undefined : this.retain(),
    );
  }

  flush(): Promise<void> {
    return this.writes.flush();
  }

  /** Retention for this node's rows; one run at a time per process (several processes may run it). */
  retain(): Promise<number> {
    // After the run under way, if any: rows it did not see (inserted since) count in this one.
    const run = (this.retaining ?? Promise.resolve(0)).catch(() => 0).then(() => this.prune());
    this.retaining = run;
    void run
      .finally(() => {
        if (this.retaining === run) this.retaining = undefined;
      })
      .catch(() => {});
    return run;
  }

  /** Retention on its own (a timer, inserts): skipped while a run is under way. */
  private retainSoon(): void {
    if (!this.retaining && !this.closed) void this.retain().catch(() => {});
  }

  private async prune(): Promise<number> {
    await this.ready;
    return this.tasks.recount(() =>
      pruneTasks(this.sql, {
        node: this.node,
        maxStored: this.maxStored,
        maxBytes: this.tasks.maxBytes,
        maxAgeMs: this.maxAgeMs,
        closed: () => this.closed,
        deleted: (id) => this.cache.delete(id),
      }),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    clearInterval(this.timer);
    // Gone at once: the other processes take over what this one left running.
    await this.sql`DELETE FROM lume_a2a_processes WHERE process = ${this.process}`.catch(() => {});
    const listening = await this.listening?.catch(() => undefined);
    await listening?.unlisten().catch(() => {});
    await this.sql.close();
  }

  // ---- TaskCluster ----

  onChange(handler: (id: string, change: RemoteChange) => void): void {
    this.handler = handler;
  }

  onOrphans(handler: (ids: string[]) => void): void {
    this.orphanHandler = handler;
  }

  hold(id: string): void {
    this.held.set(id, (this.held.get(id) ?? 0) + 1);
  }

  release(id: string): void {
    const n = (this.held.get(id) ?? 0) - 1;
    if (n > 0) this.held.set(id, n);
    else {
      this.held.delete(id);
      if (!this.watched.has(id)) this.known.delete(id);
    }
  }

  async watch(id: string): Promise<TaskRecord | undefined> {
    if (!isTaskId(id)) return undefined;
    await this.ready;
    this.watched.set(id, (this.watched.get(id) ?? 0) + 1);
    await this.writes.tail(id); // our own pending writes go first, so the read is current
    // Registering and reading in one statement: any later write sees the watch and notifies.
    const [row] = await this.sql<Row[]>`
      UPDATE lume_a2a_tasks SET watched_until = greatest(watched_until, now() + ${this.leaseMs} * interval '1 millisecond')
      WHERE node = ${this.node} AND id = ${id} RETURNING version, task, push, creator, events`;
    const rec = row && toRecord(row);
    if (!rec) {
      this.unwatch(id);
      return undefined;
    }
    this.known.set(id, Math.max(this.known.get(id) ?? 0, rec.version!));
    this.cache.set(rec, utf8Bytes(row!.task!));
    return rec;
  }

  unwatch(id: string): void {
    const n = (this.watched.get(id) ?? 0) - 1;
    if (n > 0) this.watched.set(id, n);
    else {
      this.watched.delete(id);
      if (!this.held.has(id)) this.known.delete(id);
    }
  }

  async update(
    id: string,
    change: (rec: TaskRecord, turn: TurnState) => TaskEvent[] | A2AError | null,
    opts: { claim?: boolean } = {},
  ): Promise<{ rec: TaskRecord; events: TaskEvent[] } | A2AError | undefined> {
    if (!isTaskId(id)) return undefined;
    await this.ready;
    await this.writes.tail(id); // our own pending writes go first
    const lease = opts.claim ? this.leaseMs : null;
    const out = await updateInTransaction(this.sql, this.writer, id, change, lease);
    if (out && !isA2AError(out)) {
      this.cache.set(out.rec);
      if (this.known.has(id) || opts.claim) this.known.set(id, out.rec.version!);
    }
    return out;
  }

  async updatePush(
    id: string,
    change: (push: PushConfig[]) => PushConfig[] | A2AError,
  ): Promise<PushConfig[] | A2AError | undefined> {
    if (!isTaskId(id)) return undefined;
    await this.ready;
    const out = await updatePushInTransaction(this.sql, this.writer, id, change);
    const hit = this.cache.peek(id);
    if (hit && Array.isArray(out)) hit.push = out;
    return out;
  }

  // ---- internals ----

  /** One write of a task: an insert the first time, later a version-guarded update. */
  private async write(id: string, rec: TaskRecord): Promise<void> {
    const t = rec.task;
    const body = JSON.stringify(t);
    this.cache.setSize(id, utf8Bytes(body));
    const lease = this.held.has(id) && !TERMINAL.has(t.status.state) ? this.leaseMs : null;
    try {
      if (rec.version === undefined) {
        const insert = this.inserts.add(id, rec, body, lease);
        const due = await this.tasks.inserting(id, insert, utf8Bytes(body));
        rec.version = 1;
        if (due) void this.retain().catch(() => {});
        if (this.held.has(id) || this.watched.has(id)) this.known.set(id, 1);
        return;
      }
      const expected = rec.version;
      const version = await updateTaskAt(this.sql, this.writer, id, rec, body, expected, lease);
      if (version !== undefined) {
        rec.version = version;
        if (this.known.has(id)) this.known.set(id, rec.version);
        if (this.tasks.finishedOver(t.status.state)) this.retainSoon();
        return;
      }
      // Another process changed the task since we read it: what it stored stands (a cancel, or a
      // turn that took over an expired lease), and this process adopts it.
      this.log('info', 'task changed by another process', { task: id, expected });
      await this.fetch(id, expected);
    } catch (e) {
      this.log('error', 'task write failed', { task: id, error: (e as Error).message });
      throw e;
    }
  }

  /** A notification: another process changed a task; if this one holds or watches it, read the row. */
  private notified(payload: string): void {
    const [id, version, origin, ...rest] = payload.split(' ');
    if (origin === this.process || rest.join(' ') !== this.node || !id) return;
    if (!this.held.has(id) && !this.watched.has(id)) return;
    if (Number(version) < (this.known.get(id) ?? 0)) return;
    void this.fetch(id);
  }

  /** After the listening connection came back: anything may have changed meanwhile. */
  private resync(): void {
    for (const id of new Set([...this.held.keys(), ...this.watched.keys()])) void this.fetch(id);
  }

  /**
   * Reads a task's row and the events after version `since` (default: the one this process
   * knew), and hands the change to the engine, in order per task.
   */
  private fetch(id: string, since?: number): Promise<void> {
    const run = (this.fetches.get(id) ?? Promise.resolve())
      .then(async () => {
        const hit = this.cache.peek(id);
        const after = since ?? this.known.get(id) ?? hit?.version ?? 0;
        const row = await readTask(this.sql, this.node, id);
        const rec = row && toRecord(row);
        if (!rec) return;
        const version = rec.version!;
        if (this.held.has(id) || this.watched.has(id))
          this.known.set(id, Math.max(version, this.known.get(id) ?? 0));
        // Only push configs moved, or the row is our own write whose answer is still on its way.
        if (version <= after || row!.writer === this.process) {
          if (hit) hit.push = rec.push;
          this.handler(id, { push: rec.push, version });
          return;
        }
        // The events since the known copy come from the task's stored log (the engine's part).
        this.cache.set(rec, utf8Bytes(row!.task!));
        this.handler(id, {
          task: rec.task,
          push: rec.push,
          version,
          ...(rec.events ? { log: rec.events } : {}),
        });
      })
      .catch((e) =>
        this.log('warn', 'reading a task changed elsewhere failed', {
          task: id,
          error: (e as Error).message,
        }),
      );
    this.fetches.set(id, run);
    run.finally(() => {
      if (this.fetches.get(id) === run) this.fetches.delete(id);
    });
    return run;
  }

  /** Renews the leases of turns running here and the watches of streams open here. */
  private async renew(): Promise<void> {
    if (this.closed) return;
    try {
      const interval = this.leaseMs;
      await this.heartbeat().then(
        () => (this.reachable = true),
        (e) => {
          this.reachable = false;
          throw e;
        },
      );
      await renewLeases(
        this.sql,
        this.writer,
        interval,
        [...this.held.keys()],
        [...this.watched.keys()],
      );
      // An earlier schema's tables go once its last live process has (lib/a2a/store/postgres/schema.ts);
      // never in the way of the renewals above.
      if (!this.oldTablesGone)
        this.oldTablesGone = await dropOldTables(this.sql).catch(() => false);
    } catch (e) {
      this.log('warn', 'renewing task leases failed', { error: (e as Error).message });
    }
  }

  /** Makes a cached record the most recently used and returns it. */
  private touch(id: string, rec: TaskRecord): TaskRecord {
    this.cache.get(id);
    return rec;
  }
}
