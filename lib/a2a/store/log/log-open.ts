/**
 * @module lib/a2a/store/log/log-open — what the task log does at start before anything is read:
 * replays into the index the records after the position its last commit reflects (the writes a
 * crash left unindexed), cuts a torn last line off its segment, reports and skips a whole line
 * that is not intact (a checksum that does not match, not JSON: a segment edited by hand), and
 * rebuilds the index from every segment when it is new, outdated, or ahead of the segments (a
 * power loss).
 */

import type { Log } from '../../../log.ts';
import { metaOf, parseRecord } from '../task-folder.ts';
import { bodyJson, type Frame, KIND_RECORD } from './frame.ts';
import type { LogIndex } from './log-index.ts';
import type { Segments } from './segments.ts';

/** Rows applied between commits of a rebuild, so that it never holds them all in memory. */
const REBUILD_BATCH = 10_000;

/** Applies one frame of the log to the index, as a write of it did (or would have). */
function applyFrame(segments: Segments, index: LogIndex, seg: number, f: Frame, log: Log): void {
  const prev = index.locate(f.id);
  if (f.kind !== KIND_RECORD) {
    if (prev) index.del(f.id, prev);
    return;
  }
  let rec: ReturnType<typeof parseRecord>;
  try {
    rec = parseRecord(bodyJson(f.body), f.id);
  } catch {
    rec = undefined;
  }
  if (!rec) {
    log('warn', 'task log: skipped a line whose record is not a task of this format', {
      task: f.id,
      segment: segments.fileOf(seg),
      line: segments.lineAt(seg, f.off),
      at: f.off,
    });
    return;
  }
  index.put(f.id, metaOf(rec), { seg, off: f.off, size: f.size }, prev);
}

/** Scans one segment from `from`, applying its frames; a torn or bad end is cut off (logged). */
function replaySegment(
  segments: Segments,
  index: LogIndex,
  seg: number,
  from: number,
  log: Log,
  commitEvery?: number,
): void {
  const { end, torn } = segments.scan(
    seg,
    from,
    (f) => {
      applyFrame(segments, index, seg, f, log);
      if (commitEvery && index.pending >= commitEvery) index.commit();
    },
    undefined,
    (at, bad) =>
      log('warn', `task log: skipped a line, never applied: ${bad.bad}`, {
        segment: segments.fileOf(seg),
        line: segments.lineAt(seg, at),
        at,
        bytes: bad.size,
      }),
  );
  if (torn) {
    const size = segments.sizeOf(seg)!;
    log('warn', 'task log: a torn last line cut off the end of a segment', {
      segment: segments.fileOf(seg),
      at: end,
      bytes: size - end,
    });
    segments.truncate(seg, end);
  }
}

/** Every segment into an empty index. */
function rebuild(segments: Segments, index: LogIndex, log: Log): void {
  index.reset();
  for (const seg of segments.list()) replaySegment(segments, index, seg, 0, log, REBUILD_BATCH);
  index.advance(segments.end);
  index.rebuilt();
}

/**
 * Brings the index up to the segments: a rebuild when it is new or ahead of them, else a replay
 * of the tail after its position. Answers how many records the replay applied.
 */
export function openLog(segments: Segments, index: LogIndex, log: Log): number {
  const pos = index.position;
  const size = pos ? segments.sizeOf(pos.seg) : undefined;
  if (index.needsRebuild || !pos || size === undefined || size < pos.off) {
    if (!index.needsRebuild)
      log('warn', 'task log index is ahead of the segments (a power loss?): rebuilding it', {});
    rebuild(segments, index, log);
    return index.count;
  }
  for (const seg of segments.list()) {
    if (seg < pos.seg) continue;
    replaySegment(segments, index, seg, seg === pos.seg ? pos.off : 0, log);
  }
  const replayed = index.pending;
  index.advance(segments.end);
  index.commit();
  if (replayed)
    log('info', 'task log: records replayed into the index after a crash', { replayed });
  return replayed;
}
