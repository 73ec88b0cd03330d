/**
 * @module lib/a2a/types — the internal A2A model every other module shares. It follows the v1.0
 * ProtoJSON shapes (flat parts, camelCase) with short lowercase states and roles; the wire
 * modules translate it to v1.0 or v0.3 on the way out.
 */

export type Role = 'user' | 'agent';

export type TaskState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'auth-required'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected';

/** Every task state, in the order of the lifecycle (the wire forms name them otherwise). */
export const TASK_STATES: readonly TaskState[] = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
];

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  'completed',
  'failed',
  'canceled',
  'rejected',
]);
const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set(['input-required', 'auth-required']);

/** A stream or blocking call ends on these (A2A task lifecycle and streaming). */
export function isFinalState(state: TaskState): boolean {
  return TERMINAL_STATES.has(state) || INTERRUPTED_STATES.has(state);
}

export type Metadata = Record<string, unknown>;

/** One content item; exactly one of `text`, `raw` (base64), `url`, `data` is set. */
export interface Part {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  mediaType?: string;
  filename?: string;
  metadata?: Metadata;
}

export interface Message {
  messageId: string;
  role: Role;
  parts: Part[];
  contextId?: string;
  taskId?: string;
  metadata?: Metadata;
  extensions?: string[];
  referenceTaskIds?: string[];
}

export interface TaskStatus {
  state: TaskState;
  message?: Message;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
}

export interface Artifact {
  artifactId: string;
  parts: Part[];
  name?: string;
  description?: string;
  metadata?: Metadata;
  extensions?: string[];
}

export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus;
  artifacts: Artifact[];
  history: Message[];
  metadata?: Metadata;
  /**
   * A2A 1.1 (`Task.generation`): 1 when the task is made, +1 for each status change or artifact
   * update, the number its event carries. Absent on a task stored before it existed (reads as 1:
   * `generationOf`) and on one read from a server without it.
   */
  generation?: number;
}

/** A task's generation; a task stored before generations existed counts from 1. */
export function generationOf(task: Readonly<Task>): number {
  return task.generation ?? 1;
}

/** Events a task produces, in the order subscribers see them. */
export type TaskEvent =
  | { kind: 'task'; task: Task }
  | { kind: 'message'; message: Message }
  | {
      kind: 'status';
      taskId: string;
      contextId: string;
      status: TaskStatus;
      final: boolean;
      /** The task's generation after this change (absent when read from a server without it). */
      generation?: number;
    }
  | {
      kind: 'artifact';
      taskId: string;
      contextId: string;
      artifact: Artifact;
      append: boolean;
      lastChunk: boolean;
      generation?: number;
    };

/** A webhook registration for one task. `version` is the protocol generation it was made in. */
export interface PushConfig {
  id: string;
  taskId: string;
  url: string;
  token?: string;
  /** `Authorization: <scheme> <credentials>` on every delivery. */
  authentication?: { scheme: string; credentials?: string };
  version: ProtocolVersion;
  /**
   * Made by an A2A 1.1 caller (`A2A-Version: 1.1`): its deliveries carry `generation`, so the
   * receiver sees a gap. A 1.0 config's deliveries keep the 1.0 form exactly.
   */
  generation?: boolean;
}

export type ProtocolVersion = '1.0' | '0.3';

export interface SendConfiguration {
  /** false = blocking (the default): answer at a terminal or interrupted state. */
  returnImmediately: boolean;
  historyLength?: number;
  acceptedOutputModes?: string[];
  pushConfig?: Omit<PushConfig, 'taskId' | 'id' | 'version'> & { id?: string };
  /** A2A 1.1: a continuation is refused (TASK_GENERATION_MISMATCH) unless the task is at this generation. */
  ifGenerationMatch?: number;
}

export interface SendParams {
  message: Message;
  configuration: SendConfiguration;
  metadata?: Metadata;
}

export interface ListTasksQuery {
  contextId?: string;
  status?: TaskState;
  statusTimestampAfter?: string;
  pageSize: number;
  pageToken?: string;
  historyLength?: number;
  includeArtifacts: boolean;
}

export interface ListTasksPage {
  tasks: Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/** Trims history as `historyLength` asks: undefined = all, 0 = none, n = the n most recent. */
export function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || historyLength >= task.history.length) return task;
  return { ...task, history: historyLength <= 0 ? [] : task.history.slice(-historyLength) };
}

export function nowIso(now: () => number = Date.now): string {
  return new Date(now()).toISOString();
}
