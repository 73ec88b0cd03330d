/**
 * @module lib/a2a/agent — what a node implements to answer A2A messages. The agent receives the message
 * and its task context and reports progress through the context; the core (lib/a2a/engine/engine.ts)
 * does persistence, streaming, push delivery and the protocol.
 */

import type { Principal } from '../auth/principal.ts';
import type { Artifact, Message, Part, ProtocolVersion, Task, TaskState } from './types.ts';

export interface ArtifactInput {
  /** Defaults to a fresh id; reuse an id with `append` to stream chunks into one artifact. */
  artifactId?: string;
  name?: string;
  description?: string;
  parts: Part[];
  metadata?: Record<string, unknown>;
}

/** What an agent may do to a task: report status and artifacts, keep notes in its metadata. */
export interface TaskUpdater {
  /** The task as it stands. */
  readonly task: Readonly<Task>;
  /** Moves the task to `working`, optionally with a progress note. */
  working(note?: string): void;
  /** Adds or extends an artifact. */
  artifact(artifact: ArtifactInput, opts?: { append?: boolean; lastChunk?: boolean }): Artifact;
  complete(note?: string): void;
  fail(reason: string): void;
  /** Sets any state, with an optional agent message. */
  status(state: TaskState, note?: string | Part[]): void;
  /** Merges keys into the task's metadata (stored with the task, shown to clients). */
  setMetadata(values: Record<string, unknown>): void;
}

export interface AgentContext extends TaskUpdater {
  /** The task as it stands (history includes `message`). Not yet stored for a brand-new task. */
  readonly task: Readonly<Task>;
  /** The message that started this turn. */
  readonly message: Message;
  /** The text parts of `message`, joined by newlines. */
  readonly text: string;
  /** The first data part of `message`, if any. */
  readonly data: unknown;
  /** Aborted when a client cancels the task; long work should stop. */
  readonly signal: AbortSignal;
  /** Whether this turn continues an existing task (the client sent its `taskId`). */
  readonly continued: boolean;
  /** The A2A protocol version the client spoke when it sent `message` (`1.0` or `0.3`). */
  readonly version: ProtocolVersion;
  /** Who sent `message` (the task's owner: only its owner may continue a task). */
  readonly caller: Principal;

  reject(reason: string): void;
  /** Pauses the task until the client sends another message with this task's id. */
  requireInput(question: string): void;
  requireAuth(reason: string): void;
  /**
   * Answers with a Message instead of a task. Only for a new task before any other event; on an
   * existing task it completes the task with that message.
   */
  reply(content: string | Part[]): void;
}

export interface Agent {
  /**
   * Why `message` needs an authenticated caller (it would change state or run work), or undefined
   * when anyone the node lets in may send it. Asked before a task is created or continued; an
   * anonymous caller then gets UNAUTHENTICATED and nothing is stored.
   */
  needsPrincipal?(message: Message): string | undefined;
  /**
   * Handles one turn. Returning leaves the task in whatever state the agent set (a task left
   * `working` stays so until it is continued or canceled); throwing fails the task.
   */
  handle(ctx: AgentContext): Promise<void> | void;
  /**
   * Called when a client reads a task that is still submitted or working (GetTask, ListTasks):
   * the agent may advance it, e.g. by asking whoever does the work. Lazy advancement: there is
   * no background poller.
   */
  observe?(task: TaskUpdater): Promise<void> | void;
  /** Called when a client cancels a task, before it is marked canceled (e.g. to stop remote work). */
  cancel?(task: Readonly<Task>): Promise<void> | void;
  /**
   * Called at start for each task a previous process left `submitted` or `working`
   * (lib/a2a/engine/recovery.ts): true keeps it as it is, for `observe` to advance; otherwise (or
   * without this hook) the task is failed, since no turn of this process is running it.
   */
  resumes?(task: Readonly<Task>): boolean;
}
