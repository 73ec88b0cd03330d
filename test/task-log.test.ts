/**
 * The task log (lib/a2a/store/log-store.ts) on its own: a torn last record cut at the next open,
 * the index behind the log (a process killed with -9 before the commit) replayed, a lost index
 * rebuilt from the segments with deleted tasks staying deleted, retention and compaction within
 * their bounds, the byte bound refusing new tasks, and a file-per-task folder imported once.
 */

import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { LogTaskStore, type LogTaskStoreOptions } from '../lib/a2a/store/log-store.ts';
import { newTaskId, type TaskRecord } from '../lib/a2a/store/task-store.ts';
import type { TaskState } from '../lib/a2a/types.ts';
import { memoryLog, silentLog } from '../lib/log.ts';
import { agentNode, msgV1, rpc, startNode, tempDir } from './support/node.ts';
import { churnRecord } from './support/log-churn.ts';
import { writeTaskFiles } from './support/task-files.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

/** Recent enough that the age bound (720 h) deletes nothing. */
const NOW = Date.now() - 60_000;
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function folder(): string {
  const root = tempDir('lume-a2a-log-');
  roots.push(root);
  return join(root, 'tasks');
}

const rec = (state: TaskState = 'completed', ts = Date.now(), text = 'x'): TaskRecord =>
  churnRecord(state, ts, text);

const open = (dir: string, more: Partial<LogTaskStoreOptions> = {}) =>
  LogTaskStore.open({ dir, log: silentLog, ...more });
const segmentsOf = (dir: string) => readdirSync(join(dir, 'segments')).sort();
const lastSegment = (dir: string) => join(dir, 'segments', segmentsOf(dir).at(-1)!);

describe('crash recovery', () => {
  test('a torn last record is cut at the next open; every record before it reads back, and appends go on', async () => {
    const dir = folder();
    const store = open(dir);
    const recs = [rec(), rec('working'), rec('input-required')];
    await Promise.all(recs.map((r) => store.save(r)));
    await store.close();
    const whole = Bun.file(lastSegment(dir)).size;
    // Half a line: the start of a change without its newline (a write a kill -9 cut short).
    appendFileSync(lastSegment(dir), '{"crc":"0badf00d","id":"0190');
    const log = memoryLog();
    const again = open(dir, { log });
    expect(log.lines.some((l) => l.includes('torn last line cut'))).toBe(true);
    expect(Bun.file(lastSegment(dir)).size).toBe(whole);
    for (const r of recs) expect(again.get(r.task.id)?.task.status.state).toBe(r.task.status.state);
    const later = rec();
    await again.save(later);
    await again.close();
    const third = open(dir);
    expect(third.count()).toBe(4);
    expect(third.get(later.task.id)?.task.id).toBe(later.task.id);
    await third.close();
  });

  test('a process killed with -9 before the index commits: the next open replays the acknowledged records', async () => {
    const dir = folder();
    // The child saves tasks and kills itself once they are acknowledged (test/support/log-writer.ts).
    const child = Bun.spawn(['bun', join(import.meta.dir, 'support', 'log-writer.ts'), dir], {
      stdout: 'pipe',
    });
    const out = await new Response(child.stdout).text();
    expect(await child.exited).not.toBe(0);
    const ids = JSON.parse(out) as string[];
    expect(ids).toHaveLength(40);
    const log = memoryLog();
    const store = open(dir, { log });
    expect(log.lines.some((l) => l.includes('records replayed'))).toBe(true);
    expect(store.count()).toBe(40);
    for (const id of ids) expect(store.get(id)?.task.status.state).toBe('completed');
    const page = await store.list({ pageSize: 100, includeArtifacts: false }, 'anonymous');
    expect('tasks' in page && page.totalSize).toBe(40);
    await store.close();
  });

  test('a lost index is rebuilt from the segments; tasks retention deleted stay deleted', async () => {
    const dir = folder();
    const store = open(dir, { maxStored: 5 });
    const old = Array.from({ length: 8 }, (_, i) => rec('completed', NOW + i));
    for (const r of old) await store.save(r);
    await store.retain();
    expect(store.count()).toBe(5);
    await store.close();
    for (const n of readdirSync(dir)) if (n.startsWith('log.sqlite')) rmSync(join(dir, n));
    const again = open(dir, { maxStored: 5 });
    expect(again.count()).toBe(5);
    for (const r of old.slice(0, 3)) expect(again.get(r.task.id)).toBeUndefined();
    for (const r of old.slice(3)) expect(again.get(r.task.id)?.task.id).toBe(r.task.id);
    await again.close();
  });

  test("an index ahead of the segments (a power loss took the log's tail) is rebuilt from what is there", async () => {
    const dir = folder();
    const store = open(dir);
    const first = rec();
    await store.save(first);
    const size = Bun.file(lastSegment(dir)).size;
    await store.save(rec());
    await store.close();
    truncateSync(lastSegment(dir), size);
    const log = memoryLog();
    const again = open(dir, { log });
    expect(log.lines.some((l) => l.includes('ahead of the segments'))).toBe(true);
    expect(again.count()).toBe(1);
    expect(again.get(first.task.id)?.task.id).toBe(first.task.id);
    await again.close();
  });

  test('a record overwritten on disk reads as missing with a log line, never as another task', async () => {
    const dir = folder();
    const store = open(dir, { cacheSize: 1 });
    const a = rec();
    const b = rec();
    await store.save(a);
    await store.save(b);
    await store.close();
    const path = lastSegment(dir);
    const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
    bytes[60] = bytes[60]! ^ 0xff; // inside a's JSON
    writeFileSync(path, bytes);
    const log = memoryLog();
    const again = open(dir, { log, cacheSize: 1 });
    expect(again.get(a.task.id)).toBeUndefined();
    expect(log.lines.some((l) => l.includes('unreadable'))).toBe(true);
    expect(again.get(b.task.id)?.task.id).toBe(b.task.id);
    await again.close();
  });
});

