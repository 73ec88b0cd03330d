/**
 * @module lib/peer/client — the signed client every cross-node call uses: looks the target up in the
 * fleet (names only, never URLs), signs with lib/peer/signature.ts, and turns every failure into a value.
 *
 * API:
 *   const client = createPeerClient({ signer, fleet, log? })
 *   await client.peerFetch('scanner', 'sector.movement', { day: '2025-01-02' }, { timeout: 5000 })
 *     -> { ok: true, result } | { ok: false, error: { code, message, field?, kind, status?, at? } }
 *   await client.peerRelay('crm', ['scanner'], 'sector.movement', args, { timeout })
 */

import type { Fleet } from '../config/fleet-file.ts';
import { fleetMember } from '../config/fleet-file.ts';
import type { Log } from '../log.ts';
import { readBodyBytes } from '../body.ts';
import { logs, silentLog } from '../log.ts';
import type { PeerErrorCode } from '../errors/peer.ts';
import { messageOf } from '../errors/registry.ts';
import type { CallFailure, CallFailureKind, Result } from '../errors/result.ts';
import { createDeadlines } from './deadlines.ts';
import { SCOPE } from './signature.ts';
import type { PeerSigner } from './signer.ts';
import {
  addTraceHeaders,
  currentTrace,
  withTrace,
  type TraceContext,
} from '../telemetry/trace-context.ts';

/**
 * A peer call's outcome. Failure kinds: unreachable / timeout: no answer; refused: the peer's
 * verifier said 401; failed: the peer answered ok:false; `at` names the node further down a relay.
 */
export type PeerResult<T = unknown> = Result<T, CallFailure>;

interface PeerCallOptions {
  /** Milliseconds before the call gives up with kind 'timeout' (default 10 000). */
  timeout?: number;
  /**
   * The owner key of the principal this node acts for (e.g. the console user behind a hub
   * delegation); sent in the signed body, read by the receiver's per-principal limits.
   */
  onBehalfOf?: string;
  /** Told the size of the answer read, in bytes (the trace records it; lib/fleet/traced-call.ts). */
  meter?: { answerBytes?: number };
  /**
   * The W3C trace context the request carries (default: the current one). A caller that made a
   * span for this call (lib/fleet/traced-call.ts) hands it over here instead of running the call
   * inside it; the call's log lines still name it.
   */
  trace?: TraceContext;
}

export interface PeerClient {
  /** Calls `capability` on fleet node `target` through its POST /peer/invoke. Never throws. */
  peerFetch(
    target: string,
    capability: string,
    args?: unknown,
    opts?: PeerCallOptions,
  ): Promise<PeerResult>;
  /**
   * Asks fleet node `via` to forward the call along `route` (last entry runs it). The last node
   * runs it for `opts.onBehalfOf`, or, without one, for this node (`node:<self>`). Never throws.
   */
  peerRelay(
    via: string,
    route: string[],
    capability: string,
    args?: unknown,
    opts?: PeerCallOptions & { trail?: string[] },
  ): Promise<PeerResult>;
  /** Low level: signs `body` with `scope` and posts it to `path` on `target`. Never throws. */
  post(
    target: string,
    path: string,
    scope: string,
    body: unknown,
    opts?: PeerCallOptions,
  ): Promise<PeerResult>;
}

interface PeerClientDeps {
  signer: PeerSigner;
  fleet: Fleet;
  log?: Log;
  fetch?: typeof fetch;
  /** Largest answer read, in bytes (default 8 MiB). */
  maxAnswerBytes?: number;
}

const fail = (
  code: PeerErrorCode | (string & {}),
  kind: CallFailureKind,
  message?: string,
  extra: Partial<CallFailure> = {},
): PeerResult => ({
  ok: false,
  error: { code, message: message ?? messageOf(code), kind, ...extra },
});

const utf8 = new TextDecoder();
const toUtf8 = new TextEncoder();
const tooLarge = (max: number, status: number) =>
  fail('PEER_BAD_ANSWER', 'bad-answer', `answer is larger than ${max} bytes`, { status });

/**
 * The answer's text and its size in bytes as sent, or undefined when it is over `max`. A declared
 * Content-Length (what a node's answer carries) is read as text at once, and that length is its
 * size; a chunked answer is read as bytes, counted, then decoded.
 */
async function answerText(
  res: Response,
  max: number,
): Promise<{ text: string; bytes: number } | undefined> {
  const length = res.headers.get('content-length');
  const declared = length === null ? Number.NaN : Number(length);
  if (!Number.isSafeInteger(declared)) {
    const bytes = await readBodyBytes(res, max);
    return bytes && { text: utf8.decode(bytes), bytes: bytes.byteLength };
  }
  if (declared > max) {
    await res.body?.cancel().catch(() => {});
    return undefined;
  }
  return { text: await res.text(), bytes: declared };
}
/** Every call's deadline, on one timer (lib/peer/deadlines.ts) rather than a timer per call. */
const deadlines = createDeadlines();

