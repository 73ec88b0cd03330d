/**
 * @module lib/telemetry/trace-context — W3C Trace Context: strict parsing of the `traceparent` and
 * `tracestate` headers, new trace and span ids, and the context the current request's work runs
 * in (an AsyncLocalStorage), so every outgoing call can carry it without being handed it.
 *
 * A context names the span the next outgoing call hangs under. A process that records a call
 * (the hub's trace) makes a child span and runs the call inside it; a process that records nothing
 * passes on the context it was called with, unchanged, which the W3C recommendation allows and
 * which keeps its calls under the recorded call that reached it.
 */

import { AsyncLocalStorage } from 'node:async_hooks';

export interface TraceContext {
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** The current span: 16 lower-case hex digits, not all zero. */
  spanId: string;
  /** Two hex digits; bit 0 is "sampled". */
  flags: string;
  /** The caller's `tracestate`, passed on unchanged when it is well formed. */
  state?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * Reads a `traceparent` header: version 00 only, exact lengths, lower-case hex, neither id all
 * zeros. Anything else (absent, malformed, another version, two headers joined by a comma) is
 * undefined: the request then starts a new trace, it is never refused for it.
 */
export function parseTraceparent(
  value: string | null | undefined,
): { traceId: string; spanId: string; flags: string } | undefined {
  if (typeof value !== 'string' || value.length !== 55) return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, flags: m[3]! };
}

// tracestate list members: `key=value`, simple keys or `tenant@system` keys, printable values.
const TS_KEY =
  /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const TS_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const TS_MAX_MEMBERS = 32;
const TS_MAX_CHARS = 512;

/**
 * Reads a `tracestate` header: at most 32 members of `key=value`, no key twice, 512 characters
 * at most. Returns the members joined by commas, or undefined when it is absent or malformed (a
 * malformed one is dropped, as the recommendation allows).
 */
export function parseTracestate(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > TS_MAX_CHARS)
    return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of value.split(',')) {
    const member = raw.trim();
    if (member === '') continue;
    const eq = member.indexOf('=');
    if (eq <= 0) return undefined;
    const key = member.slice(0, eq);
    if (!TS_KEY.test(key) || !TS_VALUE.test(member.slice(eq + 1)) || keys.has(key))
      return undefined;
    keys.add(key);
    members.push(member);
  }
  return members.length > 0 && members.length <= TS_MAX_MEMBERS ? members.join(',') : undefined;
}

/**
 * The context an MCP request's `_meta` carries (`traceparent`, `tracestate`: MCP 2026-07-28), or
 * undefined when it names none or a malformed one (the request then keeps the HTTP context).
 */
export function contextFromMeta(meta: Record<string, unknown>): TraceContext | undefined {
  const tp = meta.traceparent;
  const parent = parseTraceparent(typeof tp === 'string' ? tp : undefined);
  if (!parent) return undefined;
  const ts = meta.tracestate;
  const state = parseTracestate(typeof ts === 'string' ? ts : undefined);
  return state === undefined ? parent : { ...parent, state };
}

/** The context a request carries, or undefined when its `traceparent` is absent or malformed. */
export function contextFromHeaders(headers: Headers): TraceContext | undefined {
  const parent = parseTraceparent(headers.get('traceparent'));
  if (!parent) return undefined;
  const state = parseTracestate(headers.get('tracestate'));
  return state === undefined ? parent : { ...parent, state };
}

/** Random bytes drawn from the system in one call and handed out as ids until used up (a bounded 4 KiB). */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

/** `bytes` random bytes in hex, never all zeros (an all-zero id is invalid: `zero` is that id). */
function randomHex(bytes: number, zero: string): string {
  // One system call fills ids for hundreds of spans; each id's bytes are used once, never again.
  if (poolAt + bytes > POOL_BYTES) crypto.getRandomValues(pool), (poolAt = 0);
  const hex = pool.toString('hex', poolAt, (poolAt += bytes));
  // The chance is nil, but the rule is cheap to keep.
  return hex === zero ? `${zero.slice(1)}1` : hex;
}

export const newTraceId = (): string => randomHex(16, ZERO_TRACE);
export const newSpanId = (): string => randomHex(8, ZERO_SPAN);

/** A new span under `parent` (same trace, its flags and state), or the root span of a new trace. */
export function childContext(parent?: TraceContext): TraceContext {
  if (!parent) return { traceId: newTraceId(), spanId: newSpanId(), flags: '01' };
  return { ...parent, spanId: newSpanId() };
}

/** The headers that carry `ctx` to the next process (none without a context). */
export function traceHeaders(ctx: TraceContext | undefined): Record<string, string> {
  return addTraceHeaders({}, ctx);
}

/** Sets the headers that carry `ctx` on `headers` (nothing without a context); returns `headers`. */
export function addTraceHeaders(
  headers: Record<string, string>,
  ctx: TraceContext | undefined,
): Record<string, string> {
  if (!ctx) return headers;
  headers.traceparent = `00-${ctx.traceId}-${ctx.spanId}-${ctx.flags}`;
  if (ctx.state) headers.tracestate = ctx.state;
  return headers;
}

const current = new AsyncLocalStorage<TraceContext | undefined>();

/** The context the running work belongs to, if any. */
export function currentTrace(): TraceContext | undefined {
  return current.getStore();
}

/** Runs `fn` (and everything it starts) inside `ctx`. */
export function withTrace<T>(ctx: TraceContext | undefined, fn: () => T): T {
  // Already inside `ctx` (a request without a traceparent, served outside any trace): nothing to switch.
  if (ctx === current.getStore()) return fn();
  return current.run(ctx, fn);
}
