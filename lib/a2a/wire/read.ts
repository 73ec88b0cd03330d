/**
 * @module lib/a2a/wire/read — reads what a node answers (tasks, messages, stream events, task pages)
 * from the v1.0 or v0.3 wire form into the internal model: the client's half of the wire modules.
 * Each reader throws `Invalid` on a malformed answer; `readWith` turns that into a value.
 */

import { Invalid, array, field, obj, optMetadata, optStr, str, type Obj } from './params.ts';
import type {
  Artifact,
  ListTasksPage,
  Message,
  ProtocolVersion,
  Task,
  TaskEvent,
  TaskState,
  TaskStatus,
} from '../types.ts';
import { isFinalState, TASK_STATES } from '../types.ts';
import { parseMessageV1, parsePart as parsePartV1, parseStateV1 } from './v1.ts';
import { parseMessageV03, parsePart as parsePartV03 } from './v03.ts';

/** Runs a reader; a malformed answer becomes `{ invalid: message }`. Other throws are bugs. */
export function readWith<T>(read: () => T): T | { invalid: string } {
  try {
    return read();
  } catch (e) {
    if (e instanceof Invalid) return { invalid: e.message };
    throw e;
  }
}

/** What a version's readers share; the two forms differ in parts, messages and states. */
interface Form {
  message(raw: unknown, path: string): Message;
  part(raw: unknown, path: string): Artifact['parts'][number];
  state(raw: unknown, path: string): TaskState;
}

const V1: Form = { message: parseMessageV1, part: parsePartV1, state: parseStateV1 };
const V03: Form = {
  message: parseMessageV03,
  part: parsePartV03,
  state: (v, path) => {
    if (typeof v === 'string' && (TASK_STATES as readonly string[]).includes(v))
      return v as TaskState;
    throw new Invalid(path, `${path} must be a task state such as "working"`);
  },
};
const formOf = (v: ProtocolVersion): Form => (v === '1.0' ? V1 : V03);

function readStatus(f: Form, raw: unknown, path: string): TaskStatus {
  const s = obj(raw, path);
  const status: TaskStatus = {
    state: f.state(field(s, 'state'), `${path}.state`),
    timestamp: optStr(s, 'timestamp', path, 64) ?? '',
  };
  const message = field(s, 'message');
  if (message !== undefined && message !== null)
    status.message = f.message(message, `${path}.message`);
  return status;
}

function readArtifact(f: Form, raw: unknown, path: string): Artifact {
  const a = obj(raw, path);
  const artifact: Artifact = {
    artifactId: str(a, 'artifactId', path, 256),
    parts: array(a, 'parts', path, 256).map((p, i) => f.part(p, `${path}.parts[${i}]`)),
  };
  const name = optStr(a, 'name', path, 512);
  const description = optStr(a, 'description', path, 4096);
  const metadata = optMetadata(a, 'metadata', path);
  if (name) artifact.name = name;
  if (description) artifact.description = description;
  if (metadata) artifact.metadata = metadata;
  return artifact;
}

const optList = (o: Obj, name: string, path: string) =>
  field(o, name) === undefined || field(o, name) === null ? [] : array(o, name, path, 10_000);

function readTask(f: Form, raw: unknown, path: string): Task {
  const t = obj(raw, path);
  const task: Task = {
    id: str(t, 'id', path, 256),
    contextId: str(t, 'contextId', path, 256),
    status: readStatus(f, field(t, 'status'), `${path}.status`),
    artifacts: optList(t, 'artifacts', path).map((a, i) =>
      readArtifact(f, a, `${path}.artifacts[${i}]`),
    ),
    history: optList(t, 'history', path).map((m, i) => f.message(m, `${path}.history[${i}]`)),
  };
  const metadata = optMetadata(t, 'metadata', path);
  if (metadata) task.metadata = metadata;
  return { ...task, ...readGeneration(t, path) };
}

