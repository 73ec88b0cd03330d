/**
 * @module lib/model/chat — one call to an OpenAI-compatible `/chat/completions` endpoint, with tool
 * calling. The key goes only into the Authorization header; a failure is a coded value whose
 * message names the status or the reason, never the key or the request.
 */

import { readBodyBytes } from '../body.ts';
import type { Result } from '../errors/result.ts';

/** An OpenAI-compatible chat endpoint (base URL up to `/v1`, model name, optional key). */
export interface ModelEndpoint {
  baseUrl: string;
  model: string;
  apiKey?: string;
}

/** A function the model may call: its name, what it does, and a JSON schema of its arguments. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text); parse them before use. */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: {
        id: string;
        type: 'function';
        function: { name: string; arguments: string };
      }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** What the model answered: text, tool calls, or both. */
export interface ChatReply {
  content: string | null;
  toolCalls: ToolCall[];
}

export type ModelErrorCode =
  | 'MODEL_UNREACHABLE'
  | 'MODEL_TIMEOUT'
  | 'MODEL_HTTP'
  | 'MODEL_BAD_ANSWER';

/** The largest model answer read, in bytes (docs/limits.md). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const MAX_TOOL_CALLS = 8;

/** Sends one chat request. Never throws: an unreachable, slow, failing or garbled endpoint is a coded value. */
export async function chat(
  endpoint: ModelEndpoint,
  req: {
    messages: ChatMessage[];
    tools?: ToolDefinition[];
    timeoutMs?: number;
    maxTokens?: number;
    signal?: AbortSignal;
  },
  f: typeof fetch = fetch,
): Promise<Result<ChatReply, { code: ModelErrorCode; message: string }>> {
  const timeout = AbortSignal.timeout(req.timeoutMs ?? 20_000);
  const signal = req.signal ? AbortSignal.any([timeout, req.signal]) : timeout;
  let res: Response;
  try {
    res = await f(`${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      signal,
      body: JSON.stringify({
        model: endpoint.model,
        messages: req.messages,
        ...(req.maxTokens ? { max_tokens: req.maxTokens } : {}),
        ...(req.tools?.length
          ? {
              tool_choice: 'auto',
              tools: req.tools.map((t) => ({ type: 'function', function: t })),
            }
          : {}),
      }),
    });
  } catch (e) {
    const timedOut = timeout.aborted || (e as Error)?.name === 'TimeoutError';
    return {
      ok: false,
      error: timedOut
        ? {
            code: 'MODEL_TIMEOUT',
            message: `the model did not answer within ${req.timeoutMs ?? 20_000} ms`,
          }
        : { code: 'MODEL_UNREACHABLE', message: 'the model endpoint could not be reached' },
    };
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    return {
      ok: false,
      error: { code: 'MODEL_HTTP', message: `the model endpoint answered HTTP ${res.status}` },
    };
  }
  let body: unknown;
  try {
    // A model's answer is untrusted input: read at most MAX_ANSWER_BYTES (a 50 MB one took a
    // node from 61 to 238 MiB), then parsed.
    const bytes = await readBodyBytes(res, MAX_ANSWER_BYTES);
    if (bytes === undefined) {
      await res.body?.cancel().catch(() => {});
      return {
        ok: false,
        error: {
          code: 'MODEL_BAD_ANSWER',
          message: `the model's answer is larger than ${MAX_ANSWER_BYTES} bytes`,
        },
      };
    }
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return {
      ok: false,
      error: timeout.aborted
        ? { code: 'MODEL_TIMEOUT', message: 'the model did not finish its answer in time' }
        : {
            code: 'MODEL_BAD_ANSWER',
            message: 'the model endpoint answered something other than JSON',
          },
    };
  }
  return readReply(body);
}

/** The reply in a parsed chat answer: its text and at most MAX_TOOL_CALLS tool calls. */
function readReply(body: unknown): Result<ChatReply, { code: ModelErrorCode; message: string }> {
  const message = (
    body as { choices?: { message?: { content?: unknown; tool_calls?: unknown } }[] } | null
  )?.choices?.[0]?.message;
  if (!message || typeof message !== 'object')
    return {
      ok: false,
      error: { code: 'MODEL_BAD_ANSWER', message: 'the answer has no choices[0].message' },
    };
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const toolCalls: ToolCall[] = [];
  for (const c of calls.slice(0, MAX_TOOL_CALLS)) {
    const fn = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (!fn || typeof fn.name !== 'string') continue;
    const id =
      typeof (c as { id?: unknown }).id === 'string'
        ? (c as { id: string }).id
        : `call_${toolCalls.length}`;
    toolCalls.push({
      id,
      name: fn.name,
      arguments:
        typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
    });
  }
  const content = typeof message.content === 'string' ? message.content : null;
  if (content === null && toolCalls.length === 0)
    return {
      ok: false,
      error: { code: 'MODEL_BAD_ANSWER', message: 'the answer has neither text nor tool calls' },
    };
  return { ok: true, result: { content, toolCalls } };
}

/** The smallest request that tells whether the model answers (one token). */
export async function ping(
  endpoint: ModelEndpoint,
  timeoutMs: number,
  f: typeof fetch = fetch,
): Promise<boolean> {
  const r = await chat(
    endpoint,
    { messages: [{ role: 'user', content: 'ping' }], maxTokens: 1, timeoutMs },
    f,
  );
  return r.ok;
}
