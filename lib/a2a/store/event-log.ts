/**
 * @module lib/a2a/store/event-log — a task's bounded event log: the newest status and artifact
 * events of one task, kept inside its stored record so that every store writes the log in the
 * same step as the change it records (the same file, log line or PostgreSQL row). Past its bound
 * the oldest events are dropped; a reader whose cursor lies before what is kept gets the task
 * itself instead (an explicit gap, never a silent one).
 */

import { LIMITS, jsonBytes } from '../../limits.ts';
import { generationOf, type Artifact, type Message, type Task, type TaskEvent } from '../types.ts';

/** An event the log keeps: a status or artifact change, with the generation it made. */
export type LoggedEvent = Extract<TaskEvent, { kind: 'status' | 'artifact' }> & {
  generation: number;
};

/** How much of a task's events its log keeps: the newest `events`, within `bytes` of JSON. */
export interface EventLogBound {
  events: number;
  bytes: number;
}

/** The bound a node starts with (`TASK_EVENT_LOG_EVENTS`, `TASK_EVENT_LOG_BYTES`). */
export const DEFAULT_EVENT_LOG: EventLogBound = Object.freeze({
  events: LIMITS.taskEventLogEvents,
  bytes: LIMITS.taskEventLogBytes,
});

type StatusEvent = Extract<TaskEvent, { kind: 'status' }>;
type ArtifactEvent = Extract<TaskEvent, { kind: 'artifact' }>;

const sizes = new WeakMap<LoggedEvent, number>();
const messageSizes = new WeakMap<Message, number>();
const artifactSizes = new WeakMap<Artifact, number>();
/** `,"message":` before a status's message. */
const MESSAGE_MEMBER = 11;
/** `,"artifact":` before (or after) an artifact event's artifact. */
const ARTIFACT_MEMBER = 12;

/** A message's size as JSON, measured once per message (the history's bound and the log's share it). */
export function messageBytes(m: Message): number {
  let n = messageSizes.get(m);
  if (n === undefined) messageSizes.set(m, (n = jsonBytes(m)));
  return n;
}

/**
 * An artifact's size as JSON, measured once per artifact object (the artifact cap checks it, and
 * its event's share of the log is the same bytes). Artifacts are never changed in place: an
 * appended chunk makes a new artifact object.
 */
export function artifactBytes(a: Artifact): number {
  let n = artifactSizes.get(a);
  if (n === undefined) artifactSizes.set(a, (n = jsonBytes(a)));
  return n;
}

/**
 * An event's size as JSON; a status's message (the one the history holds too) and an artifact
 * event's artifact (the one the artifact cap measured) measured once.
 */
function sizeOf(e: LoggedEvent): number {
  let n = sizes.get(e);
  if (n === undefined) {
    if (e.kind === 'artifact') {
      const a = e as ArtifactEvent;
      n = jsonBytes({ ...a, artifact: undefined }) + ARTIFACT_MEMBER + artifactBytes(a.artifact);
    } else {
      const status = (e as StatusEvent).status;
      const message = status.message;
      n = message
        ? jsonBytes({ ...e, status: { ...status, message: undefined } }) +
          MESSAGE_MEMBER +
          messageBytes(message)
        : jsonBytes(e);
    }
    sizes.set(e, n);
  }
  return n;
}

/** Whether an event belongs in the log (a change that made a generation). */
function isLogged(e: TaskEvent): e is LoggedEvent {
  return (e.kind === 'status' || e.kind === 'artifact') && typeof e.generation === 'number';
}

/**
 * Appends a change's event to its record's log and drops the oldest past the bound (the newest
 * always stays). An event that made no generation, or one the log already holds, is left out.
 */
export function appendEvent(
  rec: { events?: LoggedEvent[] },
  event: TaskEvent,
  bound: EventLogBound,
): void {
  if (!isLogged(event)) return;
  const log = (rec.events ??= []);
  const last = log[log.length - 1];
  if (last && last.generation >= event.generation) return;
  log.push(event);
  let bytes = 0;
  let keep = 0;
  for (let i = log.length - 1; i >= 0; i--) {
    const size = sizeOf(log[i]!);
    if (keep > 0 && (keep >= bound.events || bytes + size > bound.bytes)) break;
    bytes += size;
    keep++;
  }
  if (keep < log.length) log.splice(0, log.length - keep);
}

/**
 * The events after generation `after`, in order, when the log holds every one of them up to the
 * task's generation; undefined when some were dropped (the reader then gets the task itself).
 */
export function eventsAfter(
  task: Task,
  log: readonly LoggedEvent[] | undefined,
  after: number,
): LoggedEvent[] | undefined {
  const current = generationOf(task);
  if (after >= current) return [];
  const out = (log ?? []).filter((e) => e.generation > after);
  const first = out[0];
  if (!first || first.generation !== after + 1) return undefined;
  for (let i = 1; i < out.length; i++)
    if (out[i]!.generation !== out[i - 1]!.generation + 1) return undefined;
  return out[out.length - 1]!.generation === current ? out : undefined;
}

/** The log as stored, checked: entries that are not logged events are left out. */
export function readEventLog(raw: unknown): LoggedEvent[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const out = raw.filter(
    (e): e is LoggedEvent =>
      typeof e === 'object' &&
      e !== null &&
      ((e as TaskEvent).kind === 'status' || (e as TaskEvent).kind === 'artifact') &&
      Number.isSafeInteger((e as LoggedEvent).generation),
  );
  return out.length ? out : undefined;
}
