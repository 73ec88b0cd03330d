/**
 * @module lib/a2a/store/task-store — the task store interface the engine writes through. Task ids are server-made
 * UUIDs and are checked before any path is formed. Two implementations: the task log
 * (lib/a2a/store/log-store.ts, the default) and PostgreSQL, which several processes of one node
 * share (lib/a2a/store/postgres-store.ts).
 */

import { type A2AError, a2aError } from '../errors.ts';
import type { ListTasksPage, ListTasksQuery, PushConfig, Task, TaskEvent } from '../types.ts';
import type { LoggedEvent } from './event-log.ts';

/** Version 7 (made now: time first, then 74 random bits) or version 4 (made before, all random). */
const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** True only for ids this server could have made; anything else never reaches the file system. */
export function isTaskId(id: unknown): id is string {
  return typeof id === 'string' && TASK_ID.test(id);
}

/**
 * A new task id: a UUIDv7, whose leading timestamp makes each new id sort after the last, so the
 * stores' indexes (the task log's SQLite index, PostgreSQL's primary key) append rows
 * instead of writing a random page per task. Its last 64 bits are random (Bun.randomUUIDv7).
 */
export function newTaskId(): string {
  return Bun.randomUUIDv7();
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
  /**
   * The task's newest events, bounded (lib/a2a/store/event-log.ts): stored with the task in the
   * same write, so any process of the node can replay them to a stream that resumes.
   */
  events?: LoggedEvent[];
}

/** Who a task belongs to: its creator, `anonymous` for records from before creators were kept. */
export const creatorOf = (rec: TaskRecord): string => rec.creator ?? 'anonymous';

/**
 * The most tasks a store holds, new tasks refused past it (`TASK_STORE_FULL`): the retention
 * bound plus a headroom of 1 % of it (at least one), room for retention to catch up on terminal
 * tasks while new ones keep coming. Reached only when the tasks in progress (never deleted) fill
 * the store, or retention falls behind by the headroom.
 */
export function hardBound(maxStored: number): number {
  return maxStored + Math.max(1, Math.ceil(maxStored / 100));
}

/** A value, or a promise of it: the task log answers at once, a database store later. */
export type MaybePromise<T> = T | Promise<T>;

/** Where the engine keeps tasks. Two implementations: the task log and PostgreSQL. */
export interface TaskStore {
  /** The record for an id, or undefined when the id is malformed, unknown or unreadable. */
  get(id: string): MaybePromise<TaskRecord | undefined>;
  /**
   * Records a new or changed task. Writes to one task are serialised and coalesced; the promise
   * resolves once a write that includes this change is durable (with the record's event log, which
   * streams on other processes of the node replay).
   */
  save(rec: TaskRecord): Promise<void>;
  /**
   * One page of the tasks `creator` (an owner key) made, newest status first; `null` lists every
   * creator's, for the process's own housekeeping (crash recovery), never for a client.
   */
  list(q: ListTasksQuery, creator: string | null): MaybePromise<ListTasksPage | A2AError>;
  /** How many tasks the store holds. */
  count(): MaybePromise<number>;
  /**
   * True while one more new task fits under the store's hard bound (`hardBound`), counting the
   * tasks stored, those being written and `pending()` more the engine has begun but not yet
   * saved. Answered from counts kept in memory: no query, no file-system scan. At the bound a
   * shared store may first wait for the retention run under way (or start one, at most once a
   * second) and answer from its recount.
   */
  hasRoom(pending: () => number): MaybePromise<boolean>;
  /**
   * Retention: deletes terminal tasks past the store's count bound and then those past its age
   * bound, oldest status first, never a task in progress; resolves with how many it deleted.
   * Both stores also run it on their own (the task log after writes, both once a minute).
   */
  retain(): Promise<number>;
  /** Resolves when every write started so far has finished. */
  flush(): Promise<void>;
  /** Finishes the writes in flight and releases what the store holds open; later writes are refused. */
  close(): Promise<void>;
  /** False once closed (or, for a database, while it cannot be reached): readiness reports it. */
  readonly isOpen: boolean;
  /** What the in-memory cache holds now: records and their stored bytes. */
  readonly cached: { entries: number; bytes: number };
  /** Present when several processes share the store (lib/a2a/store/postgres-store.ts). */
  readonly cluster?: TaskCluster;
}

/** A change another process made to a task this process has live. */
export interface RemoteChange {
  /** The stored task, when its version moved past what this process knew. */
  task?: Task;
  /** The stored push configs. */
  push: PushConfig[];
  version: number;
  /** The task's stored event log (`TaskRecord.events`), read with the task. */
  log?: LoggedEvent[];
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

/** The ListTasks cursor: the last task's status time and id, opaque to clients. */
export function encodeToken(ts: number, id: string): string {
  return Buffer.from(JSON.stringify([ts, id])).toString('base64url');
}

function decodeToken(token: string): [number, string] | undefined {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && isTaskId(v[1]))
      return [v[0], v[1]];
  } catch {}
  return undefined;
}

/** The cursor a ListTasks `pageToken` names (none without one), or the error for a token not issued here. */
export function pageCursor(token: string | undefined): [number, string] | undefined | A2AError {
  if (!token) return undefined;
  return (
    decodeToken(token) ??
    a2aError('INVALID_PARAMS', 'pageToken is not a token this server issued', 'params.pageToken')
  );
}
