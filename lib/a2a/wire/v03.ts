/**
 * @module lib/a2a/wire/v03 — A2A v0.3 wire form: `kind` discriminators, lowercase states and roles,
 * `file`/`data` parts, `final` on status updates. Parses params into the internal model and
 * serialises the model back.
 */

import { isPlainObject } from '../../json/guards.ts';
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
  optMetadata,
  optObj,
  optStr,
  optStrArray,
  parseSendParams,
  parseTaskQuery,
  parseWith,
  str,
  type Obj,
} from './params.ts';
import type {
  Artifact,
  Message,
  Part,
  PushConfig,
  SendParams,
  Task,
  TaskEvent,
  TaskStatus,
} from '../types.ts';

export function parsePart(raw: unknown, path: string): Part {
  const p = obj(raw, path);
  const metadata = optMetadata(p, 'metadata', path);
  const kind = field(p, 'kind');
  let part: Part;
  if (kind === 'text') {
    const t = field(p, 'text');
    if (typeof t !== 'string') throw new Invalid(`${path}.text`, `${path}.text must be a string`);
    part = { text: t };
  } else if (kind === 'data') {
    part = { data: obj(field(p, 'data'), `${path}.data`), mediaType: 'application/json' };
  } else if (kind === 'file') {
    const f = obj(field(p, 'file'), `${path}.file`);
    const hasBytes = field(f, 'bytes') !== undefined;
    const hasUri = field(f, 'uri') !== undefined;
    if (hasBytes === hasUri)
      throw new Invalid(`${path}.file`, `${path}.file must have exactly one of bytes, uri`);
    part = hasBytes
      ? { raw: base64(f, 'bytes', `${path}.file`) }
      : { url: str(f, 'uri', `${path}.file`, 8192) };
    const mimeType = optStr(f, 'mimeType', `${path}.file`, 255);
    const name = optStr(f, 'name', `${path}.file`, 255);
    if (mimeType) part.mediaType = mimeType;
    if (name) part.filename = name;
  } else {
    throw new Invalid(`${path}.kind`, `${path}.kind must be one of text, file, data`);
  }
  if (metadata) part.metadata = metadata;
  return part;
}

export function parseMessageV03(raw: unknown, path = 'message'): Message {
  const m = obj(raw, path);
  const kind = field(m, 'kind');
  if (kind !== undefined && kind !== 'message')
    throw new Invalid(`${path}.kind`, `${path}.kind must be "message"`);
  const role = field(m, 'role');
  if (role !== 'user' && role !== 'agent')
    throw new Invalid(`${path}.role`, `${path}.role must be "user" or "agent"`);
  const message: Message = {
    messageId: identifier(m, 'messageId', path, true)!,
    role,
    parts: array(m, 'parts', path, 256).map((p, i) => parsePart(p, `${path}.parts[${i}]`)),
  };
  return messageExtras(m, path, message);
}

function parsePushConfigV03(
  c: Obj,
  path: string,
): { id?: string; url: string; token?: string; authentication?: PushConfig['authentication'] } {
  const out: ReturnType<typeof parsePushConfigV03> = { url: str(c, 'url', path, 2048) };
  const id = identifier(c, 'id', path, false);
  const token = optStr(c, 'token', path, 1024);
  const auth = optObj(c, 'authentication', path);
  if (id) out.id = id;
  if (token) out.token = token;
  if (auth) {
    const schemes = optStrArray(auth, 'schemes', `${path}.authentication`, 8);
    if (!schemes?.length)
      throw new Invalid(
        `${path}.authentication.schemes`,
        `${path}.authentication.schemes must list at least one scheme`,
      );
    const credentials = optStr(auth, 'credentials', `${path}.authentication`, 4096);
    // The first listed scheme a webhook may use; a list of none of them is refused below.
    const scheme =
      schemes.find((s) => refuseWebhookAuth({ scheme: s }) === undefined) ?? schemes[0]!;
    out.authentication = credentials ? { scheme, credentials } : { scheme };
  }
  const refused = refuseWebhookAuth(out.authentication, out.token);
  if (refused) throw new Invalid(`${path}.${refused.field}`, refused.message);
  return out;
}

export function parseSendParamsV03(params: unknown): SendParams | A2AError {
  return parseSendParams(params, {
    message: parseMessageV03,
    // v0.3 `blocking` defaults to true here, as in the official SDKs.
    returnImmediately: (c, path) => optBool(c, 'blocking', path) === false,
    pushKey: 'pushNotificationConfig',
    push: parsePushConfigV03,
  });
}

