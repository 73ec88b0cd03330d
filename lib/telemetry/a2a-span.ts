/**
 * @module lib/telemetry/a2a-span — OpenTelemetry's semantic conventions for A2A
 * (open-telemetry/semantic-conventions-genai, docs/gen-ai/a2a.md) as plain values: the span every
 * exporter here sends (`OtelSpan`), the well-known `a2a.method.name` for each protocol method
 * (0.3 names mapped to 1.0's), and the attributes read from an operation's request, its answer or
 * a stream's events (`a2a.task.id`, `a2a.task.state` as `TASK_STATE_*`, `a2a.message.id`,
 * `a2a.message.reference_task_ids`, `a2a.tenant`, `gen_ai.conversation.id` = `contextId`), and
 * `error.type` (the JSON-RPC code where the protocol names one). Every value is cut to a bound.
 */

export type SpanValue = string | number | boolean | string[];
export type SpanAttributes = Record<string, SpanValue>;

/** One finished span, in the terms of OTLP (times in ms since the epoch, ids in hex). */
export interface OtelSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: 'server' | 'client';
  startMs: number;
  durationMs: number;
  attributes: SpanAttributes;
  /** Set when the operation failed: the span's status is ERROR with this message. */
  error?: string;
}

/** Where finished spans go (an OTLP exporter). Never blocks, never throws. */
export interface SpanSink {
  add(span: OtelSpan): void;
}

/** The convention's well-known method names, by every name a binding gives an operation. */
const METHOD_NAMES: Readonly<Record<string, string>> = {
  'message/send': 'SendMessage',
  'message/stream': 'SendStreamingMessage',
  'tasks/get': 'GetTask',
  'tasks/list': 'ListTasks',
  'tasks/cancel': 'CancelTask',
  'tasks/resubscribe': 'SubscribeToTask',
  'tasks/pushNotificationConfig/set': 'CreateTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/get': 'GetTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/list': 'ListTaskPushNotificationConfigs',
  'tasks/pushNotificationConfig/delete': 'DeleteTaskPushNotificationConfig',
  'agent/getAuthenticatedExtendedCard': 'GetExtendedAgentCard',
};

/** `a2a.method.name` of a method as a binding names it (a 1.0 name is its own). */
export const a2aMethodName = (method: string): string => METHOD_NAMES[method] ?? method;

const VALUE_CHARS = 256;
const MAX_REFERENCES = 16;
const cut = (s: string) => (s.length > VALUE_CHARS ? s.slice(0, VALUE_CHARS) : s);
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? cut(v) : undefined;

/** The names of the states met so far (a handful; bounded by STATE_NAMES all the same). */
const stateNames = new Map<string, string>();
const STATE_NAMES = 64;

/** A task state as the convention writes it: 1.0's `TASK_STATE_*` as is, 0.3's `input-required` mapped. */
export function taskStateName(state: unknown): string | undefined {
  if (typeof state !== 'string' || state === '') return undefined;
  const known = stateNames.get(state);
  if (known !== undefined) return known;
  const name = state.startsWith('TASK_STATE_')
    ? cut(state)
    : cut(`TASK_STATE_${state.toUpperCase().replace(/-/g, '_')}`);
  if (stateNames.size < STATE_NAMES) stateNames.set(state, name);
  return name;
}

function put(a: SpanAttributes, key: string, v: string | undefined): void {
  if (v !== undefined) a[key] = v;
}

/** What a message says: its id (request only), its task and its conversation. */
function messageAttributes(a: SpanAttributes, m: Record<string, unknown>, request: boolean): void {
  if (request) put(a, 'a2a.message.id', str(m.messageId));
  put(a, 'a2a.task.id', str(m.taskId));
  put(a, 'gen_ai.conversation.id', str(m.contextId));
  if (request && Array.isArray(m.referenceTaskIds)) {
    const refs = m.referenceTaskIds.filter((r): r is string => typeof r === 'string');
    if (refs.length) a['a2a.message.reference_task_ids'] = refs.slice(0, MAX_REFERENCES).map(cut);
  }
}

/** A task's id, state and conversation (a 1.0 or 0.3 task object). */
function taskAttributes(a: SpanAttributes, t: Record<string, unknown>): void {
  put(a, 'a2a.task.id', str(t.id) ?? str(t.taskId));
  put(a, 'gen_ai.conversation.id', str(t.contextId));
  if (isObject(t.status)) put(a, 'a2a.task.state', taskStateName(t.status.state));
}

/** The attributes an operation's params give (the same for every binding and version). */
export function requestAttributes(method: string, params: unknown): SpanAttributes {
  const a: SpanAttributes = {};
  if (!isObject(params)) return a;
  put(a, 'a2a.tenant', str(params.tenant));
  if (isObject(params.message)) messageAttributes(a, params.message, true);
  else if (method.includes('PushNotificationConfig')) put(a, 'a2a.task.id', str(params.taskId));
  else if (method !== 'ListTasks') put(a, 'a2a.task.id', str(params.id));
  return a;
}

/** The attributes an answer gives: a task (bare or `{task}`), or a message (bare or `{message}`). */
export function resultAttributes(result: unknown): SpanAttributes {
  const a: SpanAttributes = {};
  if (!isObject(result)) return a;
  const task = isObject(result.task) ? result.task : 'status' in result ? result : undefined;
  if (task) taskAttributes(a, task);
  else if (isObject(result.message)) messageAttributes(a, result.message, false);
  else if (result.kind === 'message') messageAttributes(a, result, false);
  return a;
}

/** The attributes a stream event gives (the engine's event, before any binding renders it). */
export function eventAttributes(e: {
  kind: string;
  task?: unknown;
  message?: unknown;
  taskId?: unknown;
  contextId?: unknown;
  status?: unknown;
}): SpanAttributes {
  if (e.kind === 'task' && isObject(e.task)) return resultAttributes({ task: e.task });
  if (e.kind === 'message' && isObject(e.message)) return resultAttributes({ message: e.message });
  const a: SpanAttributes = {};
  put(a, 'a2a.task.id', str(e.taskId));
  put(a, 'gen_ai.conversation.id', str(e.contextId));
  if (isObject(e.status)) put(a, 'a2a.task.state', taskStateName(e.status.state));
  return a;
}

/**
 * `error.type` of a coded failure: its JSON-RPC code as text where the error registry gives one
 * (`rpc`; every A2A error has one, so the value is the same on every binding), else the code.
 */
export function errorType(code: string, rpc: number | undefined): string {
  return rpc !== undefined ? String(rpc) : cut(code || '_OTHER');
}

/** `gen_ai.agent.*` from a card's name, description and version. */
export function agentAttributes(card: {
  name?: unknown;
  description?: unknown;
  version?: unknown;
}): SpanAttributes {
  const a: SpanAttributes = {};
  put(a, 'gen_ai.agent.name', str(card.name));
  put(a, 'gen_ai.agent.description', str(card.description));
  put(a, 'gen_ai.agent.version', str(card.version));
  return a;
}
