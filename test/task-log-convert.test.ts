/**
 * A task log in the binary framing of earlier versions (opt-in `TASK_STORE=log`), written by
 * test/support/binary-task-log.ts from that format's description, is converted once at open into
 * JSON Lines (lib/a2a/store/log/convert.ts): every task as last written, deleted ones staying
 * deleted, a torn last frame dropped, the conversion said in the log; a crash at each point of
 * the conversion restarts cleanly; lines a later version appended after the frames are kept; a
 * node started on such a folder serves its tasks.
 */

import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import {
  appendFileSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
} from 'node:fs';
import { join } from 'node:path';
import { encodeFrames, KIND_RECORD } from '../lib/a2a/store/log/frame.ts';
import { LogTaskStore } from '../lib/a2a/store/log-store.ts';
import { encodeRecord } from '../lib/a2a/store/task-folder.ts';
import type { TaskRecord } from '../lib/a2a/store/task-store.ts';
import { memoryLog, silentLog } from '../lib/log.ts';
import { type BinaryChange, writeBinaryLog } from './support/binary-task-log.ts';
import { churnRecord } from './support/log-churn.ts';
import { agentNode, rpc, startNode, tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers on a busy machine

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function folder(): string {
  const root = tempDir('lume-a2a-convert-');
  roots.push(root);
  return join(root, 'tasks');
}

const NOW = Date.now() - 60_000;

/**
 * An old log's history: 40 tasks, a dozen updated later (in later segments), 8 deleted, and a
 * last change torn; answers the changes and each task as it should read back (undefined: gone).
 */
function history(creator?: string): {
  changes: BinaryChange[];
  want: Map<string, TaskRecord | undefined>;
} {
  const changes: BinaryChange[] = [];
  const want = new Map<string, TaskRecord | undefined>();
  const recs: TaskRecord[] = [];
  for (let i = 0; i < 40; i++) {
    const r = churnRecord(i % 5 ? 'completed' : 'input-required', NOW + i, `task ${i} `.repeat(6));
    if (creator) r.creator = creator;
    recs.push(r);
    changes.push({ put: r });
    want.set(r.task.id, r);
  }
  for (let i = 0; i < 12; i++) {
    const r = structuredClone(recs[i * 3]!);
    r.task.history[0]!.parts = [{ text: `updated ${i}` }];
    changes.push({ put: r });
    want.set(r.task.id, r);
  }
  for (let i = 0; i < 8; i++) {
    const id = recs[i * 4 + 1]!.task.id;
    changes.push({ del: id });
    want.set(id, undefined);
  }
  // The torn last change: an update no caller was answered for; the task reads as before it.
  const torn = structuredClone(recs[39]!);
  torn.task.history[0]!.parts = [{ text: 'torn' }];
  changes.push({ put: torn });
  return { changes, want };
}

/** Every task of `want` reads back from `store` as it should. */
function expectTasks(store: LogTaskStore, want: Map<string, TaskRecord | undefined>): void {
  for (const [id, rec] of want) {
    const got = store.get(id);
    if (!rec) expect(got).toBeUndefined();
    else expect(got && encodeRecord(got)).toBe(encodeRecord(rec));
  }
  expect(store.count()).toBe([...want.values()].filter(Boolean).length);
}

/** Every segment is JSON Lines; no folder of a conversion is left. */
function expectJsonLines(dir: string): void {
  expect(
    readdirSync(dir)
      .filter((n) => n.startsWith('segments'))
      .sort(),
  ).toEqual(['segments']);
  for (const n of readdirSync(join(dir, 'segments'))) {
    const text = readFileSync(join(dir, 'segments', n), 'utf8');
    for (const line of text.split('\n').slice(0, -1))
      expect(['put', 'del']).toContain((JSON.parse(line) as { op: string }).op);
    expect(text === '' || text.endsWith('\n')).toBe(true);
  }
}

const conversionLines = (log: { lines: string[] }) =>
  log.lines.filter((l) => l.includes('converted to JSON Lines'));

describe('a task log in the binary framing', () => {
  test('is converted once at open: every task as last written, deletions kept, the torn change dropped, said in the log', async () => {
    const dir = folder();
    const { changes, want } = history();
    const files = writeBinaryLog(dir, changes, { segmentBytes: 2048, tornTail: true });
    expect(files.length).toBeGreaterThan(4);
    const log = memoryLog();
    const store = LogTaskStore.open({ dir, log });
    expectTasks(store, want);
    const said = conversionLines(log);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`"segments":${files.length}`);
    expect(said[0]).toContain(`"records":${40 + 12}`);
    expect(said[0]).toContain('"deletions":8');
    expect(log.lines.some((l) => l.startsWith('warn') && l.includes('torn end'))).toBe(true);
    // It goes on as a log in JSON Lines: a new task is appended and read back.
    const added = churnRecord('completed', NOW + 100, 'after the conversion');
    await store.save(added);
    want.set(added.task.id, added);
    await store.close();
    expectJsonLines(dir);

    const again = memoryLog();
    const reopened = LogTaskStore.open({ dir, log: again });
    expect(conversionLines(again)).toEqual([]);
    expectTasks(reopened, want);
    await reopened.close();
    for (const n of readdirSync(dir)) if (n.startsWith('log.sqlite')) rmSync(join(dir, n));
    const rebuilt = LogTaskStore.open({ dir, log: silentLog });
    expectTasks(rebuilt, want);
    await rebuilt.close();
  });

  test('a crash at any point of the conversion restarts cleanly: nothing lost, nothing twice', async () => {
    const { changes, want } = history();
    // What a finished conversion writes, to stage the points a crash could stop at.
    const done = folder();
    writeBinaryLog(done, changes, { segmentBytes: 2048, tornTail: true });
    await LogTaskStore.open({ dir: done, log: silentLog }).close();
    const old = folder();
    writeBinaryLog(old, changes, { segmentBytes: 2048, tornTail: true });

    const stage = (how: (dir: string) => void) => {
      const dir = folder();
      cpSync(old, dir, { recursive: true });
      how(dir);
      return dir;
    };
    const points = {
      // Mid-copy: a converted segment half written beside the old ones.
      'mid-copy': stage((dir) => {
        cpSync(join(done, 'segments'), join(dir, 'segments.converting'), { recursive: true });
        const first = join(dir, 'segments.converting', '00000001.log');
        truncateSync(first, readFileSync(first).byteLength >> 1);
        rmSync(join(dir, 'segments.converting', '00000003.log'));
      }),
      // Between the renames: the old folder moved aside, the converted one not yet in place.
      'between the renames': stage((dir) => {
        rmSync(join(dir, 'log.sqlite'));
        renameSync(join(dir, 'segments'), join(dir, 'segments.binary'));
        cpSync(join(done, 'segments'), join(dir, 'segments.converting'), { recursive: true });
      }),
      // After the swap, before the old folder went.
      'after the swap': stage((dir) => {
        rmSync(join(dir, 'log.sqlite'));
        renameSync(join(dir, 'segments'), join(dir, 'segments.binary'));
        cpSync(join(done, 'segments'), join(dir, 'segments'), { recursive: true });
      }),
    };
    for (const [point, dir] of Object.entries(points)) {
      const store = LogTaskStore.open({ dir, log: silentLog });
      try {
        expectTasks(store, want);
      } catch (e) {
        throw new Error(`${point}: ${(e as Error).message}`);
      }
      await store.close();
      expectJsonLines(dir);
    }
  });

  test('lines in JSON Lines that a later version appended after the frames are kept', async () => {
    const dir = folder();
    const { changes, want } = history();
    const files = writeBinaryLog(dir, changes.slice(0, -1), { segmentBytes: 2048 });
    const later = churnRecord('completed', NOW + 200, 'appended in JSON Lines');
    appendFileSync(
      files.at(-1)!,
      encodeFrames([{ kind: KIND_RECORD, id: later.task.id, json: encodeRecord(later) }], []),
    );
    want.set(later.task.id, later);
    const store = LogTaskStore.open({ dir, log: silentLog });
    expectTasks(store, want);
    await store.close();
    expectJsonLines(dir);
  });
});

describe('a node upgraded on such a log', () => {
  test('serves the tasks the old log held', async () => {
    const dataDir = tempDir('lume-a2a-convert-node-');
    roots.push(dataDir);
    const { changes, want } = history('user:tester');
    const tasks = join(dataDir, 'conv', 'tasks');
    writeBinaryLog(tasks, changes, { segmentBytes: 2048, tornTail: true });
    const agent = agentNode('conv', { handle: (ctx) => ctx.complete('done') });
    const node = await startNode(agent, { dataDir });
    try {
      for (const [id, rec] of want) {
        const r = await rpc(node.url, 'GetTask', { id });
        if (!rec) expect(r.error?.data?.[0]?.reason ?? r.error?.message).toBeDefined();
        else expect(r.result.history[0].parts).toEqual(rec.task.history[0]!.parts);
      }
      expect(node.log.lines.some((l) => l.includes('converted to JSON Lines'))).toBe(true);
    } finally {
      await node.stop();
    }
    expect(existsSync(join(tasks, 'segments.binary'))).toBe(false);
  });
});