export const parseTaskQueryV03 = parseTaskQuery;

export function parseSetPushV03(
  params: unknown,
): (ReturnType<typeof parsePushConfigV03> & { taskId: string }) | A2AError {
  return parseWith(() => {
    const p = obj(params, 'params');
    const taskId = str(p, 'taskId', 'params', 256);
    return {
      ...parsePushConfigV03(
        obj(field(p, 'pushNotificationConfig'), 'params.pushNotificationConfig'),
        'params.pushNotificationConfig',
      ),
      taskId,
    };
  });
}

/** `{id, pushNotificationConfigId?}` of get/delete and `{id}` of list. */
export function parsePushRefV03(
  params: unknown,
  needId: boolean,
): { taskId: string; id?: string } | A2AError {
  return parseWith(() => {
    const p = obj(params, 'params');
    const taskId = str(p, 'id', 'params', 256);
    const id = needId
      ? str(p, 'pushNotificationConfigId', 'params', 256)
      : optStr(p, 'pushNotificationConfigId', 'params', 256);
    return id ? { taskId, id } : { taskId };
  });
}

// ---- serialisation ----

function partToV03(p: Part): Obj {
  let out: Obj;
  if (p.text !== undefined) out = { kind: 'text', text: p.text };
  else if (p.raw !== undefined || p.url !== undefined) {
    const file: Obj = p.raw !== undefined ? { bytes: p.raw } : { uri: p.url };
    if (p.mediaType) file.mimeType = p.mediaType;
    if (p.filename) file.name = p.filename;
    out = { kind: 'file', file };
  } else {
    // v0.3 data parts must be objects; other JSON values travel wrapped.
    out = { kind: 'data', data: isPlainObject(p.data) ? p.data : { value: p.data ?? null } };
  }
  if (p.metadata) out.metadata = p.metadata;
  return out;
}

export function messageToV03(m: Message): Obj {
  const out: Obj = {
    kind: 'message',
    messageId: m.messageId,
    role: m.role,
    parts: m.parts.map(partToV03),
  };
  if (m.contextId) out.contextId = m.contextId;
  if (m.taskId) out.taskId = m.taskId;
  if (m.metadata) out.metadata = m.metadata;
  if (m.extensions?.length) out.extensions = m.extensions;
  if (m.referenceTaskIds?.length) out.referenceTaskIds = m.referenceTaskIds;
  return out;
}

function statusToV03(s: TaskStatus): Obj {
  const out: Obj = { state: s.state };
  if (s.message) out.message = messageToV03(s.message);
  out.timestamp = s.timestamp;
  return out;
}

function artifactToV03(a: Artifact): Obj {
  const out: Obj = { artifactId: a.artifactId, parts: a.parts.map(partToV03) };
  if (a.name) out.name = a.name;
  if (a.description) out.description = a.description;
  if (a.metadata) out.metadata = a.metadata;
  if (a.extensions?.length) out.extensions = a.extensions;
  return out;
}

export function taskToV03(t: Task): Obj {
  const out: Obj = {
    kind: 'task',
    id: t.id,
    contextId: t.contextId,
    status: statusToV03(t.status),
  };
  if (t.artifacts.length) out.artifacts = t.artifacts.map(artifactToV03);
  if (t.history.length) out.history = t.history.map(messageToV03);
  if (t.metadata) out.metadata = t.metadata;
  return out;
}

export function eventToV03(e: TaskEvent): Obj {
  switch (e.kind) {
    case 'task':
      return taskToV03(e.task);
    case 'message':
      return messageToV03(e.message);
    case 'status':
      return {
        kind: 'status-update',
        taskId: e.taskId,
        contextId: e.contextId,
        status: statusToV03(e.status),
        final: e.final,
      };
    case 'artifact':
      return {
        kind: 'artifact-update',
        taskId: e.taskId,
        contextId: e.contextId,
        artifact: artifactToV03(e.artifact),
        append: e.append,
        lastChunk: e.lastChunk,
      };
  }
}

/** Credentials are never echoed back: anyone who can name the task could read them. */
export function pushConfigToV03(c: PushConfig): Obj {
  const cfg: Obj = { id: c.id, url: c.url };
  if (c.token) cfg.token = c.token;
  if (c.authentication) cfg.authentication = { schemes: [c.authentication.scheme] };
  return { taskId: c.taskId, pushNotificationConfig: cfg };
}
