/**
 * The task log's compaction reclaims what it carries forward (lib/a2a/store/log/compact.ts):
 * after churn (thousands of tasks saved, updated and deleted by retention), a full cycle leaves
 * the segments at exactly the live records, each task's newest once and no deletion line; the
 * background's passes come to rest within twice the live records and a segment; a reopen and a
 * rebuild of the index from what is left read the same tasks (none deleted comes back). Each
 * churn runs where a compaction that never ends fails the test by its time bound: in a process
 * with a deadline, or awaited on the event loop.
 */

import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { LogTaskStore } from '../lib/a2a/store/log-store.ts';
import { CHURN_OPTIONS, churn, openChurnLog } from './support/log-churn.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): churn on a busy machine

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function folder(): string {
  const root = tempDir('lume-a2a-compact-');
  roots.push(root);
  return join(root, 'tasks');
}

/** Every line of every segment, parsed, and the segments' bytes on disk. */
function onDisk(dir: string): {
  lines: { id: string; op: string; rec?: unknown }[];
  bytes: number;
} {
  const lines: { id: string; op: string; rec?: unknown }[] = [];
  let bytes = 0;
  for (const name of readdirSync(join(dir, 'segments'))) {
    const path = join(dir, 'segments', name);
    bytes += statSync(path).size;
    for (const line of readFileSync(path, 'utf8').split('\n'))
      if (line) lines.push(JSON.parse(line) as { id: string; op: string });
  }
  return { lines, bytes };
}

/** Each task the store lists, as it reads back. */
async function tasksOf(store: LogTaskStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let pageToken: string | undefined;
  do {
    const page = await store.list(
      { pageSize: 100, includeArtifacts: true, pageToken },
      'anonymous',
    );
    if (!('tasks' in page)) throw new Error(page.message);
    for (const t of page.tasks) out.set(t.id, JSON.stringify(store.get(t.id)!.task));
    pageToken = page.nextPageToken || undefined;
  } while (pageToken);
  return out;
}

/** A reopen, then a rebuild of the index from the segments alone, read `want`. */
async function readsBack(dir: string, want: Map<string, string>): Promise<void> {
  const reopened = openChurnLog(dir);
  expect(await tasksOf(reopened)).toEqual(want);
  await reopened.close();
  for (const n of readdirSync(dir)) if (n.startsWith('log.sqlite')) rmSync(join(dir, n));
  const rebuilt = openChurnLog(dir);
  expect(await tasksOf(rebuilt)).toEqual(want);
  await rebuilt.close();
}

describe('a full compaction cycle', () => {
  test('after churn, leaves exactly the live records on disk: each task once, as last saved, no deletion line', async () => {
    const dir = folder();
    // In a process with a deadline: a compaction that never ends is killed and fails the test.
    const proc = Bun.spawn(['bun', join(import.meta.dir, 'support/log-churn.ts'), dir, '3000'], {
      stdout: 'pipe',
      stderr: 'inherit',
      timeout: 20_000,
    });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    const figures = JSON.parse(out.trim()) as {
      saved: number;
      before: number;
      bytes: number;
      liveBytes: number;
      count: number;
    };
    expect(figures.saved).toBeGreaterThan(1000);
    // Retention deleted most: what stays is the count bound and tasks left working.
    expect(figures.count).toBeLessThan(figures.saved / 5);
    expect(figures.bytes).toBe(figures.liveBytes);
    expect(figures.before).toBeGreaterThan(figures.bytes);

    const store = openChurnLog(dir);
    const live = await tasksOf(store);
    await store.close();
    expect(live.size).toBe(figures.count);
    const disk = onDisk(dir);
    expect(disk.bytes).toBe(figures.liveBytes);
    expect(disk.lines.filter((l) => l.op !== 'put')).toEqual([]);
    expect(disk.lines.map((l) => l.id).sort()).toEqual([...live.keys()].sort());
    for (const l of disk.lines)
      expect(JSON.stringify((l.rec as { task: unknown }).task)).toBe(live.get(l.id)!);
    await readsBack(dir, live);
  });
});

describe('background compaction', () => {
  test('comes to rest among writes within twice the live records and a segment; what it left reads back, deleted tasks stay deleted', async () => {
    const dir = folder();
    const store = openChurnLog(dir);
    await churn(store, 3000, 11);
    // Awaited on the event loop: passes that never come to rest time the test out.
    await store.compacted();
    expect(store.bytes).toBeLessThanOrEqual(2 * store.liveBytes + 2 * CHURN_OPTIONS.segmentBytes);
    const live = await tasksOf(store);
    expect(live.size).toBe(store.count());
    const disk = onDisk(dir);
    expect(disk.bytes).toBe(store.bytes);
    await store.close();
    await readsBack(dir, live);
  });
});