describe('a segment in JSON Lines', () => {
  test('is one line of JSON per change, its checksum in the line: read back with a JSON tool', async () => {
    const dir = folder();
    const store = open(dir);
    const a = rec('working');
    await store.save(a);
    a.task.status = { state: 'completed', timestamp: new Date().toISOString() };
    await store.save(a);
    await store.retain();
    await store.close();
    const text = await Bun.file(lastSegment(dir)).text();
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.id, l.op, l.rec?.task.status.state])).toEqual([
      [a.task.id, 'put', 'working'],
      [a.task.id, 'put', 'completed'],
    ]);
    // The checksum: CRC-32 of the line after it, as 8 hex digits.
    const raw = text.split('\n')[0]!;
    expect(lines[0].crc).toBe(Bun.hash.crc32(raw.slice(17)).toString(16).padStart(8, '0'));
  });

  test('a line edited by hand (not JSON, or a checksum that does not match) is reported with its position and skipped, never applied', async () => {
    const dir = folder();
    const store = open(dir, { cacheSize: 1 });
    const a = rec('working');
    const b = rec('working');
    await store.save(a);
    await store.save(b);
    await store.close();
    // Lose the index, so the next open reads every line; then edit the segment by hand: b's line
    // gets another state (its checksum no longer matches), and a line of prose goes in between.
    rmSync(join(dir, 'log.sqlite'));
    const path = lastSegment(dir);
    const [la, lb] = (await Bun.file(path).text()).trimEnd().split('\n');
    const edited = lb!.replace('"working"', '"completed"');
    writeFileSync(path, `${la}\nnot json at all\n${edited}\n`);
    const log = memoryLog();
    const again = open(dir, { log, cacheSize: 1 });
    const skipped = log.lines.filter((l) => l.includes('skipped a line, never applied'));
    expect(skipped.length).toBe(2);
    expect(skipped[0]).toContain('"line":2');
    expect(skipped[0]).toContain('not a line of the task log');
    expect(skipped[1]).toContain('"line":3');
    expect(skipped[1]).toContain('checksum does not match');
    expect(skipped[1]).toContain(path);
    // a is read back; b's edit is never applied: b is not there rather than changed.
    expect(again.get(a.task.id)?.task.status.state).toBe('working');
    expect(again.get(b.task.id)).toBeUndefined();
    expect(again.count()).toBe(1);
    // The log goes on: a new change appends after the skipped lines and reads back.
    const c = rec();
    await again.save(c);
    await again.close();
    const third = open(dir);
    expect(third.get(c.task.id)?.task.id).toBe(c.task.id);
    expect(third.get(a.task.id)?.task.id).toBe(a.task.id);
    await third.close();
  });

  test('a node whose segment was edited by hand still starts and serves', async () => {
    const agent = agentNode('editable', { handle: (ctx) => ctx.complete('done') });
    const first = await startNode(agent);
    const dataDir = first.dataDir;
    roots.push(dataDir);
    const sent = await rpc(first.url, 'SendMessage', { message: msgV1('hello') });
    const id = sent.result.task.id as string;
    await first.stop();
    const dir = join(dataDir, 'editable', 'tasks');
    rmSync(join(dir, 'log.sqlite'));
    appendFileSync(lastSegment(dir), '{"crc":"00000000","id":"nonsense"}\n');
    const again = await startNode(agent, { dataDir });
    const got = await rpc(again.url, 'GetTask', { id });
    expect(got.result.id).toBe(id);
    expect(again.log.lines.some((l) => l.includes('skipped a line, never applied'))).toBe(true);
    const more = await rpc(again.url, 'SendMessage', { message: msgV1('again') });
    expect(more.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    await again.dispose();
  });
});

