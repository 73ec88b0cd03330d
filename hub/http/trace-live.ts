/**
 * @module hub/http/trace-live — `GET /api/trace/stream` resumable: each record goes out with its
 * id as the SSE `id:`, and a browser's EventSource that reconnects with `Last-Event-ID` first gets
 * the records it missed (read from the trace, at most `TRACE_REPLAY` of them) and then the live
 * ones, with no gap and no repeat. A cursor further behind, past the newest id, or malformed gets
 * one `event: reset` (`STREAM_RESET`) and then the live records: the page reads `/api/trace` again.
 * A stream in a tenant carries only the records of calls made for it.
 */

import type { TraceStore } from '../../lib/fleet/trace.ts';
import type { TraceRecord } from '../../lib/fleet/trace-types.ts';
import { readyFrame, resetFrame } from '../../lib/sse/live.ts';
import type { ReadyFrame } from '../../lib/sse/queue.ts';

/** Most records a reconnect is sent from the trace before going live (one trace page). */
export const TRACE_REPLAY = 500;

/** Each record's frame, made once for every stream that carries it. */
const framed = new WeakMap<TraceRecord, ReadyFrame>();
function frameOf(r: TraceRecord): ReadyFrame {
  let f = framed.get(r);
  if (!f) framed.set(r, (f = readyFrame(r, String(r.id))));
  return f;
}

/** The records after id `last`, oldest first, or 'reset' when the stream cannot go on from it. */
function missedSince(trace: TraceStore, last: string | null): TraceRecord[] | 'reset' {
  if (last === null || !/^\d{1,15}$/.test(last)) return 'reset';
  const after = Number(last);
  const newest = trace.page({ limit: 1 }).records[0]?.id ?? 0;
  if (after > newest) return 'reset';
  if (after === newest) return [];
  if (newest - after > TRACE_REPLAY) return 'reset';
  const records = trace.page({ limit: newest - after }).records.filter((r) => r.id > after);
  // Rows after the cursor were pruned: the client would miss them silently.
  if (records.at(-1)!.id !== after + 1) return 'reset';
  return records.reverse();
}

/**
 * The subscription of one trace stream: the missed records first when the client names its last
 * id, then every new record. The replay is read and the live subscription made in one synchronous
 * step (a record gets its id and reaches subscribers synchronously), so nothing falls between.
 */
export function traceFrames(trace: TraceStore, last: string | null | undefined, tenant?: string) {
  const keep = (r: TraceRecord) => tenant === undefined || r.tenant === tenant;
  return (push: (f: ReadyFrame) => void): (() => void) => {
    if (last !== undefined) {
      const missed = missedSince(trace, last);
      if (missed === 'reset')
        push(resetFrame('the trace does not hold every record after that id; read /api/trace'));
      else for (const r of missed) if (keep(r)) push(frameOf(r));
    }
    return trace.subscribe((r) => {
      if (keep(r)) push(frameOf(r));
    });
  };
}
