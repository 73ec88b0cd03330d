/**
 * @module lib/a2a/task-store — the task store interface the engine writes through, and its embedded
 * implementation, the JSON-file store: one file per task under `<dir>/<id>.json`, written
 * atomically (lib/atomic-file.ts), an in-memory index for listing, and a cache bounded by
 * entries and by bytes (a record's size is its stored JSON). Task ids are server-made UUIDs and
 * are checked before any path is formed. The PostgreSQL implementation, which several processes
 * of one node share, is lib/a2a/task-store-postgres.ts.
 */

import { mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { a2aError, type A2AError } from './errors.ts';
import type {
  ListTasksPage,
  ListTasksQuery,
  PushConfig,
  Task,
  TaskEvent,
  TaskState,
} from './types.ts';
import { withHistoryLength } from './types.ts';
import { writeFileAtomic } from '../atomic-file.ts';
import { RecordCache } from './record-cache.ts';
import { WriteQueue } from './write-queue.ts';
import { LIMITS, utf8Bytes } from '../limits.ts';
import type { Log } from '../log.ts';

const FORMAT = 'lume-a2a.task/1';
const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const STATES: ReadonlySet<string> = new Set([
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
]);

/** True only for ids this server could have made; anything else never reaches the file system. */
export function isTaskId(id: unknown): id is string {
  return typeof id === 'string' && TASK_ID.test(id);
}

export function newTaskId(): string {
  return crypto.randomUUID();
}

/** What the store keeps per task: the task and its webhook registrations. */
export interface TaskRecord {
  task: Task;
  push: PushConfig[];
  /** The stored version this record was read or written as (shared stores only). */
  version?: number;
  /**
   * The owner key of the principal that created the task (lib/auth/principal.ts `ownerKey`); only
   * that principal sees it. Records written before creators were kept have none: `anonymous`.
   */
  creator?: string;
}

/** Who a task belongs to: its creator, `anonymous` for records from before creators were kept. */
export const creatorOf = (rec: TaskRecord): string => rec.creator ?? 'anonymous';

/** A value, or a promise of it: the file store answers at once, a database store later. */
export type MaybePromise<T> = T | Promise<T>;

/** Where the engine keeps tasks. Two implementations: JSON files (below) and PostgreSQL. */
export interface TaskStore {
  /** The record for an id, or undefined when the id is malformed, unknown or unreadable. */
  get(id: string): MaybePromise<TaskRecord | undefined>;
  /**
   * Records a new or changed task. Writes to one task are serialised and coalesced; the promise
   * resolves once a write that includes this change is durable. `event` is the change itself,
   * for streams on other processes of the node (shared stores).
   */
  save(rec: TaskRecord, event?: TaskEvent): Promise<void>;
  /**
   * One page of the tasks `creator` (an owner key) made, newest status first; `null` lists every
   * creator's, for the process's own housekeeping (crash recovery), never for a client.
   */
  list(q: ListTasksQuery, creator: string | null): MaybePromise<ListTasksPage | A2AError>;
  /** How many tasks the store holds. */
  count(): MaybePromise<number>;
  /** Resolves when every write started so far has finished. */
  flush(): Promise<void>;
  /** Finishes the writes in flight and releases what the store holds open; later writes are refused. */
  close(): Promise<void>;
  /** False once closed (or, for a database, while it cannot be reached): readiness reports it. */
  readonly isOpen: boolean;
  /** What the in-memory cache holds now: records and their stored bytes. */
  readonly cached: { entries: number; bytes: number };
  /** Present when several processes share the store (lib/a2a/task-store-postgres.ts). */
  readonly cluster?: TaskCluster;
}

/** A change another process made to a task this process has live. */
export interface RemoteChange {
  /** The stored task, when its version moved past what this process knew. */
  task?: Task;
  /** The stored push configs. */
  push: PushConfig[];
  version: number;
  /** The events the change carried, in order; undefined when some were missed (then the reader rebuilds them). */
  events?: TaskEvent[];
}

/** What the row says of a task's turn, as `TaskCluster.update` reads it under the lock. */
export interface TurnState {
  /** Another live process runs a turn on the task (its lease has not run out). */
  busyElsewhere: boolean;
  /** The task is `submitted` or `working` and the process that owned it is gone. */
  orphaned: boolean;
}

/** What a shared store offers the engine so that several processes run one node's tasks. */
export interface TaskCluster {
  /** This process's id in the cluster. */
  readonly process: string;
  /** Receives changes other processes made to tasks this process holds or watches. */
  onChange(handler: (id: string, change: RemoteChange) => void): void;
  /** An agent turn of this process runs the task: its lease is renewed until `release`. */
  hold(id: string): void;
  release(id: string): void;
  /** Registers for the task's events from other processes and reads it, in one step. */
  watch(id: string): Promise<TaskRecord | undefined>;
  unwatch(id: string): void;
  /**
   * Read-modify-write of a task under the database's row lock. `change` gets the stored record
   * and what the row says of its turn, mutates the record and returns the events it made (an
   * error, or null, writes nothing). `claim` makes this process the task's owner, with a lease.
   * Undefined when the task does not exist (or `change` returned null).
   */
  update(
    id: string,
    change: (rec: TaskRecord, turn: TurnState) => TaskEvent[] | A2AError | null,
    opts?: { claim?: boolean },
  ): Promise<{ rec: TaskRecord; events: TaskEvent[] } | A2AError | undefined>;
  /**
   * Receives, now and then, ids of tasks left `submitted` or `working` by a process of the node
   * that is gone (it stopped, or missed its heartbeats for a lease).
   */
  onOrphans(handler: (ids: string[]) => void): void;
  /** Read-modify-write of a task's push configs under the row lock; undefined when the task does not exist. */
  updatePush(
    id: string,
    change: (push: PushConfig[]) => PushConfig[] | A2AError,
  ): Promise<PushConfig[] | A2AError | undefined>;
}

interface IndexEntry {
  creator: string;
  contextId: string;
  state: TaskState;
  /** Status timestamp in ms, the ListTasks sort key. */
  ts: number;
}

export interface FileTaskStoreOptions {
  dir: string;
  log: Log;
  /** Full records kept in memory; older ones are read back from their files (default LIMITS.taskCacheEntries). */
  cacheSize?: number;
  /** Total stored size of the records kept in memory (default LIMITS.taskCacheBytes). */
  cacheBytes?: number;
}

export class FileTaskStore implements TaskStore {
  private readonly index = new Map<string, IndexEntry>();
  private readonly writes = new WriteQueue(() => this.cache.trim());
  private readonly cache: RecordCache<TaskRecord>;
  private closed = false;
  /** Ids whose file exists; their writes replace the file instead of creating it. */
  private readonly onDisk = new Set<string>();

  private constructor(
    private readonly dir: string,
    private readonly log: Log,
    cacheSize: number,
    cacheBytes: number,
  ) {
    this.cache = new RecordCache(cacheSize, cacheBytes, (id) => this.writes.has(id));
  }

  /** Opens (creating if needed) a store directory and indexes the tasks already in it. */
  static open(opts: FileTaskStoreOptions): FileTaskStore {
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
    const store = new FileTaskStore(
      opts.dir,
      opts.log,
      opts.cacheSize ?? LIMITS.taskCacheEntries,
      opts.cacheBytes ?? LIMITS.taskCacheBytes,
    );
    store.scan();
    return store;
  }

  count(): number {
    return this.index.size;
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
    if (!isTaskId(id) || !this.index.has(id)) return undefined;
    const hit = this.cache.get(id);
    if (hit) return hit;
    const read = this.readFile(id);
    if (!read) return undefined;
    this.cache.set(read.rec, read.bytes);
    return read.rec;
  }

  /**
   * Records a new or changed task and writes it to disk. Writes to one task are serialised and
   * coalesced: the returned promise resolves once a write that includes this change is renamed
   * into place.
   * @throws Error (as a rejected promise) when the file cannot be written.
   */
  save(rec: TaskRecord): Promise<void> {
    const id = rec.task.id;
    if (!isTaskId(id))
      return Promise.reject(new Error(`refusing to store task with id ${JSON.stringify(id)}`));
    if (this.closed) return Promise.reject(new Error('the task store is closed'));
    this.index.set(id, {
      creator: creatorOf(rec),
      contextId: rec.task.contextId,
      state: rec.task.status.state,
      ts: Date.parse(rec.task.status.timestamp) || 0,
    });
    const written = this.writes.enqueue(id, () => this.writeFile(id));
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
    this.closed = true;
  }

  list(q: ListTasksQuery, creator: string | null): ListTasksPage | A2AError {
    let after: [number, string] | undefined;
    if (q.pageToken) {
      after = decodeToken(q.pageToken);
      if (!after)
        return a2aError(
          'INVALID_PARAMS',
          'pageToken is not a token this server issued',
          'params.pageToken',
        );
    }
    const since = q.statusTimestampAfter ? Date.parse(q.statusTimestampAfter) : undefined;
    const matches: [string, IndexEntry][] = [];
    for (const entry of this.index) {
      const e = entry[1];
      if (creator !== null && e.creator !== creator) continue;
      if (q.contextId !== undefined && e.contextId !== q.contextId) continue;
      if (q.status !== undefined && e.state !== q.status) continue;
      if (since !== undefined && e.ts < since) continue;
      matches.push(entry);
    }
    // Newest status first; the id breaks ties so the cursor is total.
    matches.sort((a, b) => b[1].ts - a[1].ts || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0));
    let start = 0;
    if (after) {
      const [ts, id] = after;
      start = matches.findIndex(([mid, e]) => e.ts < ts || (e.ts === ts && mid < id));
      if (start < 0) start = matches.length;
    }
    const slice = matches.slice(start, start + q.pageSize);
    const tasks: Task[] = [];
    for (const [id] of slice) {
      const rec = this.get(id);
      if (rec) tasks.push(withHistoryLength(rec.task, q.historyLength));
    }
    const last = slice[slice.length - 1];
    const more = start + slice.length < matches.length;
    return {
      tasks,
      nextPageToken: more && last ? encodeToken(last[1].ts, last[0]) : '',
      pageSize: q.pageSize,
      totalSize: matches.length,
    };
  }

  private async writeFile(id: string): Promise<void> {
    const rec = this.cache.peek(id);
    if (!rec) return;
    const body = JSON.stringify({
      format: FORMAT,
      task: rec.task,
      push: rec.push,
      ...(rec.creator ? { creator: rec.creator } : {}),
    });
    this.cache.setSize(id, utf8Bytes(body));
    const target = join(this.dir, `${id}.json`);
    try {
      // First write of a new task: exclusive create, no rename. The caller is answered only after
      // it completes, so a crash mid-write leaves an unacknowledged, unparsable file that the
      // next start skips; nothing a client was told exists can be torn. Later writes (or a first
      // one that finds the file there) replace it through a temporary file.
      const created =
        !this.onDisk.has(id) &&
        (await writeFileAtomic(target, body, { ifAbsent: true, direct: true }));
      if (!created) await writeFileAtomic(target, body);
      this.onDisk.add(id);
    } catch (e) {
      this.log('error', 'task write failed', { task: id, error: (e as Error).message });
      throw e;
    }
  }

  private readFile(id: string): { rec: TaskRecord; bytes: number } | undefined {
    try {
      const text = readFileSync(join(this.dir, `${id}.json`), 'utf8');
      const rec = parseRecord(text, id);
      return rec && { rec, bytes: utf8Bytes(text) };
    } catch (e) {
      this.log('warn', 'task file unreadable', { task: id, error: (e as Error).message });
      return undefined;
    }
  }

  /** Builds the index from the files on disk; corrupt or foreign files are skipped with a log line. */
  private scan(): void {
    for (const name of readdirSync(this.dir)) {
      if (name.endsWith('.tmp')) {
        // Left over from a write interrupted by a crash; the previous file is intact.
        try {
          unlinkSync(join(this.dir, name));
        } catch {}
        continue;
      }
      const id = name.endsWith('.json') ? name.slice(0, -5) : '';
      if (!isTaskId(id)) {
        this.log('warn', 'skipping foreign file in task folder', { file: name });
        continue;
      }
      let rec: TaskRecord | undefined;
      try {
        rec = parseRecord(readFileSync(join(this.dir, name), 'utf8'), id);
      } catch (e) {
        this.log('warn', 'skipping corrupt task file', { file: name, error: (e as Error).message });
        continue;
      }
      if (!rec) {
        this.log('warn', 'skipping foreign file in task folder', { file: name });
        continue;
      }
      this.index.set(id, {
        creator: creatorOf(rec),
        contextId: rec.task.contextId,
        state: rec.task.status.state,
        ts: Date.parse(rec.task.status.timestamp) || 0,
      });
      this.onDisk.add(id);
    }
  }
}

