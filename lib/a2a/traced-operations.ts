/**
 * @module lib/a2a/traced-operations — the A2A server span of every operation a node serves, on all
 * three bindings at once: the one operation table they share, wrapped. Each operation is a SERVER
 * span named after its method (OpenTelemetry's A2A conventions, docs/observability.md) under the
 * request's W3C context, with `a2a.method.name`, `a2a.protocol.version`, `gen_ai.agent.*` from the
 * card, what the request names (message, task, tenant, conversation) and what the answer says
 * (task id and state); a stream's span lasts until the stream ends and takes the last event's
 * state. A refused operation carries `error.type` (its JSON-RPC code) and ERROR status. The
 * operation runs in the caller's context as before: its outgoing calls still hang under the
 * caller's span (the hub's trace and console nest as they did).
 */

import {
  a2aMethodName,
  errorType,
  eventAttributes,
  requestAttributes,
  resultAttributes,
  type OtelSpan,
  type SpanAttributes,
  type SpanSink,
} from '../telemetry/a2a-span.ts';
import { childContext, currentTrace } from '../telemetry/trace-context.ts';
import { specOf } from '../errors/registry.ts';
import { isA2AError } from './errors.ts';
import type { OperationTable } from './operation-table.ts';
import type { Operation, Outcome } from './operations.ts';

/** Told of every operation that ended, for the metrics (labels as the span's attributes). */
export type OperationObserver = (
  method: string,
  version: string,
  error: string | undefined,
  seconds: number,
) => void;

export interface OperationTracing {
  spans?: SpanSink;
  /** `gen_ai.agent.*` of the node's card (read when a span starts: the card may change). */
  agent: () => SpanAttributes;
  observe?: OperationObserver;
}

type Finish = (extra: SpanAttributes, error?: string) => void;

/** Ends `finish` when the stream ends (read to its end, closed by either side), with its last state. */
function watchStream(out: Extract<Outcome, { stream: unknown }>, finish: Finish): void {
  const sub = out.stream;
  let last: SpanAttributes = {};
  let done = false;
  const end = () => {
    if (done) return;
    done = true;
    finish(last, sub.overflowed ? 'STREAM_TOO_SLOW' : undefined);
  };
  const iterate = sub[Symbol.asyncIterator].bind(sub);
  sub[Symbol.asyncIterator] = async function* () {
    try {
      for await (const e of { [Symbol.asyncIterator]: iterate }) {
        last = { ...last, ...eventAttributes(e as never) };
        yield e;
      }
    } finally {
      end();
    }
  };
  const close = sub.close.bind(sub);
  sub.close = () => {
    close();
    end();
  };
}

/** A span begun under the request's context, and how it ends. */
function spanStart(name: string, version: string, params: unknown, t: OperationTracing) {
  const parent = currentTrace();
  const ctx = childContext(parent);
  const startMs = Date.now();
  const base: SpanAttributes = {
    'a2a.method.name': name,
    'a2a.protocol.version': version,
    ...t.agent(),
    ...requestAttributes(name, params),
  };
  return {
    end: (durationMs: number, extra: SpanAttributes, error?: string): OtelSpan => ({
      traceId: ctx.traceId,
      spanId: ctx.spanId,
      ...(parent ? { parentSpanId: parent.spanId } : {}),
      name,
      kind: 'server',
      startMs,
      durationMs,
      attributes: {
        ...base,
        ...extra,
        ...(error ? { 'error.type': errorType(error, specOf(error)?.rpc) } : {}),
      },
      ...(error ? { error } : {}),
    }),
  };
}

/** The params a span reads: a `/{tenant}/…` request's tenant is its path's, named in `a2a.tenant` too. */
function withTenant(params: unknown, tenant: string | undefined): unknown {
  if (tenant === undefined || params === null || typeof params !== 'object') return params;
  return 'tenant' in params ? params : { ...params, tenant };
}

function traced(method: string, version: string, op: Operation, t: OperationTracing): Operation {
  const name = a2aMethodName(method);
  const spans = t.spans;
  return async (params, notification, caller, ctx) => {
    const t0 = performance.now();
    // Without an exporter only the metrics are told: no span, no attributes read.
    const span = spans && spanStart(name, version, withTenant(params, caller.tenant), t);
    const finish: Finish = (extra, error) => {
      const durationMs = performance.now() - t0;
      t.observe?.(name, version, error && errorType(error, specOf(error)?.rpc), durationMs / 1000);
      if (spans && span) spans.add(span.end(durationMs, extra, error));
    };
    let out: Outcome;
    try {
      out = await op(params, notification, caller, ctx);
    } catch (e) {
      finish({}, 'INTERNAL_ERROR');
      throw e;
    }
    if (isA2AError(out)) finish({}, out.code);
    else if ('stream' in out) watchStream(out, finish);
    else finish(resultAttributes(out.result));
    return out;
  };
}

function wrapAll<M extends string>(
  ops: Readonly<Record<M, Operation>>,
  version: string,
  t: OperationTracing,
): Readonly<Record<M, Operation>> {
  const out = {} as Record<M, Operation>;
  for (const m of Object.keys(ops) as M[]) out[m] = traced(m, version, ops[m], t);
  return Object.freeze(out);
}

/** The table with every operation traced (the same table when nothing listens). */
export function tracedOperations(table: OperationTable, t: OperationTracing): OperationTable {
  if (!t.spans && !t.observe) return table;
  return Object.freeze({
    '1.0': wrapAll(table['1.0'], '1.0', t),
    // The 1.1 table is the 1.0 protocol with 1.1's members (gRPC always, JSON on request).
    '1.1': wrapAll(table['1.1'], '1.0', t),
    '0.3': wrapAll(table['0.3'], '0.3', t),
  });
}
