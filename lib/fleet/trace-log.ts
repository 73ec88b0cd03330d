/**
 * @module lib/fleet/trace-log — the call trace's append-only log beside its SQLite file: each group
 * of records is one `write` of one checked frame (lib/checked-frame.ts) holding the records as a
 * JSON array of rows, with no b-tree and no WAL on the call's path. On open a torn or damaged tail is cut at
 * the last whole frame and the records before it are handed back to be replayed into the table
 * (lib/fleet/trace.ts); once the table holds every record the log is emptied.
 */

import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { FRAME_HEAD, openFrame, sealFrame } from '../checked-frame.ts';
import type { TraceOutcome, TraceRecord } from './trace-types.ts';

/** A record as the log stores it: its fields by position, in COLUMNS order of the table. */
type Row = [
  number,
  string,
  string,
  string,
  string,
  number,
  TraceOutcome,
  string | null,
  number,
  string,
  string,
  string | null,
  string?,
];

const rowOf = (r: TraceRecord): Row => {
  const row: Row = [
    r.id,
    r.ts,
    r.from,
    r.to,
    r.capability,
    r.durationMs,
    r.outcome,
    r.errorCode,
    r.bytes,
    r.traceId,
    r.spanId,
    r.parentSpanId,
  ];
  // A tenant, when the call had one, as a 13th member (rows without it are untenanted).
  if (r.tenant !== undefined) row.push(r.tenant);
  return row;
};

const OUTCOMES: ReadonlySet<unknown> = new Set(['ok', 'failed', 'empty']);
const str = (v: unknown) => typeof v === 'string';
const strOrNull = (v: unknown) => v === null || typeof v === 'string';
const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v);

/** A stored row back as a record, or undefined when it is not one (a frame that is, is damaged). */
function recordOf(row: unknown): TraceRecord | undefined {
  if (!Array.isArray(row) || (row.length !== 12 && row.length !== 13)) return undefined;
  const tenant: unknown = row[12];
  if (tenant !== undefined && !str(tenant)) return undefined;
  const [
    id,
    ts,
    from,
    to,
    capability,
    durationMs,
    outcome,
    errorCode,
    bytes,
    traceId,
    spanId,
    parentSpanId,
  ] = row;
  if (!Number.isSafeInteger(id) || !str(ts) || !str(from) || !str(to) || !str(capability))
    return undefined;
  if (!num(durationMs) || !OUTCOMES.has(outcome) || !strOrNull(errorCode) || !num(bytes))
    return undefined;
  if (!str(traceId) || !str(spanId) || !strOrNull(parentSpanId)) return undefined;
  return {
    id,
    ts,
    from,
    to,
    capability,
    durationMs,
    outcome,
    errorCode,
    bytes,
    traceId,
    spanId,
    parentSpanId,
    ...(tenant !== undefined ? { tenant: tenant as string } : {}),
  };
}

export interface TraceLog {
  /** Appends `records` as one frame, with one `write`. */
  append(records: readonly TraceRecord[]): void;
  /** Empties the log (every record in it is in the table). */
  reset(): void;
  /** Bytes in the log now. */
  readonly bytes: number;
  close(): void;
}

export interface OpenedLog {
  log: TraceLog;
  /** The records of the whole frames found on open, oldest first. */
  records: TraceRecord[];
  /** Bytes cut off the end on open (a torn or damaged last write); 0 for a clean log. */
  cut: number;
}

/** Reads the whole frames of `buf` from the start; stops at the first that is short or damaged. */
function readFrames(buf: Uint8Array): { records: TraceRecord[]; end: number } {
  const text = new TextDecoder('utf-8', { fatal: true });
  const records: TraceRecord[] = [];
  let at = 0;
  for (;;) {
    const payload = openFrame(buf, at);
    if (typeof payload === 'string') break;
    let rows: unknown;
    try {
      rows = JSON.parse(text.decode(payload));
    } catch {
      break;
    }
    if (!Array.isArray(rows)) break;
    const group = rows.map(recordOf);
    if (group.some((r) => r === undefined)) break;
    records.push(...(group as TraceRecord[]));
    at += FRAME_HEAD + payload.byteLength;
  }
  return { records, end: at };
}

/** Opens (or creates) the log at `path`, cutting a torn tail; returns the records it holds. */
export function openTraceLog(path: string): OpenedLog {
  const found = existsSync(path) ? readFileSync(path) : new Uint8Array(0);
  const { records, end } = readFrames(found);
  let fd = openSync(path, 'a');
  if (end < found.byteLength) ftruncateSync(fd, end);
  let bytes = end;
  const log: TraceLog = {
    append(group) {
      if (!group.length) return;
      if (fd < 0) throw new Error('trace log is closed');
      const json = JSON.stringify(group.map(rowOf));
      const len = Buffer.byteLength(json);
      const frame = Buffer.allocUnsafe(FRAME_HEAD + len);
      frame.write(json, FRAME_HEAD, len, 'utf8');
      sealFrame(frame, 0, len);
      // One write of the whole frame; a short one (a full disk) leaves a torn tail the next open cuts.
      let at = 0;
      while (at < frame.byteLength) at += writeSync(fd, frame, at);
      bytes += frame.byteLength;
    },
    reset() {
      if (bytes === 0 || fd < 0) return;
      ftruncateSync(fd, 0);
      bytes = 0;
    },
    get bytes() {
      return bytes;
    },
    close() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
    },
  };
  return { log, records, cut: found.byteLength - end };
}
