/**
 * @module lib/a2a/wire/v1 — A2A v1.0 wire form (ProtoJSON of `a2a.proto`): parse params into the
 * internal model and serialise the model back. Enums go out as `TASK_STATE_*` / `ROLE_*`,
 * default values (empty lists, empty strings) are omitted.
 */

import type { A2AError } from '../errors.ts';
import { refuseWebhookAuth } from '../push/webhook-auth.ts';
import {
  Invalid,
  array,
  base64,
  field,
  identifier,
  messageExtras,
  obj,
  optBool,
  optInt,
  optMetadata,
  optObj,
  optStr,
  parseSendParams,
  parseGetTask,
  parseTaskQuery,
  parseWith,
  str,
  type Obj,
} from './params.ts';
import {
  generationOf,
  type Artifact,
  type ListTasksPage,
  type ListTasksQuery,
  type Message,
  type Part,
  type PushConfig,
  type SendParams,
  type Task,
  type TaskEvent,
  type TaskState,
  type TaskStatus,
} from '../types.ts';
import type {
  ArtifactV1,
  ListTasksPageV1,
  MessageV1,
  PartV1,
  TaskStateV1,
  TaskStatusV1,
  TaskV1,
} from './v1-types.ts';

const STATE_TO_V1: Record<TaskState, TaskStateV1> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
};
const STATE_NUMBERS: TaskState[] = [
  'submitted',
  'working',
  'completed',
  'failed',
  'canceled',
  'input-required',
  'rejected',
  'auth-required',
];

/** Reads a TaskState given as its proto name or number (0 = unspecified is not a state). */
export function parseStateV1(v: unknown, fieldName: string): TaskState {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 8)
    return STATE_NUMBERS[v - 1]!;
  if (typeof v === 'string') {
    for (const [state, name] of Object.entries(STATE_TO_V1))
      if (name === v) return state as TaskState;
  }
  throw new Invalid(fieldName, `${fieldName} must be a TaskState such as TASK_STATE_WORKING`);
}

function parseRole(v: unknown, fieldName: string): 'user' | 'agent' {
  if (v === 'ROLE_USER' || v === 1) return 'user';
  if (v === 'ROLE_AGENT' || v === 2) return 'agent';
  throw new Invalid(fieldName, `${fieldName} must be ROLE_USER or ROLE_AGENT`);
}

export function parsePart(raw: unknown, path: string): Part {
  const p = obj(raw, path);
  const part: Part = {};
  let members = 0;
  if (field(p, 'text') !== undefined) {
    const t = field(p, 'text');
    if (typeof t !== 'string') throw new Invalid(`${path}.text`, `${path}.text must be a string`);
    part.text = t;
    members++;
  }
  if (field(p, 'raw') !== undefined) {
    part.raw = base64(p, 'raw', path);
    members++;
  }
  if (field(p, 'url') !== undefined) {
    part.url = str(p, 'url', path, 8192);
    members++;
  }
  if (field(p, 'data') !== undefined) {
    part.data = field(p, 'data');
    members++;
  }
  if (members !== 1)
    throw new Invalid(path, `${path} must have exactly one of text, raw, url, data`);
  const mediaType = optStr(p, 'mediaType', path, 255);
  const filename = optStr(p, 'filename', path, 255);
  const metadata = optMetadata(p, 'metadata', path);
  if (mediaType) part.mediaType = mediaType;
  if (filename) part.filename = filename;
  if (metadata) part.metadata = metadata;
  return part;
}

export function parseMessageV1(raw: unknown, path = 'message'): Message {
  const m = obj(raw, path);
  const message: Message = {
    messageId: identifier(m, 'messageId', path, true)!,
    role: parseRole(field(m, 'role'), `${path}.role`),
    parts: array(m, 'parts', path, 256).map((p, i) => parsePart(p, `${path}.parts[${i}]`)),
  };
  return messageExtras(m, path, message);
}