/**
 * A2A 1.1 `generation` (an int64: a string in ProtoJSON, a number accepted); absent or 0 is a
 * server without it, and is left out.
 */
function readGeneration(o: Obj, path: string): { generation?: number } {
  const v = field(o, 'generation');
  if (v === undefined || v === null) return {};
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw new Invalid(`${path}.generation`, `${path}.generation must be a non-negative integer`);
  return n === 0 ? {} : { generation: n };
}

/** A task in the given wire form. */
export function readTaskAnswer(version: ProtocolVersion, raw: unknown): Task {
  return readTask(formOf(version), raw, 'result');
}

/** A `SendMessage` / `message/send` result: a task or a direct message. */
export function readSendAnswer(
  version: ProtocolVersion,
  raw: unknown,
): { task: Task } | { message: Message } {
  const r = obj(raw, 'result');
  if (version === '1.0') {
    if (field(r, 'message') !== undefined)
      return { message: parseMessageV1(field(r, 'message'), 'result.message') };
    return { task: readTask(V1, field(r, 'task'), 'result.task') };
  }
  return field(r, 'kind') === 'message'
    ? { message: parseMessageV03(r, 'result') }
    : { task: readTask(V03, r, 'result') };
}

function readUpdate(
  u: Obj,
  path: string,
): { taskId: string; contextId: string; generation?: number } {
  return {
    taskId: str(u, 'taskId', path, 256),
    contextId: str(u, 'contextId', path, 256),
    ...readGeneration(u, path),
  };
}

/** One stream event (`StreamResponse` in v1.0, a `kind`-tagged object in v0.3). */
export function readStreamEvent(version: ProtocolVersion, raw: unknown): TaskEvent {
  const r = obj(raw, 'result');
  const f = formOf(version);
  const v1Key =
    version === '1.0'
      ? (['task', 'message', 'statusUpdate', 'artifactUpdate'] as const).find(
          (k) => field(r, k) !== undefined,
        )
      : undefined;
  const kind = version === '1.0' ? v1Key : (field(r, 'kind') as string | undefined);
  const body = (key: string) => (version === '1.0' ? obj(field(r, key), `result.${key}`) : r);
  switch (kind) {
    case 'task':
      return { kind: 'task', task: readTask(f, body('task'), 'result.task') };
    case 'message':
      return { kind: 'message', message: f.message(body('message'), 'result.message') };
    case 'statusUpdate':
    case 'status-update': {
      const u = body('statusUpdate');
      const status = readStatus(f, field(u, 'status'), 'result.status');
      // v1.0 dropped `final`: the state says whether the stream ends here.
      const final =
        typeof field(u, 'final') === 'boolean'
          ? (field(u, 'final') as boolean)
          : isFinalState(status.state);
      return { kind: 'status', ...readUpdate(u, 'result'), status, final };
    }
    case 'artifactUpdate':
    case 'artifact-update': {
      const u = body('artifactUpdate');
      return {
        kind: 'artifact',
        ...readUpdate(u, 'result'),
        artifact: readArtifact(f, field(u, 'artifact'), 'result.artifact'),
        append: field(u, 'append') === true,
        lastChunk: field(u, 'lastChunk') === true,
      };
    }
    default:
      throw new Invalid(
        'result',
        'result is not a task, message, status update or artifact update',
      );
  }
}

/** A v1.0 `ListTasks` page. */
export function readTaskPage(raw: unknown): ListTasksPage {
  const p = obj(raw, 'result');
  const num = (name: string) =>
    typeof field(p, name) === 'number' ? (field(p, name) as number) : 0;
  return {
    tasks: optList(p, 'tasks', 'result').map((t, i) => readTask(V1, t, `result.tasks[${i}]`)),
    nextPageToken: optStr(p, 'nextPageToken', 'result', 512) ?? '',
    pageSize: num('pageSize'),
    totalSize: num('totalSize'),
  };
}
