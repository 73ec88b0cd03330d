/**
 * @module lib/fleet/traced-call — runs one cross-node call inside a new span of the current W3C trace and
 * writes its trace record (time, from, to, capability, duration, outcome, error code, answer
 * bytes, and the trace, span and parent span ids), whatever the outcome. fleet.invoke, fleet.message and the
 * signed routes of a recording process (the hub) all go through here.
 */

import type { CallSpanDetail } from './record-span.ts';
import type { TraceRecord } from './trace.ts';
import {
  childContext,
  currentTrace,
  withTrace,
  type TraceContext,
} from '../telemetry/trace-context.ts';

/** A trace record as written (the store adds its id). */
export type CallRecordInput = Omit<TraceRecord, 'id'>;

/**
 * Filled in by a call that read its answer off the wire: the record then takes the answer's size
 * from it instead of serialising the result once more only to count its bytes.
 */
export interface CallMeter {
  answerBytes?: number;
  /** The call's own span: what its request carries as `traceparent`. */
  span: TraceContext;
  /** An A2A call's method and attributes, for its exported span (lib/fleet/record-span.ts). */
  detail?: CallSpanDetail;
}

export interface TracedCallOptions {
  /**
   * The call sends `meter.span` itself and calls nothing else that reads the current context, so
   * it need not run inside the span. Entering a context costs the whole request's async work
   * a few µs (every await and I/O callback under it carries the context); a peer call skips it.
   */
  carriesSpan?: boolean;
}

/** Where trace records go (lib/fleet/trace.ts). */
export interface CallSink {
  record(r: CallRecordInput, detail?: CallSpanDetail): { id: number };
}

/** True for answers with nothing in them: null, empty string, list or object, `found: false`, or only empty lists. */
function isEmptyResult(r: unknown): boolean {
  if (r === null || r === undefined || r === '') return true;
  if (Array.isArray(r)) return r.length === 0;
  if (typeof r !== 'object') return false;
  const o = r as Record<string, unknown>;
  const values = Object.values(o);
  if (values.length === 0 || o.found === false) return true;
  // Empty when it holds lists and every one of them is empty; the first non-empty list decides.
  let lists = 0;
  for (const v of values) {
    if (!Array.isArray(v)) continue;
    if (v.length > 0) return false;
    lists++;
  }
  return lists > 0;
}

/** The last start time written and its ISO text: calls that start in the same millisecond share it. */
let lastMs = Number.NaN;
let lastIso = '';
function isoOf(ms: number): string {
  if (ms !== lastMs) (lastMs = ms), (lastIso = new Date(ms).toISOString());
  return lastIso;
}

type CallOutcome = { ok: true; result: unknown } | { ok: false; error: { code: string } };

/**
 * Runs `call` in a child span of the current trace context (a new trace when there is none) and
 * records it in `sink`. The answer comes back with `traceId`: the id of the record it left.
 */
export async function tracedCall<R extends CallOutcome>(
  sink: CallSink,
  names: { from: string; to: string; capability: string; tenant?: string },
  call: (meter: CallMeter) => Promise<R>,
  now: () => number = Date.now,
  opts: TracedCallOptions = {},
): Promise<R & { traceId: number }> {
  const parent = currentTrace();
  const span = childContext(parent);
  const started = now();
  const t0 = performance.now();
  const meter: CallMeter = { span };
  const r = await (opts.carriesSpan ? call(meter) : withTrace(span, () => call(meter)));
  const durationMs = Math.round((performance.now() - t0) * 100) / 100;
  const bytes = !r.ok
    ? 0
    : (meter.answerBytes ??
      (r.result === undefined ? 0 : Buffer.byteLength(JSON.stringify(r.result))));
  const rec = sink.record(
    {
      ts: isoOf(started),
      ...names,
      durationMs,
      outcome: !r.ok ? 'failed' : isEmptyResult(r.result) ? 'empty' : 'ok',
      errorCode: r.ok ? null : r.error.code,
      bytes,
      traceId: span.traceId,
      spanId: span.spanId,
      parentSpanId: parent?.spanId ?? null,
    },
    meter.detail,
  );
  return { ...r, traceId: rec.id };
}