function parsePushConfigV1(
  c: Obj,
  path: string,
): {
  id?: string;
  taskId?: string;
  url: string;
  token?: string;
  authentication?: PushConfig['authentication'];
} {
  const out: ReturnType<typeof parsePushConfigV1> = { url: str(c, 'url', path, 2048) };
  const id = identifier(c, 'id', path, false);
  const taskId = optStr(c, 'taskId', path, 256);
  const token = optStr(c, 'token', path, 1024);
  const auth = optObj(c, 'authentication', path);
  if (id) out.id = id;
  if (taskId) out.taskId = taskId;
  if (token) out.token = token;
  if (auth) {
    const scheme = str(auth, 'scheme', `${path}.authentication`, 64);
    const credentials = optStr(auth, 'credentials', `${path}.authentication`, 4096);
    out.authentication = credentials ? { scheme, credentials } : { scheme };
  }
  const refused = refuseWebhookAuth(out.authentication, out.token);
  if (refused) throw new Invalid(`${path}.${refused.field}`, refused.message);
  return out;
}

export function parseSendParamsV1(params: unknown): SendParams | A2AError {
  return parseSendParams(params, {
    message: parseMessageV1,
    returnImmediately: (c, path) => optBool(c, 'returnImmediately', path) ?? false,
    pushKey: 'taskPushNotificationConfig',
    push: parsePushConfigV1,
    // An int64: a string in ProtoJSON, a number accepted.
    ifGenerationMatch: (c, path) =>
      optInt(c, 'ifGenerationMatch', path, 0, Number.MAX_SAFE_INTEGER),
  });
}

/** `{id, historyLength?}` of GetTask, CancelTask and SubscribeToTask. */
export const parseTaskQueryV1 = parseTaskQuery;

/** GetTask's `{id, historyLength?, currentGeneration?}` (`currentGeneration`: A2A 1.1's long-poll). */
export const parseGetTaskV1 = parseGetTask;

export function parseListTasksV1(params: unknown): ListTasksQuery | A2AError {
  return parseWith(() => {
    const p = params === undefined || params === null ? {} : obj(params, 'params');
    const q: ListTasksQuery = {
      pageSize: optInt(p, 'pageSize', 'params', 1, 100) ?? 50,
      includeArtifacts: optBool(p, 'includeArtifacts', 'params') ?? false,
    };
    const contextId = optStr(p, 'contextId', 'params', 256);
    const status = field(p, 'status');
    const after = optStr(p, 'statusTimestampAfter', 'params', 64);
    const pageToken = optStr(p, 'pageToken', 'params', 512);
    const historyLength = optInt(p, 'historyLength', 'params', 0, 1_000_000);
    if (contextId) q.contextId = contextId;
    if (
      status !== undefined &&
      status !== null &&
      status !== 'TASK_STATE_UNSPECIFIED' &&
      status !== 0
    )
      q.status = parseStateV1(status, 'params.status');
    if (after) {
      if (Number.isNaN(Date.parse(after)))
        throw new Invalid(
          'params.statusTimestampAfter',
          'params.statusTimestampAfter must be an ISO 8601 timestamp',
        );
      q.statusTimestampAfter = after;
    }
    if (pageToken) q.pageToken = pageToken;
    if (historyLength !== undefined) q.historyLength = historyLength;
    return q;
  });
}

export function parseCreatePushV1(
  params: unknown,
): (ReturnType<typeof parsePushConfigV1> & { taskId: string }) | A2AError {
  return parseWith(() => {
    const p = obj(params, 'params');
    // Accept both the flattened v1.0 form and a nested `pushNotificationConfig` (pre-1.0 drafts).
    const nested = optObj(p, 'pushNotificationConfig', 'params');
    const cfg = parsePushConfigV1(
      nested ? { ...nested, taskId: field(p, 'taskId') } : p,
      nested ? 'params.pushNotificationConfig' : 'params',
    );
    const taskId = cfg.taskId ?? str(p, 'taskId', 'params', 256);
    return { ...cfg, taskId };
  });
}

export function parsePushRefV1(
  params: unknown,
  needId: boolean,
): { taskId: string; id?: string } | A2AError {
  return parseWith(() => {
    const p = obj(params, 'params');
    const taskId = str(p, 'taskId', 'params', 256);
    const id = needId ? str(p, 'id', 'params', 256) : optStr(p, 'id', 'params', 256);
    return id ? { taskId, id } : { taskId };
  });
}

// ---- serialisation ----

