/**
 * @module lib/fleet/trace-types — the shapes of the call trace: one record per cross-node call,
 * and the query that pages them (lib/fleet/trace.ts keeps them).
 */

export type TraceOutcome = 'ok' | 'failed' | 'empty';

export interface TraceRecord {
  id: number;
  /** ISO 8601 time the call started. */
  ts: string;
  from: string;
  to: string;
  capability: string;
  durationMs: number;
  outcome: TraceOutcome;
  errorCode: string | null;
  /** Size of the answer in bytes as the node sent it (of the result, for a call answered in process); 0 for a failure. */
  bytes: number;
  /** W3C trace id (32 hex digits): every call one request caused shares it. */
  traceId: string;
  /** This call's span id (16 hex digits), sent on as `traceparent`. */
  spanId: string;
  /** The span the call was made under (another record's `spanId`, or the caller's), or null. */
  parentSpanId: string | null;
  /** The tenant the call was made for (lib/node/tenants.ts); absent for an untenanted call. */
  tenant?: string;
}

export interface TraceQuery {
  /** 1..500, default 50. */
  limit?: number;
  /** Only records with a smaller id (the cursor of the previous page). */
  before?: number;
  from?: string;
  to?: string;
  capability?: string;
  outcome?: TraceOutcome;
  /** Only the records of one W3C trace. */
  traceId?: string;
  /** Only the records made for these tenants (an empty list: none). */
  tenants?: readonly string[];
}