describe('bounds', () => {
  test('retention and compaction keep the segments few: dead records are dropped, live ones copied forward and still read', async () => {
    const dir = folder();
    const store = open(dir, { maxStored: 20, segmentBytes: 4096, cacheSize: 1 });
    const keep = rec('input-required', 1, 'kept');
    await store.save(keep);
    for (let i = 0; i < 300; i++) await store.save(rec('completed', NOW + i));
    await store.retain();
    expect(store.count()).toBe(20);
    store.compact();
    // 300 records took about 30 segments; the first, where the kept task was written, is gone.
    expect(segmentsOf(dir).length).toBeLessThanOrEqual(5);
    expect(segmentsOf(dir)[0]).not.toBe('00000001.log');
    // Live bytes: 20 small records and the kept one, a few segments of 4 KiB at most.
    expect(store.bytes).toBeLessThan(4 * 4096 + 4096);
    expect(store.get(keep.task.id)?.task.history[0]!.parts).toEqual([{ text: 'kept' }]);
    const page = await store.list({ pageSize: 50, includeArtifacts: false }, 'anonymous');
    expect('tasks' in page && page.tasks.length).toBe(20);
    await store.close();
    const again = open(dir, { maxStored: 20, segmentBytes: 4096 });
    expect(again.count()).toBe(20);
    expect(again.get(keep.task.id)?.task.status.state).toBe('input-required');
    await again.close();
    for (const n of readdirSync(dir)) if (n.startsWith('log.sqlite')) rmSync(join(dir, n));
    const rebuilt = open(dir, { maxStored: 20, segmentBytes: 4096 });
    expect(rebuilt.count()).toBe(20);
    await rebuilt.close();
  });

  test('past its bytes on disk the log refuses new tasks (hasRoom: false) until compaction frees room', async () => {
    const dir = folder();
    const store = open(dir, { segmentBytes: 2048, maxBytes: 8192 });
    const working: TaskRecord[] = [];
    while (store.hasRoom(() => 0)) {
      const r = rec('working', Date.now(), 'y'.repeat(500));
      working.push(r);
      await store.save(r);
    }
    expect(store.bytes).toBeGreaterThanOrEqual(8192);
    // Tasks in progress are live: compaction cannot free their bytes, the bound holds.
    store.compact();
    expect(store.hasRoom(() => 0)).toBe(false);
    // Finished and retained, they leave dead records that compaction drops.
    for (const r of working)
      r.task.status = { state: 'completed', timestamp: new Date(1).toISOString() };
    await Promise.all(working.map((r) => store.save(r)));
    const small = open(folder()); // another store is unaffected
    expect(small.hasRoom(() => 0)).toBe(true);
    await small.close();
    await store.close();
    const again = open(dir, { segmentBytes: 2048, maxBytes: 8192, maxStored: 1 });
    await again.retain();
    again.compact();
    expect(again.hasRoom(() => 0)).toBe(true);
    await again.close();
  });
});

