/**
 * Test support: the A2A bindings of a running node behind one interface, so that one case table
 * (test/bindings.case.test.ts) runs over each of them, as Hono runs one router case table over
 * every router (`runTest({ newRouter })`). An adapter turns a v1.0 operation and its params into
 * the binding's own request and its answer back into `{ result }`, `{ error }` (the A2A reason) or
 * a list of stream frames. Each binding is one adapter: JSON-RPC, HTTP+JSON, gRPC.
 */

import { A2A_ERRORS, type A2AErrorReason, errorInfoDomain } from '../../lib/a2a/errors.ts';
import { decodeMessage } from '../../lib/a2a/grpc/decode.ts';
import { encodeMessage } from '../../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../../lib/a2a/proto/schema.ts';
import type { V1Method } from '../../lib/a2a/operations.ts';
import { grpcAddressOf, rawClient, serverStream, unary, type CallOutcome } from './grpc.ts';
import { sseFrames, TEST_TOKEN, withAuth, type TestNode } from './node.ts';

/** What an operation answered: its result in v1.0 ProtoJSON, or the A2A reason of its error. */
export type Answer = { result: any } | { error: A2AErrorReason | string };

export interface BindingAdapter {
  name: string;
  /** Calls one operation; `anonymous` sends no credentials. */
  call(op: V1Method, params: Record<string, unknown>, o?: { anonymous?: boolean }): Promise<Answer>;
  /** Calls a streaming operation and reads its frames (bare StreamResponse objects) to the end. */
  stream(
    op: 'SendStreamingMessage' | 'SubscribeToTask',
    params: Record<string, unknown>,
  ): Promise<any[]>;
  /** Releases what the adapter holds (a gRPC channel). */
  close?(): void;
}

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const reasons = Object.entries(A2A_ERRORS) as [
  A2AErrorReason,
  (typeof A2A_ERRORS)[A2AErrorReason],
][];

/** The reason an error carries (its ErrorInfo), else every reason its codes fit, joined by `|`. */
function reasonOf(
  details: unknown,
  fits: (row: (typeof A2A_ERRORS)[A2AErrorReason]) => boolean,
): string {
  const info = Array.isArray(details)
    ? details.find((d) => d && typeof d === 'object' && d['@type'] === ERROR_INFO)
    : undefined;
  if (info) return info.reason;
  // No ErrorInfo: only the reasons that are sent without one fit (lib/a2a/errors.ts).
  return reasons
    .filter(([reason, row]) => fits(row) && !errorInfoDomain(reason))
    .map(([r]) => r)
    .join('|');
}

