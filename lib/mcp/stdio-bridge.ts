/**
 * @module lib/mcp/stdio-bridge — MCP's stdio transport in front of a hub's Streamable HTTP endpoint,
 * for harnesses that start a command: each line read is POSTed to `/mcp` with the bearer token,
 * the session id and the negotiated revision; each JSON-RPC message answered (as JSON or as SSE)
 * is written as one line; once a session exists its GET stream is followed, so server
 * notifications reach the harness too. Lines are sent in order. Nothing else is ever written.
 * What each kind of answer becomes is lib/mcp/stdio-answers.ts.
 */

import { sseFrames } from '../sse/frames.ts';
import { hubRefusal, idOf, internalError, MAX_ANSWER_BYTES, readAnswer } from './stdio-answers.ts';

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

export function createStdioBridge(o: StdioBridgeOptions) {
  const f = o.fetch ?? fetch;
  let session: string | undefined;
  let version: string | undefined;
  let stream: AbortController | undefined;
  let chain = Promise.resolve();

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

  async function send(line: string): Promise<void> {
    const id = idOf(line);
    let res: Response;
    try {
      res = await f(o.url, {
        method: 'POST',
        headers: headers({
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        }),
        body: line,
      });
    } catch {
      if (id !== null) o.write(internalError(id, `the hub is unreachable at ${o.url}`));
      return;
    }
    if (res.status === 202) return;
    const type = res.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream') && res.body) {
      for await (const data of sseData(res.body)) emit(data);
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
      chain = chain.then(() => send(line.trim()));
      return chain;
    },
    /** Ends the session on the hub (stdin closed). */
    async close(): Promise<void> {
      await chain;
      stream?.abort();
      if (session)
        await f(o.url, { method: 'DELETE', headers: headers({}) }).catch(() => undefined);
    },
  };
}