describe('migration from the file-per-task layout', () => {
  test('a folder of task files is imported once into the log: every task, its push configs and creator; the files go', async () => {
    const dir = folder();
    const recs = Array.from({ length: 30 }, (_, i) =>
      rec(i % 3 ? 'completed' : 'input-required', NOW + i),
    );
    recs[0]!.creator = 'user:alice';
    recs[1]!.push = [
      { id: 'p1', taskId: recs[1]!.task.id, url: 'https://example.com/hook', version: '1.0' },
    ];
    // The layout as a node of an earlier version left it: a file per task, and its index.
    writeTaskFiles(dir, recs);
    writeFileSync(join(dir, 'index.sqlite'), '');
    mkdirSync(join(dir, 'ab'), { recursive: true });
    // A file that is not a task record stays where it is, named in the log.
    writeFileSync(join(dir, 'ab', `${newTaskId().slice(0, -2)}ab.json`), '{"not":"a task"}');
    const log = memoryLog();
    const store = open(dir, { log });
    expect(store.count()).toBe(30);
    for (const r of recs) {
      const got = store.get(r.task.id);
      expect(got?.task).toEqual(r.task);
      expect(got?.push).toEqual(r.push);
      expect(got?.creator).toEqual(r.creator);
    }
    const alice = await store.list({ pageSize: 10, includeArtifacts: false }, 'user:alice');
    expect('tasks' in alice && alice.tasks.map((t) => t.id)).toEqual([recs[0]!.task.id]);
    expect(existsSync(join(dir, 'index.sqlite'))).toBe(false);
    expect(readdirSync(dir).filter((n) => /^[0-9a-f]{2}$/.test(n))).toEqual(['ab']);
    expect(readdirSync(join(dir, 'ab'))).toHaveLength(1);
    expect(log.lines.some((l) => l.includes('not imported'))).toBe(true);
    expect(log.lines.some((l) => l.includes('"tasks":30'))).toBe(true);
    await store.close();
    // Opened again: nothing imported twice.
    const again = open(dir);
    expect(again.count()).toBe(30);
    await again.close();
  });
});