function partToV1(p: Part): PartV1 {
  const out: PartV1 = {};
  if (p.text !== undefined) out.text = p.text;
  else if (p.raw !== undefined) out.raw = p.raw;
  else if (p.url !== undefined) out.url = p.url;
  else out.data = p.data ?? null;
  if (p.mediaType) out.mediaType = p.mediaType;
  if (p.filename) out.filename = p.filename;
  if (p.metadata) out.metadata = p.metadata;
  return out;
}

export function messageToV1(m: Message): MessageV1 {
  const out: MessageV1 = { messageId: m.messageId } as MessageV1;
  if (m.contextId) out.contextId = m.contextId;
  if (m.taskId) out.taskId = m.taskId;
  // Member order as before (id, context, task, role, parts): the wire captures in the tests pin it.
  out.role = m.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT';
  out.parts = m.parts.map(partToV1);
  if (m.metadata) out.metadata = m.metadata;
  if (m.extensions?.length) out.extensions = m.extensions;
  if (m.referenceTaskIds?.length) out.referenceTaskIds = m.referenceTaskIds;
  return out;
}

function statusToV1(s: TaskStatus): TaskStatusV1 {
  const out = { state: STATE_TO_V1[s.state] } as TaskStatusV1;
  if (s.message) out.message = messageToV1(s.message);
  out.timestamp = s.timestamp;
  return out;
}

function artifactToV1(a: Artifact): ArtifactV1 {
  const out = { artifactId: a.artifactId } as ArtifactV1;
  if (a.name) out.name = a.name;
  if (a.description) out.description = a.description;
  out.parts = a.parts.map(partToV1);
  if (a.metadata) out.metadata = a.metadata;
  if (a.extensions?.length) out.extensions = a.extensions;
  return out;
}

/**
 * `generation`: whether the 1.1 member is written (for callers that ask A2A-Version 1.1, and
 * gRPC); a 1.0 answer is the 1.0 form exactly, since 1.0 schemas refuse unknown members.
 */
export function taskToV1(t: Task, includeArtifacts = true, generation = true): TaskV1 {
  const out: TaskV1 = { id: t.id, contextId: t.contextId, status: statusToV1(t.status) };
  if (includeArtifacts && t.artifacts.length) out.artifacts = t.artifacts.map(artifactToV1);
  if (t.history.length) out.history = t.history.map(messageToV1);
  if (t.metadata) out.metadata = t.metadata;
  if (generation) out.generation = String(generationOf(t));
  return out;
}

/** An event's `generation` member (A2A 1.1, an int64: a string in ProtoJSON), when it has one. */
function generationV1(e: { generation?: number }, write: boolean): Obj {
  return !write || e.generation === undefined ? {} : { generation: String(e.generation) };
}

/** A `StreamResponse`: exactly one of task, message, statusUpdate, artifactUpdate. */
export function eventToV1(e: TaskEvent, generation = true): Obj {
  switch (e.kind) {
    case 'task':
      return { task: taskToV1(e.task, true, generation) };
    case 'message':
      return { message: messageToV1(e.message) };
    case 'status':
      return {
        statusUpdate: {
          taskId: e.taskId,
          contextId: e.contextId,
          status: statusToV1(e.status),
          ...generationV1(e, generation),
        },
      };
    case 'artifact': {
      const u: Obj = {
        taskId: e.taskId,
        contextId: e.contextId,
        artifact: artifactToV1(e.artifact),
      };
      if (e.append) u.append = true;
      if (e.lastChunk) u.lastChunk = true;
      return { artifactUpdate: { ...u, ...generationV1(e, generation) } };
    }
  }
}

/** Credentials are never echoed back: anyone who can name the task could read them. */
export function pushConfigToV1(c: PushConfig): Obj {
  const out: Obj = { id: c.id, taskId: c.taskId, url: c.url };
  if (c.token) out.token = c.token;
  if (c.authentication) out.authentication = { scheme: c.authentication.scheme };
  return out;
}

export function listPageToV1(
  page: ListTasksPage,
  includeArtifacts: boolean,
  generation = true,
): ListTasksPageV1 {
  return {
    tasks: page.tasks.map((t) => taskToV1(t, includeArtifacts, generation)),
    nextPageToken: page.nextPageToken,
    pageSize: page.pageSize,
    totalSize: page.totalSize,
  };
}
