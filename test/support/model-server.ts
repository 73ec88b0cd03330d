/**
 * Test support: an OpenAI-compatible model server on port 0 (`POST /v1/chat/completions`, real
 * HTTP). Each test scripts its answers with `answer(body)`: text, tool calls, an HTTP failure, or
 * a slow answer; `down()` makes every request fail with 503 until `up()`. Every request is
 * recorded with its Authorization header, so a test can check what reached the model.
 */

export interface ChatBody {
  model: string;
  messages: {
    role: string;
    content?: string | null;
    tool_calls?: ToolCall[];
    tool_call_id?: string;
    name?: string;
  }[];
  tools?: {
    type: 'function';
    function: { name: string; description?: string; parameters?: unknown };
  }[];
  [key: string]: unknown;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** What a scripted answer may be. */
export type Scripted =
  | { text: string }
  | { calls: { name: string; args: unknown }[] }
  | { status: number }
  | { stallMs: number; then: Scripted };

export interface ModelServer {
  /** Base URL clients configure (ends with `/v1`). */
  baseUrl: string;
  /** Every request, pings included. */
  requests: { auth: string | null; body: ChatBody }[];
  /** The script: called for every chat request that is not a ping while the server is up. */
  answer: (body: ChatBody) => Scripted;
  down(): void;
  up(): void;
  stop(): void;
}

let callId = 0;

/** Builds the OpenAI-shaped completion for a scripted answer. */
function completion(s: Exclude<Scripted, { status: number } | { stallMs: number }>): unknown {
  const message =
    'text' in s
      ? { role: 'assistant', content: s.text }
      : {
          role: 'assistant',
          content: null,
          tool_calls: s.calls.map((c) => ({
            id: `call_${++callId}`,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.args) },
          })),
        };
  return {
    id: `cmpl-${callId}`,
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: 'text' in s ? 'stop' : 'tool_calls' }],
  };
}

export function startModelServer(
  answer: ModelServer['answer'] = () => ({ text: 'ok' }),
): ModelServer {
  let isUp = true;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const model: ModelServer = {
    baseUrl: '',
    requests: [],
    answer,
    down: () => void (isUp = false),
    up: () => void (isUp = true),
    stop: () => {
      for (const t of timers) clearTimeout(t);
      server.stop(true);
    },
  };
  const reply = async (s: Scripted): Promise<Response> => {
    if ('status' in s)
      return Response.json({ error: { message: 'scripted failure' } }, { status: s.status });
    if ('stallMs' in s) {
      await new Promise<void>((r) => timers.add(setTimeout(r, s.stallMs)));
      return reply(s.then);
    }
    return Response.json(completion(s));
  };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      if (new URL(req.url).pathname !== '/v1/chat/completions' || req.method !== 'POST')
        return new Response('not found', { status: 404 });
      const body = (await req.json()) as ChatBody;
      model.requests.push({ auth: req.headers.get('authorization'), body });
      if (!isUp) return Response.json({ error: { message: 'model unavailable' } }, { status: 503 });
      // A health ping (one token, "ping") is answered without the script.
      if (isPing(body)) return reply({ text: 'pong' });
      return reply(model.answer(body));
    },
  });
  model.baseUrl = `http://127.0.0.1:${server.port}/v1`;
  return model;
}

/** Whether a request is a health ping (lib/model/chat.ts `ping`). */
export const isPing = (b: ChatBody) =>
  b.max_tokens === 1 && b.messages.length === 1 && b.messages[0]!.content === 'ping';

/** The last user message of a chat request (what the agent was asked). */
export const lastUser = (b: ChatBody) =>
  [...b.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
/** Whether the request already carries tool results (the model's second step). */
export const hasToolResults = (b: ChatBody) => b.messages.some((m) => m.role === 'tool');
