/**
 * @module lib/mcp/stdio-answers — what the stdio bridge makes of the hub's answers: the id a line
 * asks under, the JSON-RPC error line it writes when the hub cannot be heard, an answer read as
 * JSON within a bound, and the hub's own refusals (made before MCP, as `{ok, error}`) said as
 * JSON-RPC.
 */

import { readBodyBytes } from '../body.ts';
import { RPC } from './protocol.ts';

/** The most a single answer may carry before the bridge gives up on it. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

type Id = string | number;

/** An answer of the hub as JSON: a JSON-RPC message, or the hub's own `{ok, error}`. */
export interface HubAnswer {
  jsonrpc?: unknown;
  id?: unknown;
  result?: { protocolVersion?: unknown };
  error?: { code?: unknown; message?: unknown };
}

/** The id of a request line; null for a notification or a line that is not JSON. */
export const idOf = (line: string): Id | null => {
  try {
    const v = JSON.parse(line) as { id?: unknown };
    return typeof v?.id === 'string' || typeof v?.id === 'number' ? v.id : null;
  } catch {
    return null;
  }
};

/** A header value as 2026-07-28 writes it: plain when safe, else the Base64 sentinel form. */
const headerSafe = (v: string) =>
  /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(v) && !/^=\?base64\?.*\?=$/.test(v)
    ? v
    : `=?base64?${Buffer.from(v, 'utf8').toString('base64')}?=`;

/**
 * The HTTP headers 2026-07-28 asks of a line in its stateless form (its revision in `_meta`),
 * made from the line; undefined for a line of a session revision (or not JSON).
 */
export function statelessHeaders(line: string): Record<string, string> | undefined {
  let v: {
    method?: unknown;
    params?: { _meta?: Record<string, unknown>; name?: unknown; uri?: unknown; taskId?: unknown };
  };
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  const version = v?.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
  if (typeof version !== 'string' || typeof v.method !== 'string') return undefined;
  const named = v.method.startsWith('tasks/')
    ? v.params?.taskId
    : v.method === 'resources/read'
      ? v.params?.uri
      : v.params?.name;
  const hasName = [
    'tools/call',
    'prompts/get',
    'resources/read',
    'tasks/get',
    'tasks/update',
    'tasks/cancel',
  ].includes(v.method);
  return {
    'mcp-protocol-version': headerSafe(version),
    'mcp-method': headerSafe(v.method),
    ...(hasName && typeof named === 'string' ? { 'mcp-name': headerSafe(named) } : {}),
  };
}

/** The line answering `id` with an internal error (the hub was not heard). */
export const internalError = (id: Id | null, message: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id, error: { code: RPC.INTERNAL_ERROR, message } });

/** The answer's body as a JSON object, or undefined when it is none (or too large to read). */
export async function readAnswer(res: Response): Promise<HubAnswer | undefined> {
  const bytes = await readBodyBytes(res, MAX_ANSWER_BYTES).catch(() => undefined);
  const text = bytes ? new TextDecoder().decode(bytes) : '';
  let answer: HubAnswer | undefined;
  try {
    answer = JSON.parse(text);
  } catch {}
  return answer && typeof answer === 'object' ? answer : undefined;
}

/**
 * A refusal of the hub before MCP (a wrong token, a forged Host) as the JSON-RPC error line that
 * answers `id`; a notification has nobody to answer, so the operator hears the code instead.
 */
export function hubRefusal(
  answer: HubAnswer,
  id: Id | null,
  status: number,
): { line: string } | { warning: string } {
  const code = typeof answer.error?.code === 'string' ? answer.error.code : `HTTP_${status}`;
  const message = typeof answer.error?.message === 'string' ? answer.error.message : '';
  if (id === null) return { warning: `the hub refused a notification: ${code}` };
  const error = {
    code: status < 500 ? RPC.INVALID_REQUEST : RPC.INTERNAL_ERROR,
    message: `${code}: ${message}`,
    data: { code },
  };
  return { line: JSON.stringify({ jsonrpc: '2.0', id, error }) };
}
