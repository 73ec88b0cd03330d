/**
 * @module lib/body — reading HTTP bodies under a size limit, for servers (requests) and clients
 * (answers) alike, without buffering more than the limit.
 */

import { fail, ok, type Failure, type Result } from './errors/result.ts';

/** Reads at most `max` bytes of a body stream; undefined when it is longer. */
async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<Uint8Array | undefined> {
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) out.set(c, (at += c.byteLength) - c.byteLength);
  return out;
}

/**
 * The bytes of an HTTP message body (a request a server received, or an answer a client got), or
 * undefined when it is over `max`. A declared Content-Length allows the fast whole-body read; a
 * chunked body is streamed and counted. (Reading through a stream reader costs several times
 * more per message in Bun, which is why the fast path matters.)
 */
export async function readBodyBytes(
  msg: Request | Response,
  max: number,
): Promise<Uint8Array | undefined> {
  const length = msg.headers.get('content-length');
  if (length === null) return readLimited(msg.body, max);
  const declared = Number(length);
  if (!Number.isSafeInteger(declared) || declared > max) {
    await msg.body?.cancel().catch(() => {});
    return undefined;
  }
  return new Uint8Array(await msg.arrayBuffer());
}

/**
 * How deep a JSON body may nest objects and arrays. A request nested deeper is refused before it
 * is parsed: deep values overflow the stack of every recursive step after parsing (writing the
 * task file, converting between protocol versions), and no message of the fleet needs more.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Values (array items, object members, containers) a request body or frame may hold, on every
 * surface that reads JSON: 4 MiB of empty items would otherwise build about a million objects.
 */
export const MAX_JSON_VALUES = 100_000;

/** Whether a JSON text nests objects and arrays deeper than `max` (see `overBounds`). */
export function nestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  return overBounds(text, max, Number.POSITIVE_INFINITY) === 'deep';
}

/**
 * Whether a JSON text nests objects and arrays deeper than `max`, or holds more than `maxValues`
 * values, counted as its containers and commas. One pass over the characters, brackets inside
 * strings ignored; it does not validate the JSON (the parser does that next).
 */
function overBounds(text: string, max: number, maxValues: number): 'deep' | 'values' | false {
  let depth = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return 'deep';
      if (++values > maxValues) return 'values';
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c && ++values > maxValues) return 'values';
  }
  return false;
}

/** A JSON body parsed under the depth limit, or why it was refused. */
export type ParsedJson = Result<
  unknown,
  Failure<'BODY_TOO_DEEP' | 'BODY_TOO_MANY_VALUES' | 'BAD_JSON'>
>;

/**
 * Parses a request body (or a frame) the process reads: refused with `BODY_TOO_DEEP` past
 * `MAX_JSON_DEPTH`, `BODY_TOO_MANY_VALUES` past `maxValues` (`MAX_JSON_VALUES` unless given),
 * `BAD_JSON` when not JSON. Both bounds are checked over the text, before any object is built.
 */
export function parseJsonBody(
  text: string,
  max = MAX_JSON_DEPTH,
  maxValues = MAX_JSON_VALUES,
): ParsedJson {
  const shape = overBounds(text, max, maxValues);
  if (shape === 'deep') return fail('BODY_TOO_DEEP', `JSON nests deeper than ${max} levels`);
  if (shape === 'values')
    return fail('BODY_TOO_MANY_VALUES', `JSON holds more than ${maxValues} values`);
  try {
    return ok(JSON.parse(text));
  } catch {
    return fail('BAD_JSON', 'body is not valid JSON');
  }
}
