/**
 * @module test/support/binary-task-log — a task log as earlier versions wrote it with
 * `TASK_STORE=log`, written here from that format's description (not by the code that wrote it):
 * `<dir>/segments/<n>.log` (n from 1, 8 digits), each change one frame: the body's length and the
 * CRC-32 of the body (u32 little-endian each), then the body: one kind byte (`T` a task record,
 * `D` a deletion), the task id (36 ASCII bytes) and, for a record, its JSON (the stored record,
 * `lume-a2a.task/1`). Appends go to the newest segment until it reaches the segment size, then the
 * next is begun. Beside the segments, that version's index `log.sqlite` (schema version 1).
 */

import { Database } from 'bun:sqlite';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeRecord } from '../../lib/a2a/store/task-folder.ts';
import type { TaskRecord } from '../../lib/a2a/store/task-store.ts';

/** One change as that log held it. */
export type BinaryChange = { put: TaskRecord } | { del: string };

/** One change as its frame. */
export function binaryFrame(change: BinaryChange): Buffer {
  const kind = 'put' in change ? 'T' : 'D';
  const id = 'put' in change ? change.put.task.id : change.del;
  const json = 'put' in change ? encodeRecord(change.put) : '';
  const body = Buffer.from(`${kind}${id}${json}`, 'utf8');
  const head = Buffer.alloc(8);
  head.writeUInt32LE(body.byteLength, 0);
  head.writeUInt32LE(Bun.hash.crc32(body) >>> 0, 4);
  return Buffer.concat([head, body]);
}

/**
 * Writes `changes` as such a log in `dir` (the node's `tasks` folder); with `tornTail`, the last
 * change is cut off half-way, as a crash mid-write left it. Answers the segment files written.
 */
export function writeBinaryLog(
  dir: string,
  changes: BinaryChange[],
  opts: { segmentBytes?: number; tornTail?: boolean } = {},
): string[] {
  const segmentBytes = opts.segmentBytes ?? 64 * 1024 * 1024;
  const folder = join(dir, 'segments');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const files: string[] = [];
  let size = Number.POSITIVE_INFINITY;
  changes.forEach((c, i) => {
    if (size >= segmentBytes) {
      files.push(join(folder, `${String(files.length + 1).padStart(8, '0')}.log`));
      writeFileSync(files.at(-1)!, '', { mode: 0o600 });
      size = 0;
    }
    let frame = binaryFrame(c);
    if (opts.tornTail && i === changes.length - 1) frame = frame.subarray(0, frame.byteLength >> 1);
    appendFileSync(files.at(-1)!, frame);
    size += frame.byteLength;
  });
  const index = new Database(join(dir, 'log.sqlite'), { create: true });
  index.exec(
    'CREATE TABLE tasks (id TEXT PRIMARY KEY, seg INTEGER, off INTEGER, size INTEGER); PRAGMA user_version = 1',
  );
  index.close();
  return files;
}
