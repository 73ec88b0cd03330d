/**
 * @module lib/a2a/engine/task-rules — the task engine's pure rules: which message may continue a
 * task, which media an agent takes, how a status change and an artifact change a task, how a
 * task's history and artifacts stay within their caps, and the refusals the engine answers with.
 * No state, no I/O: every function here is a value in, a value out.
 */

import type { Principal } from '../../auth/principal.ts';
import type { ArtifactInput } from '../agent.ts';
import { a2aError, type A2AError } from '../errors.ts';
import { jsonBytes } from '../../limits.ts';
import { artifactBytes, type EventLogBound, messageBytes } from '../store/event-log.ts';
import {
  TERMINAL_STATES,
  generationOf,
  isFinalState,
  nowIso,
  type Artifact,
  type Message,
  type Part,
  type ProtocolVersion,
  type PushConfig,
  type Task,
  type TaskEvent,
  type TaskState,
} from '../types.ts';

/** What one task may hold. */
export interface TaskLimits {
  /** Messages kept in a task's history; the oldest go first. */
  historyMessages: number;
  /** Bytes of JSON kept in a task's history; the oldest go first, the newest message always stays. */
  historyBytes: number;
  /** Artifacts one task may hold. */
  artifacts: number;
  /** Bytes of JSON a task's artifacts may hold. */
  artifactBytes: number;
  /** Events a task's event log keeps (the oldest go first). */
  eventLogEvents: number;
  /** Bytes of JSON a task's event log keeps (the oldest go first, the newest always stays). */
  eventLogBytes: number;
}

/** The event-log bound of a task's limits. */
export const eventLogBound = (l: TaskLimits): EventLogBound => ({
  events: l.eventLogEvents,
  bytes: l.eventLogBytes,
});

/** A webhook registration as a client sends it: the server gives the id when there is none. */
export type PushConfigInput = Omit<PushConfig, 'id' | 'version'> & { id?: string };

/** A change the agent (or a cancel) reports for a task. */
export type TaskUpdate =
  | { kind: 'status'; state: TaskState; note?: string | Part[] }
  | { kind: 'artifact'; artifact: Artifact; append: boolean; lastChunk: boolean };

export const CANCELED_NOTE = "Canceled at the client's request";
export const ORPHANED_NOTE =
  'The node process running this task stopped; send the request again as a new task';
const MEDIA_ANY = '*/*';

/** The one answer for a task that is missing or not the caller's (its existence does not leak). */
export function taskNotFound(id: string, field: string): A2AError {
  return a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, field);
}

export function notCancelable(id: string, state: TaskState): A2AError {
  return a2aError('TASK_NOT_CANCELABLE', `Task ${id} is ${state} and cannot be canceled`);
}

/** A write the store refused: the change is not stored, and the caller is told so. */
export function notStored(): A2AError {
  return a2aError('INTERNAL_ERROR', 'The task could not be stored');
}

/** The refusal of an action that needs an authenticated caller. */
export function unauthenticated(what: string, caller?: Principal): A2AError {
  // An issuer's user is known; what it lacks is a scope (lib/auth/scopes.ts).
  if (caller?.kind === 'user')
    return a2aError(
      'INSUFFICIENT_SCOPE',
      `${what} needs the scope a2a.write (or a2a.exec), which the access token does not carry`,
    );
  return a2aError(
    'UNAUTHENTICATED',
    `${what} needs an authenticated caller: send a bearer token (Authorization: Bearer …) or sign as a fleet node`,
  );
}

/** The refusal of a push config past a task's count, or undefined when it fits. */
export function pushCountProblem(
  push: readonly PushConfig[],
  cfg: PushConfigInput,
  max: number,
): A2AError | undefined {
  if (push.some((p) => p.id === cfg.id) || push.length < max) return undefined;
  return a2aError('INVALID_PARAMS', `A task holds at most ${max} push configs`, 'id');
}

/**
 * Why a message cannot continue a task, or undefined when it can. `expected` is the send's
 * `ifGenerationMatch` (A2A 1.1): a precondition, so it is checked first.
 */
