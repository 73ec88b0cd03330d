/**
 * @module lib/fleet/record-span — a trace record as the span it is exported as. A record whose
 * `to` is this process is a call it served (SERVER), any other a call it made (CLIENT). An A2A call
 * (`fleet.message`, which gives the call's A2A attributes beside its record) is named after its
 * method with OpenTelemetry's A2A attributes (docs/observability.md); a signed peer call keeps the
 * capability as its name and `rpc.method`. Both carry the record's own `lume.*` attributes.
 */

import { errorType, type OtelSpan, type SpanAttributes } from '../telemetry/a2a-span.ts';
import { specOf } from '../errors/registry.ts';
import type { TraceRecord } from './trace-types.ts';

/** What an A2A call adds to its record (not stored: the record keeps its own fields only). */
export interface CallSpanDetail {
  /** The A2A method (`SendMessage`): the span's name and `a2a.method.name`. */
  name: string;
  attributes: SpanAttributes;
}

export function recordSpan(r: TraceRecord, self: string, detail?: CallSpanDetail): OtelSpan {
  const served = r.to === self;
  const failed = r.outcome === 'failed';
  const own: SpanAttributes = {
    'lume.from': r.from,
    'lume.to': r.to,
    'lume.capability': r.capability,
    'lume.outcome': r.outcome,
    'lume.bytes': r.bytes,
    'lume.trace_record': r.id,
    ...(r.errorCode ? { 'lume.error_code': r.errorCode } : {}),
    // OpenTelemetry's A2A attribute for the tenant a call was made for.
    ...(r.tenant !== undefined ? { 'a2a.tenant': r.tenant } : {}),
  };
  const attributes: SpanAttributes = detail
    ? {
        ...detail.attributes,
        'a2a.method.name': detail.name,
        ...own,
        ...(failed && detail.attributes['error.type'] === undefined
          ? { 'error.type': errorType(r.errorCode ?? '', specOf(r.errorCode ?? '')?.rpc) }
          : {}),
      }
    : {
        'rpc.system': 'lume-a2a',
        'rpc.method': r.capability,
        'peer.service': served ? r.from : r.to,
        ...own,
      };
  return {
    traceId: r.traceId,
    spanId: r.spanId,
    ...(r.parentSpanId ? { parentSpanId: r.parentSpanId } : {}),
    name: detail?.name ?? r.capability,
    kind: served ? 'server' : 'client',
    startMs: Date.parse(r.ts),
    durationMs: r.durationMs,
    attributes,
    ...(failed ? { error: r.errorCode ?? 'failed' } : {}),
  };
}
