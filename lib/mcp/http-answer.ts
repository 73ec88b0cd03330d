/**
 * @module lib/mcp/http-answer — how one MCP request is answered over Streamable HTTP, whatever the
 * revision: its method runs with an exchange (lib/mcp/exchange.ts); the answer is JSON when the
 * method ends without a word to the client first, else an SSE stream of what it said, then its
 * answer. A client that goes away (or falls too far behind) aborts the request's exchange. The
 * revision shapes the answer and its HTTP status.
 */

import { contextFromMeta, currentTrace, withTrace } from '../telemetry/trace-context.ts';
import type { Principal } from '../auth/principal.ts';
import { EventQueue } from '../event-queue.ts';
import { isPlainObject } from '../json/guards.ts';
import { sseResponse, type SseStreams } from '../sse/sse.ts';
import { createExchange } from './exchange.ts';
import type { McpMessage, RpcAnswer } from './jsonrpc.ts';
import type { McpLimits } from './limits.ts';
import type { LogLevel } from './protocol.ts';
import type { McpServer } from './server.ts';
import type { McpSession } from './sessions.ts';
import { JSON_HEADERS } from './http-refusals.ts';

export interface AnswerDeps {
  server: McpServer;
  limits: Pick<McpLimits, 'streamMessages' | 'pendingRequests' | 'clientAnswerMs'>;
  streams?: SseStreams;
}

export interface AnswerFor {
  owner: string;
  ctx: {
    session?: McpSession;
    revision: string;
    caller: Principal;
    owner?: string;
    headers?: Headers;
  };
  clientCapabilities: Record<string, unknown>;
  logLevel: LogLevel | 'none' | undefined;
  /** The answer as the revision writes it (2026-07-28: `resultType`, server info, cache hints). */
  shape?: (a: RpcAnswer) => RpcAnswer;
  /** The HTTP status of a JSON answer (default 200). */
  status?: (a: RpcAnswer) => number;
}

export async function answerRequest(
  deps: AnswerDeps,
  m: Extract<McpMessage, { kind: 'request' }>,
  o: AnswerFor,
): Promise<Response> {
  const abort = new AbortController();
  const out = new EventQueue<unknown>(() => abort.abort(), {
    maxItems: deps.limits.streamMessages,
  });
  let spoke = () => {};
  const spoken = new Promise<'spoke'>((resolve) => (spoke = () => resolve('spoke')));
  const exchange = createExchange({
    params: m.params,
    meta: isPlainObject(m.params._meta) ? m.params._meta : {},
    clientCapabilities: o.clientCapabilities,
    logLevel: o.logLevel,
    signal: abort.signal,
    ...(o.ctx.session ? { session: o.ctx.session } : {}),
    limits: deps.limits,
    send: (message) => {
      out.push(message);
      spoke();
    },
  });
  const shape = o.shape ?? ((a: RpcAnswer) => a);
  // A `traceparent` in `_meta` wins over the HTTP header's: it is the request's own.
  const meta = isPlainObject(m.params._meta) ? m.params._meta : {};
  const done = withTrace(contextFromMeta(meta) ?? currentTrace(), () =>
    deps.server.handle(m.id, m.method, m.params, { ...o.ctx, exchange }),
  ).then(shape);
  const first = await Promise.race([done, spoken]);
  if (first !== 'spoke') {
    out.close();
    return new Response(JSON.stringify(first), {
      status: o.status?.(first) ?? 200,
      headers: JSON_HEADERS,
    });
  }
  void done.then((a) => {
    out.push(a);
    out.close();
  });
  return sseResponse(
    out,
    (x) => x,
    () => out.close(),
    { ...(deps.streams ? { streams: deps.streams } : {}), owner: o.owner },
  );
}