/** Parses a task file; undefined when it is JSON but not one of ours. @throws SyntaxError on bad JSON. */
function parseRecord(text: string, id: string): TaskRecord | undefined {
  const doc = JSON.parse(text) as {
    format?: unknown;
    task?: Partial<Task>;
    push?: unknown;
    creator?: unknown;
  };
  const t = doc?.task;
  if (
    doc?.format !== FORMAT ||
    !t ||
    t.id !== id ||
    typeof t.contextId !== 'string' ||
    !t.status ||
    !STATES.has(t.status.state as string) ||
    typeof t.status.timestamp !== 'string' ||
    !Array.isArray(t.history) ||
    !Array.isArray(t.artifacts)
  )
    return undefined;
  return {
    task: t as Task,
    push: Array.isArray(doc.push) ? (doc.push as PushConfig[]) : [],
    ...(typeof doc.creator === 'string' ? { creator: doc.creator } : {}),
  };
}

/** The ListTasks cursor: the last task's status time and id, opaque to clients. */
export function encodeToken(ts: number, id: string): string {
  return Buffer.from(JSON.stringify([ts, id])).toString('base64url');
}

export function decodeToken(token: string): [number, string] | undefined {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && isTaskId(v[1]))
      return [v[0], v[1]];
  } catch {}
  return undefined;
}
