/**
 * @module lib/mcp/exchange — what a method's code may say to the client while it answers one
 * request: notifications tied to the request (progress under the request's `progressToken`, log
 * messages at or above the level the client asked for), and requests of its own (`sampling/…`,
 * `elicitation/create`) whose answers come back on later POSTs. The transport decides where the
 * messages go (the request's own SSE stream); a request the client has no capability for, or
 * cannot be asked over this revision, is a coded failure, never a hang.
 */

import { isPlainObject } from '../json/guards.ts';
import { fail, ok, type Failure, type Result } from '../errors/result.ts';
import type { McpLimits } from './limits.ts';
import { LOG_LEVELS, type InputRequiredResult, type LogLevel } from './protocol.ts';
import type { ClientAnswer, McpSession } from './sessions.ts';

/** Why a request to the client brought no result. */
export type AskFailure = Failure<
  'MCP_CLIENT_CANNOT' | 'MCP_CLIENT_REFUSED' | 'MCP_CLIENT_TIMEOUT' | 'MCP_CLIENT_BUSY'
>;

export interface McpExchange {
  /** What the client can do (`sampling`, `elicitation`, …), as it declared. */
  readonly clientCapabilities: Record<string, unknown>;
  /** The request's `_meta` (progress token, trace context, …). */
  readonly meta: Record<string, unknown>;
  /** 2026-07-28: the client's answers to the input requests of an earlier round, by key. */
  readonly inputResponses: Record<string, unknown>;
  /** 2026-07-28: the state an earlier round's answer handed the client, echoed back. */
  readonly requestState: string | undefined;
  /** Aborted when the client went away or cancelled the request. */
  readonly signal: AbortSignal;
  /** A notification about this request, sent before its answer. */
  notify(method: string, params: Record<string, unknown>): void;
  /** `notifications/progress` under the request's progress token; nothing when it sent none. */
  progress(progress: number, total?: number, message?: string): void;
  /** `notifications/message` when `level` is at or above the level the client asked for. */
  log(level: LogLevel, data: unknown, logger?: string): void;
  /** Asks the client (`sampling/createMessage`, `elicitation/create`, `roots/list`) and waits for its result. */
  ask(method: string, params: Record<string, unknown>): Promise<Result<unknown, AskFailure>>;
  /**
   * What the client answers to `requests`, by key, whatever the revision: over a session each is
   * asked in turn (`ask`); over 2026-07-28 the answers of the retry's `inputResponses`, or, while
   * any is missing, the `InputRequiredResult` asking for the missing ones (the method returns it).
   */
  gather(
    requests: Record<string, InputRequest>,
  ): Promise<Result<Record<string, unknown>, AskFailure> | InputRequiredResult>;
}

export type InputRequest = { method: string; params: Record<string, unknown> };

export interface ExchangeOptions {
  /** The request's params (where a retry's `inputResponses` and `requestState` are). */
  params: Record<string, unknown>;
  meta: Record<string, unknown>;
  clientCapabilities: Record<string, unknown>;
  /** The least severe level the client wants; undefined: every level (2025-11-25) or none (a stateless request without one). */
  logLevel: LogLevel | 'none' | undefined;
  signal: AbortSignal;
  /** Sends one message toward the client. */
  send(message: Record<string, unknown>): void;
  /** The session the client's answers come back in; without one the server cannot ask. */
  session?: McpSession;
  limits: Pick<McpLimits, 'pendingRequests' | 'clientAnswerMs'>;
}

/** The capability a server request needs of the client. */
const NEEDS: Record<string, string> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

let asked = 0;

export function createExchange(o: ExchangeOptions): McpExchange {
  const token = o.meta.progressToken;
  const wants = (level: LogLevel) =>
    o.logLevel !== 'none' &&
    (o.logLevel === undefined || LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(o.logLevel));

  async function ask(
    method: string,
    params: Record<string, unknown>,
  ): Promise<Result<unknown, AskFailure>> {
    const need = NEEDS[method];
    const session = o.session;
    if (!session || (need && !isPlainObject(o.clientCapabilities[need])))
      return fail('MCP_CLIENT_CANNOT', `the client did not declare the capability ${method} needs`);
    if (session.pending.size >= o.limits.pendingRequests)
      return fail('MCP_CLIENT_BUSY', 'too many requests to this client are waiting');
    const id = `srv-${++asked}`;
    const answered = new Promise<ClientAnswer | 'timeout' | 'aborted'>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), o.limits.clientAnswerMs);
      const abort = () => resolve('aborted');
      o.signal.addEventListener('abort', abort, { once: true });
      session.pending.set(id, (a) => {
        clearTimeout(timer);
        o.signal.removeEventListener('abort', abort);
        resolve(a);
      });
    });
    o.send({ jsonrpc: '2.0', id, method, params });
    const a = await answered;
    session.pending.delete(id);
    if (a === 'timeout')
      return fail('MCP_CLIENT_TIMEOUT', `the client did not answer ${method} in time`);
    if (a === 'aborted') return fail('MCP_CLIENT_REFUSED', 'the request was cancelled');
    if ('error' in a) {
      const message = isPlainObject(a.error) ? String(a.error.message ?? '') : '';
      return fail('MCP_CLIENT_REFUSED', `the client refused ${method}: ${message.slice(0, 200)}`);
    }
    return ok(a.result);
  }

  const inputResponses = isPlainObject(o.params.inputResponses) ? o.params.inputResponses : {};

  async function gather(
    requests: Record<string, InputRequest>,
  ): Promise<Result<Record<string, unknown>, AskFailure> | InputRequiredResult> {
    const got: Record<string, unknown> = {};
    if (!o.session) {
      const cannot = Object.values(requests).find(
        (r) => NEEDS[r.method] && !isPlainObject(o.clientCapabilities[NEEDS[r.method]!]),
      );
      if (cannot)
        return fail(
          'MCP_CLIENT_CANNOT',
          `the client did not declare the capability ${cannot.method} needs`,
        );
      const missing = Object.entries(requests).filter(([k]) => !isPlainObject(inputResponses[k]));
      if (missing.length)
        return { resultType: 'input_required', inputRequests: Object.fromEntries(missing) };
      for (const k of Object.keys(requests)) got[k] = inputResponses[k];
      return ok(got);
    }
    for (const [k, r] of Object.entries(requests)) {
      const answered = await ask(r.method, r.params);
      if (!answered.ok) return answered;
      got[k] = answered.result;
    }
    return ok(got);
  }

  return {
    clientCapabilities: o.clientCapabilities,
    meta: o.meta,
    inputResponses,
    requestState: typeof o.params.requestState === 'string' ? o.params.requestState : undefined,
    signal: o.signal,
    notify: (method, params) => {
      if (!o.signal.aborted) o.send({ jsonrpc: '2.0', method, params });
    },
    progress(progress, total, message) {
      if (typeof token !== 'string' && typeof token !== 'number') return;
      this.notify('notifications/progress', {
        progressToken: token,
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      });
    },
    log(level, data, logger) {
      if (wants(level))
        this.notify('notifications/message', { level, data, ...(logger ? { logger } : {}) });
    },
    ask,
    gather,
  };
}
