/**
 * Benchmark: the SQLite mesh store's group commit on a file, with the log's fsync on the thread
 * pool (the store's way, lib/mesh/sqlite-sync.ts) against the same fsync run on the event loop
 * (what `synchronous = FULL` did inside every commit), side by side, alternating, in one process.
 * Each answered append does `--work` µs of other work on the loop (the hub's frames, ~20 µs), and
 * `--window` appends stay in flight, as the hub's senders keep them: an fsync on the loop holds
 * that work up, one on the pool overlaps it.
 * Usage: bun bench/mesh-store-sync.ts [--messages 60000] [--window 2048] [--work 20] [--rounds 3]
 */

import { fsyncSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLog } from '../lib/log.ts';
import { encodeText } from '../lib/mesh/payload.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import type { FsyncFn } from '../lib/mesh/sqlite-sync.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { fmt } from './mesh-common.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const MESSAGES = arg('messages', 60_000);
const WINDOW = arg('window', 2048);
const WORK_US = arg('work', 20);
const ROUNDS = arg('rounds', 3);

/** Busy for `us` microseconds (the hub's work per answered message). */
function work(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}

/** On the loop: the fsync runs before the commit's callers hear of it, as inside a FULL commit. */
const onTheLoop: FsyncFn = (fd, cb) => {
  let error: NodeJS.ErrnoException | null = null;
  try {
    fsyncSync(fd);
  } catch (e) {
    error = e as NodeJS.ErrnoException;
  }
  cb(error);
};

async function run(fsync: FsyncFn | undefined): Promise<{ rate: number; cpuUs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-sync-bench-'));
  const store = createSqliteMeshStore({
    db: openMeshDatabase(join(dir, 'mesh.sqlite')),
    log: silentLog,
    fsync,
  });
  await store.createProject({ name: 'bench' });
  let sent = 0;
  let answered = 0;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const sendOne = (): void => {
    const n = sent++;
    void store
      .append({
        project: 'bench',
        from: { name: `s${n % 8}`, presenceId: `pr-s${n % 8}` },
        messageId: `m-${n}`,
        target: { type: 'agent', name: `r${n % 8}`, presenceId: `pr-r${n % 8}` },
        payload: encodeText(`status update ${n}`),
        attachments: [],
      })
      .then((r) => {
        if (!r.ok) throw new Error(r.error.message);
        work(WORK_US);
        if (++answered === MESSAGES) finish();
        else if (sent < MESSAGES) sendOne();
      });
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < WINDOW && sent < MESSAGES; i++) sendOne();
  await done;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { rate: MESSAGES / seconds, cpuUs: (cpu.user + cpu.system) / MESSAGES };
}

console.log(
  `${fmt(MESSAGES)} appends, ${WINDOW} in flight, ${WORK_US} µs of other work per answer`,
);
for (let r = 1; r <= ROUNDS; r++)
  for (const [label, fsync] of [
    ['fsync on the event loop', onTheLoop],
    ['fsync on the thread pool', undefined],
  ] as const) {
    const x = await run(fsync);
    console.log(
      `round ${r}  ${label.padEnd(26)} ${fmt(x.rate).padStart(7)} appends/s  ${x.cpuUs.toFixed(1)} µs CPU each`,
    );
  }