describe('a write the log cannot make', () => {
  test('is answered as an internal error, rejects no promise unhandled, and the node keeps serving', async () => {
    const caught: unknown[] = [];
    const onRejection = (e: unknown) => caught.push(e);
    process.on('unhandledRejection', onRejection);
    // Segments of one byte: every append begins a new segment file, which cannot be created once
    // the segments folder is a file (ENOTDIR).
    const n = await startNode(agentNode('failing', { handle: (ctx) => ctx.complete('done') }), {
      limits: { taskLogSegmentBytes: 1 },
    });
    roots.push(n.dataDir);
    try {
      const ok = await rpc(n.url, 'SendMessage', { message: msgV1('first') });
      expect(ok.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      const segs = join(n.dataDir, 'failing', 'tasks', 'segments');
      rmSync(segs, { recursive: true, force: true });
      writeFileSync(segs, 'not a folder');
      for (let i = 0; i < 3; i++) {
        const r = await rpc(n.url, 'SendMessage', { message: msgV1(`again ${i}`) });
        expect(r.error.code).toBe(-32603);
      }
      await new Promise((r) => setImmediate(r));
      expect(caught).toEqual([]);
      expect(n.log.lines.some((l) => l.includes('task write failed'))).toBe(true);
      expect((await fetch(`${n.url}/health`)).status).toBe(200);
    } finally {
      process.off('unhandledRejection', onRejection);
      await n.dispose();
    }
  });
});

describe('a node moved from the JSON files to the task log', () => {
  test('reads, lists and continues every task its files held, and keeps what it writes after', async () => {
    const agent = agentNode('moving', {
      handle: (ctx) => (ctx.text === 'ask' ? ctx.requireInput('which one?') : ctx.complete('done')),
    });
    const before = await startNode(agent);
    roots.push(before.dataDir);
    const done = (await rpc(before.url, 'SendMessage', { message: msgV1('hello') })).result.task;
    const asked = (await rpc(before.url, 'SendMessage', { message: msgV1('ask') })).result.task;
    await before.stop(); // the data folder stays (dispose would remove it)
    // The same tasks as a node of an earlier version kept them: a JSON file each, no log.
    const dir = join(before.dataDir, 'moving', 'tasks');
    const log = open(dir);
    const recs = [log.get(done.id)!, log.get(asked.id)!];
    await log.close();
    rmSync(dir, { recursive: true });
    writeTaskFiles(dir, recs);
    const after = await startNode(agent, { dataDir: before.dataDir });
    try {
      expect(after.log.lines.some((l) => l.includes('imported into the task log'))).toBe(true);
      const got = (await rpc(after.url, 'GetTask', { id: done.id })).result;
      expect(got.status.state).toBe('TASK_STATE_COMPLETED');
      const listed = (await rpc(after.url, 'ListTasks', {})).result;
      expect(listed.tasks.map((t: { id: string }) => t.id).sort()).toEqual(
        [done.id, asked.id].sort(),
      );
      const more = await rpc(after.url, 'SendMessage', {
        message: msgV1('that one', { taskId: asked.id }),
      });
      expect(more.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    } finally {
      await after.stop();
    }
    const again = await startNode(agent, { dataDir: before.dataDir });
    try {
      expect(again.log.lines.some((l) => l.includes('imported'))).toBe(false);
      const read = (await rpc(again.url, 'GetTask', { id: asked.id })).result;
      expect(read.status.state).toBe('TASK_STATE_COMPLETED');
    } finally {
      await again.dispose();
    }
  });
});

describe('the power-loss promise', () => {
  test('with sync, every append is fdatasynced and reads back the same after a reopen', async () => {
    const dir = folder();
    const store = open(dir, { sync: true });
    const recs = [rec(), rec('working')];
    await Promise.all(recs.map((r) => store.save(r)));
    await store.close();
    const again = open(dir, { sync: true });
    for (const r of recs) expect(again.get(r.task.id)?.task).toEqual(r.task);
    await again.close();
  });
});

describe('compaction among writes', () => {
  test('after many saves, updates, retention and compaction steps, a reopen and a rebuild read the same tasks, each as last saved', async () => {
    const dir = folder();
    const opts = { segmentBytes: 2048, maxStored: 40, cacheSize: 3 };
    const store = open(dir, opts);
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const live: TaskRecord[] = [];
    const last = new Map<string, string>();
    for (let i = 0; i < 600; i++) {
      const roll = random();
      if (roll < 0.45 || !live.length) {
        const r = rec(random() < 0.2 ? 'working' : 'completed', NOW + i, `new ${i}`);
        live.push(r);
        await store.save(r);
      } else if (roll < 0.85) {
        const r = live[Math.floor(random() * live.length)]!;
        const held = store.get(r.task.id);
        if (!held) continue; // deleted by retention
        held.task.history[0]!.parts = [{ text: `update ${i}` }];
        held.task.status = { state: 'completed', timestamp: new Date(NOW + i).toISOString() };
        await store.save(held);
      } else if (roll < 0.95) await store.retain();
      else store.compact();
      for (const r of live) {
        const got = store.get(r.task.id);
        if (got) last.set(r.task.id, JSON.stringify(got.task));
        else last.delete(r.task.id);
      }
    }
    await store.retain();
    store.compact();
    const all = async (s: LogTaskStore) => {
      const page = await s.list({ pageSize: 100, includeArtifacts: true }, 'anonymous');
      if (!('tasks' in page)) throw new Error(page.message);
      return new Map(page.tasks.map((t) => [t.id, JSON.stringify(s.get(t.id)!.task)]));
    };
    const before = await all(store);
    expect(before.size).toBe(store.count());
    expect(before).toEqual(new Map([...last].filter(([id]) => before.has(id))));
    // Compaction ran: the first segments are gone, a few remain of the many written.
    expect(segmentsOf(dir)[0]).not.toBe('00000001.log');
    expect(segmentsOf(dir).length).toBeLessThan(20);
    await store.close();
    const reopened = open(dir, opts);
    expect(await all(reopened)).toEqual(before);
    await reopened.close();
    for (const n of readdirSync(dir)) if (n.startsWith('log.sqlite')) rmSync(join(dir, n));
    const rebuilt = open(dir, opts);
    expect(await all(rebuilt)).toEqual(before);
    await rebuilt.close();
  });
});