function parseAnswer(text: string, status: number): PeerResult {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return fail('PEER_BAD_ANSWER', 'bad-answer', `answer (HTTP ${status}) is not JSON`, { status });
  }
  const d = doc as {
    ok?: unknown;
    result?: unknown;
    error?: { code?: unknown; message?: unknown; field?: unknown; at?: unknown };
  };
  if (d && d.ok === true && status < 300)
    return typeof (d as { summary?: unknown }).summary === 'string'
      ? { ok: true, result: d.result, summary: (d as { summary: string }).summary }
      : { ok: true, result: d.result };
  if (d && d.ok === false && d.error && typeof d.error.code === 'string') {
    const kind: CallFailureKind = status === 401 ? 'refused' : 'failed';
    const message = typeof d.error.message === 'string' ? d.error.message : d.error.code;
    return fail(d.error.code, kind, message, {
      status,
      ...(typeof d.error.field === 'string' ? { field: d.error.field } : {}),
      ...(typeof d.error.at === 'string' ? { at: d.error.at } : {}),
    });
  }
  return fail('PEER_BAD_ANSWER', 'bad-answer', `answer (HTTP ${status}) is not a peer answer`, {
    status,
  });
}

/**
 * One line per call, in the trace and span of the call it tells of (lib/log.ts reads the current
 * context); nothing at all, not even the span switch, when the logger drops the line's level.
 */
function logCall(
  log: Log,
  result: PeerResult,
  call: { to: string; path: string; scope: string; started: number },
  trace: PeerCallOptions['trace'],
): void {
  if (!logs(log, result.ok ? 'debug' : 'warn')) return;
  const line = { to: call.to, path: call.path, scope: call.scope };
  const ms = Math.round(performance.now() - call.started);
  const say = () => {
    if (result.ok) log('debug', 'peer call', { ...line, ms });
    else
      log('warn', 'peer call failed', {
        ...line,
        ms,
        code: result.error.code,
        kind: result.error.kind,
      });
  };
  if (trace) withTrace(trace, say);
  else say();
}

export function createPeerClient(deps: PeerClientDeps): PeerClient {
  const log = deps.log ?? silentLog;
  const doFetch = deps.fetch ?? fetch;
  const maxAnswer = deps.maxAnswerBytes ?? 8 * 1024 * 1024;

  async function post(
    target: string,
    path: string,
    scope: string,
    body: unknown,
    opts: PeerCallOptions = {},
  ): Promise<PeerResult> {
    const member = typeof target === 'string' ? fleetMember(deps.fleet, target) : undefined;
    if (!member) return fail('PEER_NO_ROUTE', 'bad-call', 'target is not a fleet node');
    if (typeof scope !== 'string' || !SCOPE.test(scope))
      return fail('PEER_BAD_REQUEST', 'bad-call', 'capability is not a valid name');
    let bytes: Uint8Array;
    try {
      bytes = toUtf8.encode(JSON.stringify(body));
    } catch {
      return fail('PEER_BAD_REQUEST', 'bad-call', 'arguments are not serialisable as JSON');
    }
    const timeout = opts.timeout ?? 10_000;
    const started = performance.now();
    let headers: Record<string, string>;
    try {
      // The signer's headers are a new object: the rest is added to it rather than copied around it.
      headers = await deps.signer.sign({ to: target, route: path, scope }, bytes);
      // The trace context is not signed: it names spans, it grants nothing.
      addTraceHeaders(headers, opts.trace ?? currentTrace());
      headers['content-type'] = 'application/json';
    } catch {
      return fail('PEER_NO_KEY', 'bad-call');
    }
    let result: PeerResult;
    const deadline = deadlines.start(timeout);
    try {
      const res = await doFetch(member.url + path, {
        method: 'POST',
        headers,
        body: bytes as Uint8Array<ArrayBuffer>,
        signal: deadline.signal,
      });
      // Read once as text and parsed once (not bytes, then text, then JSON).
      const answer = await answerText(res, maxAnswer);
      result = answer ? parseAnswer(answer.text, res.status) : tooLarge(maxAnswer, res.status);
      if (answer && opts.meter) opts.meter.answerBytes = answer.bytes;
    } catch (e) {
      const name = (e as Error)?.name;
      result =
        name === 'TimeoutError' || name === 'AbortError'
          ? fail('PEER_TIMEOUT', 'timeout', `${target} did not answer within ${timeout} ms`)
          : fail('PEER_UNREACHABLE', 'unreachable', `${target} is unreachable`);
    } finally {
      deadline.done();
    }
    logCall(log, result, { to: target, path, scope, started }, opts.trace);
    return result;
  }

  return Object.freeze({
    post,
    peerFetch: (target: string, capability: string, args: unknown = {}, opts?: PeerCallOptions) =>
      post(
        target,
        '/peer/invoke',
        capability,
        { capability, args, ...(opts?.onBehalfOf ? { onBehalfOf: opts.onBehalfOf } : {}) },
        opts,
      ),
    peerRelay: (
      via: string,
      route: string[],
      capability: string,
      args: unknown = {},
      opts: PeerCallOptions & { trail?: string[] } = {},
    ) =>
      post(
        via,
        '/peer/relay',
        `relay:${capability}`,
        {
          route,
          capability,
          args,
          trail: opts.trail ?? [],
          ...(opts.onBehalfOf ? { onBehalfOf: opts.onBehalfOf } : {}),
        },
        opts,
      ),
  });
}
