/**
 * @module lib/a2a/wire/cursor — what a binding reads of a request besides its params, chiefly a
 * stream's resume cursor on the wire: the SSE `id:` of each task
 * event (`<taskId>:<generation>`), and the position a resuming subscribe names, read from
 * `Last-Event-ID` (an HTTP header, or gRPC metadata `last-event-id`) or a `lastGeneration`
 * parameter, checked (bounded length, a decimal generation, the subscribed task) before any
 * task is read.
 */

import { a2aError, type A2AError } from '../errors.ts';
import type { TaskEvent } from '../types.ts';

/** The longest `Last-Event-ID` read: a task id (36), a colon and a generation fit in 64. */
const MAX_LAST_EVENT_ID = 128;

/** What a binding reads of a request besides its params (the operations' fourth argument). */
export interface RequestContext {
  /** `Last-Event-ID` as sent (header or gRPC metadata), null or absent when none. */
  lastEventId?: string | null;
  /** gRPC metadata `a2a-last-generation`: the `lastGeneration` parameter of that binding. */
  lastGeneration?: string | null;
  /**
   * The caller declared A2A 1.1 (`A2A-Version` header or gRPC metadata; gRPC answers every caller
   * with 1.1's members, so its table does not say it): its push configs deliver `generation`, and
   * its sends are idempotent by messageId. A 1.0 caller's sends each run, as 1.0 says (the 1.0
   * conformance kit reuses a messageId for different messages).
   */
  asks11?: boolean;
  /** Aborts when the request's client goes away (a held long-poll then frees its slot). */
  signal?: AbortSignal;
}

/** The SSE `id:` of an event: its task and the generation it made; none for a Message. */
export function eventId(e: TaskEvent): string | undefined {
  if (e.kind === 'task')
    return e.task.generation === undefined ? undefined : `${e.task.id}:${e.task.generation}`;
  if (e.kind === 'message' || e.generation === undefined) return undefined;
  return `${e.taskId}:${e.generation}`;
}

/** The `lastGeneration` member of a request's params, as sent (checked by `resumeAfter`). */
export function lastGenerationOf(params: unknown): unknown {
  return typeof params === 'object' && params !== null
    ? (params as { lastGeneration?: unknown }).lastGeneration
    : undefined;
}

const GENERATION = /^(0|[1-9][0-9]{0,14})$/;

function invalid(message: string, field: string): A2AError {
  return a2aError('EVENT_CURSOR_INVALID', message, field);
}

/** A generation as a parameter carries it: a decimal string (ProtoJSON int64) or a number. */
function readGeneration(raw: unknown, field: string): number | A2AError {
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !GENERATION.test(text))
    return invalid(`${field} must be a generation: a whole number from 0`, field);
  return Number(text);
}

/**
 * The generation after which a subscribe to `taskId` resumes; undefined when it names none (a
 * plain subscribe). A `Last-Event-ID` of another task is answered as that task not found.
 */
export function resumeAfter(
  taskId: string,
  lastGeneration: unknown,
  ctx: RequestContext | undefined,
): number | undefined | A2AError {
  const param = lastGeneration ?? ctx?.lastGeneration ?? undefined;
  const fromParam =
    param === undefined || param === null ? undefined : readGeneration(param, 'lastGeneration');
  if (typeof fromParam === 'object') return fromParam;
  const header = ctx?.lastEventId;
  if (header === undefined || header === null) return fromParam;
  if (header.length > MAX_LAST_EVENT_ID)
    return invalid(`Last-Event-ID is longer than ${MAX_LAST_EVENT_ID} characters`, 'Last-Event-ID');
  const colon = header.lastIndexOf(':');
  if (colon < 1) return invalid('Last-Event-ID must be <taskId>:<generation>', 'Last-Event-ID');
  const named = header.slice(0, colon);
  const fromHeader = readGeneration(header.slice(colon + 1), 'Last-Event-ID');
  if (typeof fromHeader === 'object') return fromHeader;
  // Another task's cursor tells nothing of either task: the one it names is "not found".
  if (named !== taskId)
    return a2aError('TASK_NOT_FOUND', `Task not found: ${named.slice(0, 64)}`, 'Last-Event-ID');
  if (fromParam !== undefined && fromParam !== fromHeader)
    return invalid('Last-Event-ID and lastGeneration name different generations', 'lastGeneration');
  return fromHeader;
}