/** JSON-RPC 2.0 on `POST /a2a`, v1.0 method names. */
/** `version`: the A2A-Version sent ('1.1' asks for 1.1's members, `generation`). */
export function jsonRpcAdapter(url: string, version = '1.0'): BindingAdapter {
  let id = 0;
  const post = (method: string, params: unknown, anonymous?: boolean) =>
    fetch(`${url}/a2a`, {
      method: 'POST',
      headers: withAuth({
        'content-type': 'application/json',
        'A2A-Version': version,
        ...(anonymous ? { Authorization: '' } : {}),
      }),
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
  return {
    name: 'JSON-RPC',
    async call(op, params, o = {}) {
      const body = (await (await post(op, params, o.anonymous)).json()) as any;
      if (body.error)
        return { error: reasonOf(body.error.data, (row) => row.rpc === body.error.code) };
      return { result: body.result };
    },
    async stream(op, params) {
      const frames: any[] = [];
      for await (const f of sseFrames(await post(op, params))) frames.push(f.result ?? f);
      return frames;
    },
  };
}

/** HTTP+JSON: each operation's own route, params from the path, query and body. */
/** `version`: the A2A-Version sent ('1.1' asks for 1.1's members, `generation`). */
export function restAdapter(url: string, version = '1.0'): BindingAdapter {
  const route = (op: V1Method, p: Record<string, any>): [string, string, unknown?] => {
    const task = (id: string) => `/tasks/${encodeURIComponent(id)}`;
    const { taskId, id, ...rest } = p;
    switch (op) {
      case 'SendMessage':
        return ['POST', '/message:send', p];
      case 'SendStreamingMessage':
        return ['POST', '/message:stream', p];
      case 'GetTask': {
        const q = new URLSearchParams();
        for (const k of ['historyLength', 'currentGeneration'])
          if (p[k] !== undefined) q.set(k, String(p[k]));
        return ['GET', `${task(id)}${q.size ? `?${q}` : ''}`];
      }
      case 'ListTasks':
        return ['GET', `/tasks?${new URLSearchParams(p as Record<string, string>)}`];
      case 'CancelTask':
        return ['POST', `${task(id)}:cancel`, {}];
      case 'SubscribeToTask':
        return ['POST', `${task(id)}:subscribe`, {}];
      case 'CreateTaskPushNotificationConfig':
        return ['POST', `${task(taskId)}/pushNotificationConfigs`, rest];
      case 'GetTaskPushNotificationConfig':
        return ['GET', `${task(taskId)}/pushNotificationConfigs/${encodeURIComponent(id)}`];
      case 'ListTaskPushNotificationConfigs':
        return ['GET', `${task(taskId)}/pushNotificationConfigs`];
      case 'DeleteTaskPushNotificationConfig':
        return ['DELETE', `${task(taskId)}/pushNotificationConfigs/${encodeURIComponent(id)}`];
      case 'GetExtendedAgentCard':
        return ['GET', '/extendedAgentCard'];
    }
  };
  const send = (op: V1Method, params: Record<string, unknown>, anonymous?: boolean) => {
    const [method, path, body] = route(op, params);
    return fetch(`${url}${path}`, {
      method,
      headers: withAuth({
        'A2A-Version': version,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(anonymous ? { Authorization: '' } : {}),
      }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  };
  return {
    name: 'HTTP+JSON',
    async call(op, params, o = {}) {
      const res = await send(op, params, o.anonymous);
      if (res.status === 204) return { result: null };
      const body = (await res.json()) as any;
      if (res.ok) return { result: body };
      return {
        error: reasonOf(
          body.error?.details,
          (row) => row.http === res.status && row.grpc === body.error?.status,
        ),
      };
    },
    async stream(op, params) {
      const frames: any[] = [];
      for await (const f of sseFrames(await send(op, params))) frames.push(f);
      return frames;
    },
  };
}

/** Each v1.0 operation's request and answer messages in the gRPC service (lib/a2a/proto/a2a.proto). */
const GRPC_TYPES: Record<V1Method, [string, string]> = {
  SendMessage: ['lf.a2a.v1.SendMessageRequest', 'lf.a2a.v1.SendMessageResponse'],
  SendStreamingMessage: ['lf.a2a.v1.SendMessageRequest', 'lf.a2a.v1.StreamResponse'],
  GetTask: ['lf.a2a.v1.GetTaskRequest', 'lf.a2a.v1.Task'],
  ListTasks: ['lf.a2a.v1.ListTasksRequest', 'lf.a2a.v1.ListTasksResponse'],
  CancelTask: ['lf.a2a.v1.CancelTaskRequest', 'lf.a2a.v1.Task'],
  SubscribeToTask: ['lf.a2a.v1.SubscribeToTaskRequest', 'lf.a2a.v1.StreamResponse'],
  CreateTaskPushNotificationConfig: [
    'lf.a2a.v1.TaskPushNotificationConfig',
    'lf.a2a.v1.TaskPushNotificationConfig',
  ],
  GetTaskPushNotificationConfig: [
    'lf.a2a.v1.GetTaskPushNotificationConfigRequest',
    'lf.a2a.v1.TaskPushNotificationConfig',
  ],
  ListTaskPushNotificationConfigs: [
    'lf.a2a.v1.ListTaskPushNotificationConfigsRequest',
    'lf.a2a.v1.ListTaskPushNotificationConfigsResponse',
  ],
  DeleteTaskPushNotificationConfig: [
    'lf.a2a.v1.DeleteTaskPushNotificationConfigRequest',
    'google.protobuf.Empty',
  ],
  GetExtendedAgentCard: ['lf.a2a.v1.GetExtendedAgentCardRequest', 'lf.a2a.v1.AgentCard'],
};

/** gRPC status numbers by name, for errors that carry no ErrorInfo. */
const GRPC_CODES: Record<string, number> = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
};

/**
 * gRPC (the node's own port, from its card), protobuf bytes through @grpc/grpc-js; `version`: the
 * `a2a-version` metadata sent.
 */
export function grpcAdapter(node: TestNode, version = '1.0'): BindingAdapter {
  const client = rawClient(grpcAddressOf(node.node.card())!);
  const metadata = (anonymous?: boolean): Record<string, string> => ({
    'a2a-version': version,
    ...(anonymous ? {} : { authorization: `Bearer ${TEST_TOKEN}` }),
  });
  const decode = (type: string, bytes: Uint8Array) => {
    const r = decodeMessage(A2A_SCHEMA, type, bytes);
    if (!r.ok) throw new Error(r.error.message);
    return r.result as any;
  };
  const errorOf = (o: CallOutcome): Answer => ({
    error:
      o.reason ??
      reasons
        .filter(([, row]) => GRPC_CODES[row.grpc] === o.code)
        .map(([r]) => r)
        .join('|'),
  });
  return {
    name: 'gRPC',
    async call(op, params, o = {}) {
      const [req, res] = GRPC_TYPES[op];
      const out = await unary(
        client,
        op,
        encodeMessage(A2A_SCHEMA, req, params),
        metadata(o.anonymous),
      );
      if (out.code !== 0) return errorOf(out);
      return { result: res === 'google.protobuf.Empty' ? null : decode(res, out.messages[0]!) };
    },
    async stream(op, params) {
      const [req, res] = GRPC_TYPES[op];
      const out = await serverStream(
        client,
        op,
        encodeMessage(A2A_SCHEMA, req, params),
        metadata(),
      );
      return out.messages.map((m) => decode(res, m));
    },
    close: () => client.close(),
  };
}