export function continuationProblem(
  task: Task,
  message: Message,
  expected?: number,
): A2AError | undefined {
  const current = generationOf(task);
  if (expected !== undefined && expected !== current)
    return a2aError(
      'TASK_GENERATION_MISMATCH',
      `Task generation mismatch: expected ${expected} but current generation is ${current}`,
    );
  if (TERMINAL_STATES.has(task.status.state))
    return a2aError(
      'UNSUPPORTED_OPERATION',
      `Task ${task.id} is ${task.status.state}; a terminal task takes no more messages, start a new task`,
    );
  if (message.contextId && message.contextId !== task.contextId)
    return a2aError(
      'INVALID_PARAMS',
      `message.contextId ${message.contextId} does not match the task's contextId ${task.contextId}`,
      'message.contextId',
    );
  return undefined;
}

/** Adds a continuing message to its task's history (the message takes the task's context). */
export function addToHistory(task: Task, message: Message, limits: TaskLimits): void {
  message.contextId = task.contextId;
  task.history.push(message);
  trimHistory(task.history, limits);
}

/** A task's configs with one added (or replaced by id). */
export function withPush(
  push: readonly PushConfig[],
  cfg: PushConfigInput,
  version: ProtocolVersion,
): { push: PushConfig[]; stored: PushConfig } {
  const stored: PushConfig = { ...cfg, id: cfg.id ?? crypto.randomUUID(), version };
  return { push: [...push.filter((p) => p.id !== stored.id), stored], stored };
}

/** Whether two lists of push configs hold the same entries in the same order. */
export function samePush(a: readonly PushConfig[], b: readonly PushConfig[]): boolean {
  return a.length === b.length && a.every((p, i) => p === b[i]);
}

/** Why a message's media or its accepted output modes do not fit the agent, or null when they do. */
export function mediaProblem(
  parts: Part[],
  accepted: string[] | undefined,
  inputModes: readonly string[],
  outputModes: readonly string[],
): A2AError | null {
  for (const [i, p] of parts.entries()) {
    if (p.mediaType && !mediaMatches(p.mediaType, inputModes))
      return a2aError(
        'CONTENT_TYPE_NOT_SUPPORTED',
        `Part ${i} has media type ${p.mediaType}; this agent accepts ${inputModes.join(', ')}`,
        `message.parts[${i}].mediaType`,
      );
  }
  if (
    accepted &&
    !accepted.some(
      (m) => mediaMatches(m, outputModes) || outputModes.some((o) => mediaMatches(o, [m])),
    )
  )
    return a2aError(
      'CONTENT_TYPE_NOT_SUPPORTED',
      `None of the accepted output modes is produced; this agent produces ${outputModes.join(', ')}`,
      'configuration.acceptedOutputModes',
    );
  return null;
}

/** Whether a media type is in a list that may hold `type/*` or `*\/*` wildcards (parameters ignored). */
export function mediaMatches(mediaType: string, allowed: readonly string[]): boolean {
  const bare = mediaType.split(';')[0]!.trim().toLowerCase();
  const [type] = bare.split('/');
  return allowed.some((a) => {
    const m = a.toLowerCase();
    return m === MEDIA_ANY || m === bare || (m.endsWith('/*') && m.slice(0, -2) === type);
  });
}

/** Moves a task to a state (the note, if any, joins its history) and returns the status event. */
export function setStatus(
  task: Task,
  state: TaskState,
  note: string | Part[] | undefined,
  now: () => number,
  limits: TaskLimits,
): TaskEvent {
  const status: Task['status'] = { state, timestamp: nowIso(now) };
  if (note !== undefined) {
    const message: Message = {
      messageId: crypto.randomUUID(),
      role: 'agent',
      parts: typeof note === 'string' ? [{ text: note }] : note,
      contextId: task.contextId,
      taskId: task.id,
    };
    status.message = message;
    task.history.push(message);
    trimHistory(task.history, limits);
  }
  task.status = status;
  return {
    kind: 'status',
    taskId: task.id,
    contextId: task.contextId,
    status,
    final: isFinalState(state),
    generation: nextGeneration(task),
  };
}

/**
 * Counts one change of a task (A2A 1.1 `generation`): every status change and artifact update is
 * one event, and each takes the next number, so a reader sees a gap when it missed one.
 */
