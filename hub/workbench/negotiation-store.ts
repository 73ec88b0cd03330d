/**
 * @module hub/workbench/negotiation-store — negotiation records as one JSON file each under
 * `DATA_DIR/hub/negotiations/`: server-made ids checked before any path is formed, atomic writes
 * (lib/atomic-file.ts), a newest-first list and a read by id that fail as coded values, and
 * retention: at most a count of records, none older than an age, the oldest (by id) first.
 */

import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Failure, Result } from '../../lib/errors/result.ts';
import { writeJsonAtomic } from '../../lib/atomic-file.ts';

/** `neg-` + UTC time to the millisecond + 8 hex digits: sortable by time, nothing a path could abuse. */
const NEGOTIATION_ID = /^neg-\d{17}-[0-9a-f]{8}$/;

export type StoreError = Failure<
  'NEGOTIATION_BAD_ID' | 'NEGOTIATION_NOT_FOUND' | 'NEGOTIATION_UNREADABLE'
>;

/** Where negotiations live under a data folder. */
export const negotiationsDir = (dataDir: string): string => join(dataDir, 'hub', 'negotiations');

/** A fresh id for a negotiation started at `at` (ms). */
export function newNegotiationId(at: number): string {
  const stamp = new Date(at).toISOString().replace(/\D/g, '').slice(0, 17);
  const rand = [...crypto.getRandomValues(new Uint8Array(4))]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
  return `neg-${stamp}-${rand}`;
}

/** How many records are kept, and for how long (docs/limits.md). */
export interface NegotiationRetention {
  maxStored: number;
  maxAgeMs: number;
  now?: () => number;
}

/**
 * Writes one record atomically, then applies retention when given.
 * @throws Error when the folder cannot be written (an environment fault).
 */
export async function saveRecord(
  dir: string,
  id: string,
  record: unknown,
  retention?: NegotiationRetention,
): Promise<void> {
  if (!NEGOTIATION_ID.test(id))
    throw new Error(`negotiation-store: refusing id ${JSON.stringify(id)}`);
  await mkdir(dir, { recursive: true });
  await writeJsonAtomic(join(dir, `${id}.json`), record);
  if (retention) await retainRecords(dir, retention);
}

/** When a record's negotiation started, from its id (UTC to the millisecond). */
function startOf(id: string): number {
  const d = id.slice(4, 21);
  return Date.UTC(
    +d.slice(0, 4),
    +d.slice(4, 6) - 1,
    +d.slice(6, 8),
    +d.slice(8, 10),
    +d.slice(10, 12),
    +d.slice(12, 14),
    +d.slice(14, 17),
  );
}

/**
 * Deletes the oldest records past the count, then those started before the age bound (a record
 * is written once, when its negotiation ends). Answers how many it deleted.
 */
export async function retainRecords(dir: string, r: NegotiationRetention): Promise<number> {
  const ids = (await listIds(dir, Number.MAX_SAFE_INTEGER)).reverse(); // oldest first
  const cutoff = (r.now ?? Date.now)() - r.maxAgeMs;
  const overCount = Math.max(0, ids.length - r.maxStored);
  let deleted = 0;
  for (const [i, id] of ids.entries()) {
    if (i >= overCount && startOf(id) >= cutoff) break;
    await unlink(join(dir, `${id}.json`)).then(
      () => deleted++,
      () => {},
    );
  }
  return deleted;
}

/** One record by id, or a coded failure; the id is checked before it becomes a path. */
export async function readRecord<T>(dir: string, id: unknown): Promise<Result<T, StoreError>> {
  if (typeof id !== 'string' || !NEGOTIATION_ID.test(id))
    return {
      ok: false,
      error: {
        code: 'NEGOTIATION_BAD_ID',
        message: 'not a negotiation id (neg-<17 digits>-<8 hex>)',
      },
    };
  let text: string;
  try {
    text = await readFile(join(dir, `${id}.json`), 'utf8');
  } catch {
    return { ok: false, error: { code: 'NEGOTIATION_NOT_FOUND', message: `no negotiation ${id}` } };
  }
  try {
    return { ok: true, result: JSON.parse(text) as T };
  } catch {
    return {
      ok: false,
      error: { code: 'NEGOTIATION_UNREADABLE', message: `negotiation ${id} is not readable JSON` },
    };
  }
}

/** Ids on disk, newest first (ids sort by time); at most `limit`. */
export async function listIds(dir: string, limit: number): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.json') && NEGOTIATION_ID.test(n.slice(0, -5)))
    .map((n) => n.slice(0, -5))
    .sort()
    .reverse()
    .slice(0, limit);
}
