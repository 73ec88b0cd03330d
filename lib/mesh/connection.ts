/**
 * @module lib/mesh/connection — one WebSocket presence: hello and claim (optionally resuming a live
 * presence and recovering missed messages), sends matched to their answer by `requestId`, inbound
 * messages handled one at a time in sequence order and acknowledged after the handler finishes, and
 * a watchdog that gives the hub up when its heartbeat stops. A connection never reconnects by itself
 * (the client does that). This file opens the socket and wires the parts: the hub's frames
 * (lib/mesh/connection-frames.ts), the inbound queue (connection-inbound.ts) and the socket's
 * lifetime (connection-state.ts, which owns the state).
 */

import type { MeshConnection, SendInput } from './connection-context.ts';
import { onHubFrame } from './connection-frames.ts';
import { ConnectionState } from './connection-state.ts';
import { fail, type ClientCode, type Result } from './errors.ts';
import { PROTOCOL_VERSION } from './limits.ts';
import { newMessageId } from './names.ts';
import { encodeText } from './payload.ts';
import type { ConnectOptions, SendReceipt } from './connection-context.ts';

export type {
  ClaimedFrame,
  ConnectionEvents,
  ConnectOptions,
  DeliveryEvent,
  MeshConnection,
  SendInput,
  SendReceipt,
  SendTarget,
} from './connection-context.ts';
export { CLOSE_GRACE_MS } from './connection-state.ts';

const wsUrl = (hubUrl: string) => `${hubUrl.replace(/\/+$/, '').replace(/^http/, 'ws')}/v1/connect`;

/** Opens a socket and claims `name` in `project`; resolves once `claimed` (or the refusal) arrives. */
export function openConnection(o: ConnectOptions): Promise<Result<MeshConnection, ClientCode>> {
  const Ws = o.WebSocket ?? WebSocket;
  let ws: WebSocket;
  try {
    ws = new Ws(wsUrl(o.hubUrl));
  } catch (e) {
    return Promise.resolve(
      fail('A2A_CLIENT_CONNECT', `cannot open ${wsUrl(o.hubUrl)}: ${(e as Error).message}`),
    );
  }
  const claim = Promise.withResolvers<Result<MeshConnection, ClientCode>>();
  let settled = false;
  const c = new ConnectionState(o, ws, Ws, (r) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    claim.resolve(r);
  });
  const connection = connectionOf(c);
  const timer = setTimeout(() => {
    c.settle(fail('A2A_CLIENT_CONNECT', 'the hub did not answer hello in time'));
    c.close(1000, 'claim timeout');
  }, o.claimTimeoutMs ?? 10_000);
  ws.onopen = () => c.send(hello(o));
  ws.onmessage = (ev) => onHubFrame(c, connection, ev.data);
  ws.onerror = () => {
    // The close event follows and carries what is known.
  };
  ws.onclose = (ev) => c.finish(ev.code, ev.reason);
  return claim.promise;
}

/** The first frame: the claim of a name, with the token, resume secret and recovery position when given. */
const hello = (o: ConnectOptions) => ({
  type: 'hello',
  protocolVersion: PROTOCOL_VERSION,
  project: o.project,
  name: o.name,
  ...(o.token ? { token: o.token } : {}),
  ...(o.anonymous ? { anonymous: true } : {}),
  ...(o.resume ? { resume: o.resume } : {}),
  ...(o.recover ? { recover: o.recover } : {}),
});

/** The connection as its user sees it. */
function connectionOf(c: ConnectionState): MeshConnection {
  return {
    project: c.o.project,
    get self() {
      return c.self!;
    },
    peers: () => c.peers(),
    get closed() {
      return c.closed;
    },
    on: c.events.on,
    send: (input) => send(c, input),
    close: (code = 1000, reason = 'bye') => c.close(code, reason),
    done: new Promise((resolve) => c.events.on('close', resolve)),
  };
}

function send(c: ConnectionState, input: SendInput): Promise<Result<SendReceipt, ClientCode>> {
  const messageId = input.messageId ?? newMessageId();
  return c.request((requestId) => ({
    type: 'message',
    requestId,
    messageId,
    target: input.target,
    payload: encodeText(input.text),
    attachments: input.attachments ?? [],
    ...(input.replyTo ? { replyTo: input.replyTo } : {}),
  }));
}
