/**
 * @module lib/mcp/stdio-bridge — MCP's stdio transport in front of a hub's Streamable HTTP endpoint,
 * for harnesses that start a command: each line read is POSTed to `/mcp` with the bearer token,
 * the session id and the negotiated revision; each JSON-RPC message answered (as JSON or as SSE)
 * is written as one line; once a session exists its GET stream is followed, so server
 * notifications reach the harness too. A line in 2026-07-28's stateless form (its revision in
 * `_meta`) is sent with no session and with the headers that revision requires, made from the line
 * itself (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`); a `subscriptions/listen` stays open
 * beside the other lines. Lines are sent in order. Nothing else is ever written. What each kind
 * of answer becomes is lib/mcp/stdio-answers.ts.
 */

import { sseFrames } from '../sse/frames.ts';
import {
  hubRefusal,
  idOf,
  internalError,
  MAX_ANSWER_BYTES,
  readAnswer,
  statelessHeaders,
} from './stdio-answers.ts';

export interface StdioBridgeOptions {
  /** The hub's MCP endpoint, e.g. http://127.0.0.1:4100/mcp. */
  url: string;
  token?: string;
  /** Writes one message line to stdout. */
  write(line: string): void;
  /** Says something to the operator (stderr). */
  warn(message: string): void;
  fetch?: typeof fetch;
}

/** The data of each event of a server-message stream; an event past the answer bound ends it. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  for await (const frame of sseFrames(body, MAX_ANSWER_BYTES)) {
    if ('tooLarge' in frame) return;
    if (frame.data) yield frame.data;
  }
}

// long: one closure over the bridge's state (session id, revision, its stream, the order of lines, the open subscriptions)
export function createStdioBridge(o: StdioBridgeOptions) {
  const f = o.fetch ?? fetch;
  let session: string | undefined;
  let version: string | undefined;
  let stream: AbortController | undefined;
  let chain = Promise.resolve();
  /** Ends the open `subscriptions/listen` streams when the bridge closes. */
  const listening = new AbortController();

  const headers = (extra: Record<string, string>) => ({
    ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
    ...(session ? { 'mcp-session-id': session } : {}),
    ...(version ? { 'mcp-protocol-version': version } : {}),
    ...extra,
  });
  /** One message line: parsed and written again, so it holds no newline. */
  const emit = (text: string) => {
    try {
      o.write(JSON.stringify(JSON.parse(text)));
    } catch {
      o.warn('the hub answered something that is not JSON; dropped');
    }
  };

  /** Follows the session's server-message stream until the session ends. */
  async function follow(): Promise<void> {
    stream = new AbortController();
    try {
      const res = await f(o.url, {
        headers: headers({ accept: 'text/event-stream' }),
        signal: stream.signal,
      });
      if (res.status !== 200 || !res.body) return;
      for await (const data of sseData(res.body)) emit(data);
    } catch {
      // The stream ended (the hub stopped, or the bridge is closing).
    }
  }

  async function send(
    line: string,
    stateless?: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<void> {
    const id = idOf(line);
    let res: Response;
    const base = {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    };
    try {
      res = await f(o.url, {
        method: 'POST',
        // The stateless revision has no session: only the token and the line's own headers.
        headers: stateless
          ? { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...base, ...stateless }
          : headers(base),
        body: line,
        ...(signal ? { signal } : {}),
      });
    } catch {
      if (id !== null) o.write(internalError(id, `the hub is unreachable at ${o.url}`));
      return;
    }
    if (res.status === 202) return;
    const type = res.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream') && res.body) {
      try {
        for await (const data of sseData(res.body)) emit(data);
      } catch {
        // The stream ended (the hub stopped, or a subscription's bridge is closing).
      }
      return;
    }
    const answer = await readAnswer(res);
    if (!answer) {
      if (id !== null) o.write(internalError(id, `the hub answered HTTP ${res.status}`));
      return;
    }
    // The hub's own refusals before MCP (a wrong token, a forged Host) are {ok, error}: said as JSON-RPC.
    if (answer.jsonrpc !== '2.0') {
      const said = hubRefusal(answer, id, res.status);
      return 'line' in said ? o.write(said.line) : o.warn(said.warning);
    }
    // A refusal before any session (401, 404, …) carries no id: it answers this request.
    if (answer.error !== undefined && answer.id === null && id !== null) answer.id = id;
    const made = res.headers.get('mcp-session-id');
    if (made && typeof answer.result?.protocolVersion === 'string') {
      session = made;
      version = answer.result.protocolVersion;
      void follow();
    }
    o.write(JSON.stringify(answer));
  }

  return {
    /** Queues one line read from stdin. */
    line(line: string): Promise<void> {
      if (!line.trim()) return chain;
      const stateless = statelessHeaders(line.trim());
      // A subscription lasts: it must not hold back the lines after it.
      if (stateless?.['mcp-method'] === 'subscriptions/listen') {
        void chain.then(() => send(line.trim(), stateless, listening.signal));
        return chain;
      }
      chain = chain.then(() => send(line.trim(), stateless));
      return chain;
    },
    /** Ends the session on the hub (stdin closed). */
    async close(): Promise<void> {
      await chain;
      stream?.abort();
      listening.abort();
      if (session)
        await f(o.url, { method: 'DELETE', headers: headers({}) }).catch(() => undefined);
    },
  };
}
