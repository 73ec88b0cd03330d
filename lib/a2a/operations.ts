/**
 * @module lib/a2a/operations — the A2A operations as `params -> Outcome` functions over the task
 * engine, shared by both bindings: JSON-RPC calls them by method name, HTTP+JSON builds the same
 * params from the path, query and body. Neither binding holds task logic of its own.
 */

import type { Principal } from '../auth/principal.ts';
import type { SendResult, Subscription, TaskEngine } from './engine/engine.ts';
import { a2aError, isA2AError, type A2AError } from './errors.ts';
import type { ProtocolVersion, PushConfig, SendParams, Task, TaskEvent } from './types.ts';
import * as v1 from './wire/v1.ts';
import { lastGenerationOf, resumeAfter, type RequestContext } from './wire/cursor.ts';

/** An operation's outcome: a JSON result, a stream of events, or an error value. */
export type Outcome =
  | { result: unknown }
  | { stream: Subscription; frame: (e: TaskEvent) => unknown }
  | A2AError;
/**
 * `notification`: a JSON-RPC request without an id, whose answer nobody reads. `caller`: who the
 * request was authenticated as; the engine decides what they may see and do.
 */
export type Operation = (
  params: unknown,
  notification: boolean,
  caller: Principal,
  ctx?: RequestContext,
) => Promise<Outcome> | Outcome;

export const V1_METHODS = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
] as const;
export type V1Method = (typeof V1_METHODS)[number];

/** The engine calls every version's operations are made of. */
export function operationSteps(engine: TaskEngine, streaming: boolean) {
  const noStreaming = () => a2aError('UNSUPPORTED_OPERATION', 'This agent does not stream');

  async function send(
    p: SendParams | A2AError,
    version: ProtocolVersion,
    caller: Principal,
    wrap: (r: SendResult) => unknown,
    ctx?: RequestContext,
  ): Promise<Outcome> {
    if (isA2AError(p)) return p;
    const r = await engine.send({ params: p, version, caller, retry: ctx?.asks11 === true });
    return isA2AError(r) ? r : { result: wrap(r) };
  }

  async function stream(
    p: SendParams | A2AError,
    version: ProtocolVersion,
    notification: boolean,
    caller: Principal,
    frame: (e: TaskEvent) => unknown,
    ctx?: RequestContext,
  ): Promise<Outcome> {
    if (!streaming) return noStreaming();
    if (isA2AError(p)) return p;
    const retry = ctx?.asks11 === true;
    // A notification has nobody to stream to: start the task and answer nothing.
    if (notification) {
      const params = { ...p, configuration: { ...p.configuration, returnImmediately: true } };
      const r = await engine.send({ params, version, caller, retry });
      return isA2AError(r) ? r : { result: null };
    }
    const sub = await engine.stream({ params: p, version, caller, retry });
    return isA2AError(sub) ? sub : { stream: sub, frame };
  }

  /** A subscribe; with a cursor (`lastGeneration`, `Last-Event-ID`) it resumes after it. */
  async function subscribe(
    q: { id: string } | A2AError,
    caller: Principal,
    frame: (e: TaskEvent) => unknown,
    params: unknown,
    ctx: RequestContext | undefined,
  ): Promise<Outcome> {
    if (!streaming) return noStreaming();
    if (isA2AError(q)) return q;
    const after = resumeAfter(q.id, lastGenerationOf(params), ctx);
    if (isA2AError(after)) return after;
    const sub = await engine.resubscribe(q.id, caller, after);
    return isA2AError(sub) ? sub : { stream: sub, frame };
  }

  const value = <T>(r: T | A2AError, wrap: (x: T) => unknown): Outcome =>
    isA2AError(r) ? r : { result: wrap(r) };

  return { send, stream, subscribe, value };
}

/**
 * The v1.0 operations; results are already in v1.0 wire form (ProtoJSON), with 1.1's
 * `generation` members when `generation` is true (the default).
 */
export function v1Operations(
  engine: TaskEngine,
  streaming: boolean,
  generation = true,
): Record<V1Method, Operation> {
  const { send, stream, subscribe, value } = operationSteps(engine, streaming);
  // A 1.1 caller's push configs deliver `generation` (gRPC answers with it to every caller, so
  // there the caller's own `a2a-version` decides).
  const asks11 = (ctx: RequestContext | undefined) => ctx?.asks11 ?? generation;
  const marked = (p: SendParams | A2AError, ctx: RequestContext | undefined) => {
    const push = !isA2AError(p) && p.configuration.pushConfig;
    if (push && asks11(ctx)) push.generation = true;
    return p;
  };
  const task = (t: Task) => v1.taskToV1(t, true, generation);
  const event = (e: TaskEvent) => v1.eventToV1(e, generation);
  const sendResult = (r: SendResult) =>
    'task' in r ? { task: task(r.task) } : { message: v1.messageToV1(r.message) };
  return {
    SendMessage: (p, _n, caller, ctx) =>
      send(marked(v1.parseSendParamsV1(p), ctx), '1.0', caller, sendResult, ctx),
    SendStreamingMessage: (p, n, caller, ctx) =>
      stream(marked(v1.parseSendParamsV1(p), ctx), '1.0', n, caller, event, ctx),
    GetTask: async (p, _n, caller, ctx) => {
      const q = v1.parseGetTaskV1(p);
      if (isA2AError(q)) return q;
      const { id, historyLength, currentGeneration } = q;
      return value(
        await engine.getTask(id, historyLength, caller, currentGeneration, ctx?.signal),
        task,
      );
    },
    ListTasks: async (p, _n, caller) => {
      const q = v1.parseListTasksV1(p);
      return isA2AError(q)
        ? q
        : value(await engine.listTasks(q, caller), (page) =>
            v1.listPageToV1(page, q.includeArtifacts, generation),
          );
    },
    CancelTask: async (p, _n, caller) => {
      const q = v1.parseTaskQueryV1(p);
      return isA2AError(q) ? q : value(await engine.cancel(q.id, caller), task);
    },
    SubscribeToTask: (p, _n, caller, ctx) =>
      subscribe(v1.parseTaskQueryV1(p), caller, event, p, ctx),
    CreateTaskPushNotificationConfig: async (p, _n, caller, ctx) => {
      const c = v1.parseCreatePushV1(p);
      if (isA2AError(c)) return c;
      const cfg = asks11(ctx) ? { ...c, generation: true } : c;
      return value(await engine.setPush(cfg, '1.0', caller), v1.pushConfigToV1);
    },
    GetTaskPushNotificationConfig: async (p, _n, caller) => {
      const r = v1.parsePushRefV1(p, true);
      return isA2AError(r)
        ? r
        : value(await engine.getPush(r.taskId, r.id, caller), v1.pushConfigToV1);
    },
    ListTaskPushNotificationConfigs: async (p, _n, caller) => {
      const r = v1.parsePushRefV1(p, false);
      return isA2AError(r)
        ? r
        : value(await engine.listPush(r.taskId, caller), (cs: PushConfig[]) => ({
            configs: cs.map(v1.pushConfigToV1),
            nextPageToken: '',
          }));
    },
    DeleteTaskPushNotificationConfig: async (p, _n, caller) => {
      const r = v1.parsePushRefV1(p, true);
      return isA2AError(r)
        ? r
        : value(await engine.deletePush(r.taskId, r.id!, caller), () => null);
    },
    GetExtendedAgentCard: () =>
      a2aError('UNSUPPORTED_OPERATION', 'This agent has no extended agent card'),
  };
}
