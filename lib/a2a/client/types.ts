/**
 * @module lib/a2a/client/types — the A2A client's public shapes: its options, what a message to
 * send may be, the options of each call, a stream's items and the client's interface.
 */

import type { CallFailure, Result } from '../../errors/result.ts';
import type {
  ListTasksPage,
  Message,
  Metadata,
  Part,
  ProtocolVersion,
  Task,
  TaskEvent,
  TaskState,
} from '../types.ts';

/** How a dropped stream is resumed: tries in a row without an event, and the first wait (doubling, at most 5 s). */
export interface ResumeOptions {
  attempts?: number;
  backoffMs?: number;
}

export interface A2AClientOptions {
  /** The node's base URL (`http://host:port`); JSON-RPC goes to `<url>/a2a` unless `endpoint` says otherwise. */
  url: string;
  /** The JSON-RPC endpoint, when it is not `<url>/a2a` (read it from the card's `url`). */
  endpoint?: string;
  /** The wire form spoken (default 1.0). */
  version?: ProtocolVersion;
  /** Extra headers on every request (e.g. `traceparent`); never logged. */
  headers?: Record<string, string>;
  /** Per-call limit for non-streaming calls (default 30 s). */
  timeoutMs?: number;
  /** Largest answer or stream frame read, in bytes (default 8 MiB). */
  maxAnswerBytes?: number;
  fetch?: typeof fetch;
}

/** What to send: a text, or parts with an optional conversation and task to continue. */
export type MessageInput =
  | string
  | {
      text?: string;
      data?: unknown;
      parts?: Part[];
      contextId?: string;
      taskId?: string;
      messageId?: string;
      metadata?: Metadata;
    };

export interface SendOptions {
  /** Answer at once with the task as it is, instead of waiting for a final state. */
  returnImmediately?: boolean;
  historyLength?: number;
  timeoutMs?: number;
}

export interface ListOptions {
  contextId?: string;
  status?: TaskState;
  pageSize?: number;
  pageToken?: string;
  historyLength?: number;
  includeArtifacts?: boolean;
}

/** A stream item: an event, or the failure that ended the stream (always the last item). */
export type StreamItem = TaskEvent | { kind: 'error'; error: CallFailure };

export type ClientResult<T> = Result<T, CallFailure>;

/** What `send` answers: the task, or a message when the agent answered without one. */
export type SendAnswer = { task: Task } | { message: Message };

export interface A2AClient {
  readonly version: ProtocolVersion;
  /** The agent card (`/.well-known/agent-card.json`). */
  card(): Promise<ClientResult<Record<string, unknown>>>;
  send(input: MessageInput, opts?: SendOptions): Promise<ClientResult<SendAnswer>>;
  /**
   * Sends and streams the task's events; ends after a final state or with an `error` item. A
   * stream that drops is resumed by itself after the last event seen (`resume`: tries in a row,
   * default 6, and the first wait, default 200 ms, doubling to at most 5 s).
   */
  stream(
    input: MessageInput,
    opts?: { signal?: AbortSignal; resume?: ResumeOptions },
  ): AsyncGenerator<StreamItem>;
  /**
   * Follows a task's events (SubscribeToTask): after `lastGeneration` when given (the events
   * since, or the task first when the node no longer keeps them), else from the task as it is.
   */
  subscribe(
    taskId: string,
    opts?: { lastGeneration?: number; signal?: AbortSignal; resume?: ResumeOptions },
  ): AsyncGenerator<StreamItem>;
  get(taskId: string, opts?: { historyLength?: number }): Promise<ClientResult<Task>>;
  /** ListTasks is an A2A 1.0 method; a 0.3 client answers `VERSION_NOT_SUPPORTED` without a request. */
  list(opts?: ListOptions): Promise<ClientResult<ListTasksPage>>;
  cancel(taskId: string): Promise<ClientResult<Task>>;
  /**
   * Calls one capability by its skill id with a data part `{skill, args}` and answers with the
   * completed task's first data artifact (the node's own error code when it failed with one).
   */
  call(
    skill: string,
    args?: Record<string, unknown>,
    opts?: SendOptions & { contextId?: string },
  ): Promise<ClientResult<unknown> & { taskId?: string }>;
}