export function nextGeneration(task: Task): number {
  task.generation = generationOf(task) + 1;
  return task.generation;
}

/**
 * Whether adding `artifact` keeps the task within its artifact caps, given the stored size of
 * its artifacts so far: the new size when it fits, the reason when it does not.
 */
export function artifactFit(
  task: Task,
  bytesBefore: number,
  existing: number,
  artifact: Artifact,
  append: boolean,
  limits: TaskLimits,
): { bytes: number } | { refused: string } {
  const { artifacts: maxCount, artifactBytes: maxBytes } = limits;
  if (existing < 0 && task.artifacts.length + 1 > maxCount)
    return { refused: `A task holds at most ${maxCount} artifacts` };
  const added = append ? jsonBytes(artifact.parts) : artifactBytes(artifact);
  const removed = existing >= 0 && !append ? jsonBytes(task.artifacts[existing]) : 0;
  const after = bytesBefore + added - removed;
  if (after > maxBytes) return { refused: `A task's artifacts hold at most ${maxBytes} bytes` };
  return { bytes: after };
}

/** Puts an artifact into a task (appended to, replacing or beside one of the same id) and returns its event. */
export function addArtifact(
  task: Task,
  existing: number,
  update: { artifact: Artifact; append: boolean; lastChunk: boolean },
): TaskEvent {
  if (existing >= 0 && update.append) {
    const prev = task.artifacts[existing]!;
    task.artifacts[existing] = { ...prev, parts: [...prev.parts, ...update.artifact.parts] };
  } else if (existing >= 0) task.artifacts[existing] = update.artifact;
  else task.artifacts.push(update.artifact);
  return {
    kind: 'artifact',
    taskId: task.id,
    contextId: task.contextId,
    artifact: update.artifact,
    append: update.append,
    lastChunk: update.lastChunk,
    generation: nextGeneration(task),
  };
}

/**
 * What a stream that missed the events between two copies of a task gets instead. Generations
 * tell what was missed: none, nothing; exactly one status change, its event; otherwise the
 * task as it now stands, whose generation shows the reader the gap (replayed artifact and status
 * events would repeat numbers, which A2A 1.1 forbids). A final task ends the stream (`endsStream`).
 */
export function rebuiltEvents(before: Task, after: Task): TaskEvent[] {
  const [was, now] = [generationOf(before), generationOf(after)];
  const { status } = after;
  const moved =
    status.state !== before.status.state || status.timestamp !== before.status.timestamp;
  // No newer generation: nothing to tell, unless the copies disagree on the status anyway.
  if (now <= was && !moved) return [];
  if (now === was + 1 && moved) {
    const final = isFinalState(status.state);
    const base = { taskId: after.id, contextId: after.contextId, generation: now };
    return [{ kind: 'status', ...base, status, final }];
  }
  return [{ kind: 'task', task: snapshot(after) }];
}

export function toArtifact(input: ArtifactInput): Artifact {
  const a: Artifact = { artifactId: input.artifactId ?? crypto.randomUUID(), parts: input.parts };
  if (input.name) a.name = input.name;
  if (input.description) a.description = input.description;
  if (input.metadata) a.metadata = input.metadata;
  return a;
}

/** Drops the oldest messages past either history cap; the newest message always stays. */
export function trimHistory(history: Message[], limits: TaskLimits): void {
  let bytes = 0;
  let keep = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    const size = messageBytes(m);
    if (keep > 0 && (keep >= limits.historyMessages || bytes + size > limits.historyBytes)) break;
    bytes += size;
    keep++;
  }
  if (keep < history.length) history.splice(0, history.length - keep);
}

/** A copy that later changes to the live task cannot alter (events are read after they are sent). */
export function snapshot(task: Task): Task {
  return {
    ...task,
    status: { ...task.status },
    artifacts: [...task.artifacts],
    history: [...task.history],
  };
}

/** Whether an event ends a stream: a message answer, a final status, or a rebuilt final task. */
export function endsStream(event: TaskEvent): boolean {
  if (event.kind === 'task') return isFinalState(event.task.status.state);
  return event.kind === 'message' || (event.kind === 'status' && event.final);
}
