/**
 * @module bench/side-by-side-parts — what bench/side-by-side.ts is built from: starting a server
 * process and finding its port, writing stored tasks into a node's embedded store before it
 * starts, and the tables of figures and of the targets' verdicts.
 */

import { join } from 'node:path';
import { LogTaskStore } from '../lib/a2a/store/log-store.ts';
import type { TaskRecord } from '../lib/a2a/store/task-store.ts';
import { silentLog } from '../lib/log.ts';

/** One server configuration the benchmark runs. */
export interface Row {
  key: string;
  name: string;
  cmd: string[];
  env?: Record<string, string>;
  /** The request body file, when not the text question. */
  body?: string;
  /** Runs on PostgreSQL: the cluster's CPU is counted apart. */
  pg?: boolean;
}

/** One measured run: req/s, server CPU µs per request, PostgreSQL's CPU µs per request. */
export interface Run {
  rps: number;
  cpu: number;
  pgCpu: number;
  errors: number;
}
export type Runs = Map<string, Run[]>;

/** Starts `cmd` on port 0; resolves with its port once it prints it, its output drained after. */
export async function spawnServer(root: string, cmd: string[], env: Record<string, string>) {
  const proc = Bun.spawn(cmd, {
    cwd: root,
    env: { ...process.env, PORT: '0', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const reader = proc.stdout.getReader();
  let seen = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${cmd.join(' ')} exited before listening`);
    seen += new TextDecoder().decode(value);
    const m = /(?:LISTENING |listening on http:\/\/[^:\s]+:)(\d+)/.exec(seen);
    if (m) {
      // Keep reading, so a server that prints more never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done);
      })().catch(() => {});
      return { proc, port: Number(m[1]) };
    }
  }
}

/** A completed task of the kind scanner stores for a question: the question, the answer. */
function taskAt(ts: number): TaskRecord {
  const id = Bun.randomUUIDv7('hex', ts);
  const contextId = crypto.randomUUID();
  const at = new Date(ts).toISOString();
  return {
    task: {
      id,
      contextId,
      status: {
        state: 'completed',
        timestamp: at,
        message: {
          messageId: crypto.randomUUID(),
          role: 'agent',
          parts: [{ text: 'Energy moved most today: +1.2 %.' }],
          contextId,
          taskId: id,
        },
      },
      artifacts: [],
      history: [
        {
          messageId: crypto.randomUUID(),
          role: 'user',
          parts: [{ text: 'which sector moved today?' }],
          contextId,
          taskId: id,
        },
      ],
    },
    push: [],
    creator: 'anonymous',
  };
}

/**
 * Writes `n` completed tasks into node `name`'s embedded store in `dataDir` through the store
 * itself (as the node would have, a thousand per write), one a second ending an hour ago;
 * resolves with the seconds it took.
 */
export async function fillTasks(dataDir: string, name: string, n: number): Promise<number> {
  const t0 = performance.now();
  const store = LogTaskStore.open({
    dir: join(dataDir, name, 'tasks'),
    log: silentLog,
    maxStored: n * 2,
  });
  const start = Date.now() - 3_600_000 - n * 1000;
  for (let i = 0; i < n; i += 1000) {
    const batch: Promise<void>[] = [];
    for (let j = i; j < Math.min(n, i + 1000); j++)
      batch.push(store.save(taskAt(start + j * 1000)));
    await Promise.all(batch);
  }
  await store.close();
  return (performance.now() - t0) / 1000;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const rpsOf = (runs: Runs, key: string) => mean(runs.get(key)!.map((r) => r.rps));
const cpuOf = (runs: Runs, key: string) => Math.min(...runs.get(key)!.map((r) => r.cpu));
const pgCpuOf = (runs: Runs, key: string) => Math.min(...runs.get(key)!.map((r) => r.pgCpu));
const fmt = (n: number) => Math.round(n).toLocaleString('en');

/** The figures of `rows`, each against the row `base` (req/s and capacity). */
export function table(rows: Row[], runs: Runs, base = 'sdk'): string {
  const baseRps = rpsOf(runs, base);
  const baseCpu = cpuOf(runs, base);
  const lines = rows.map((row) => {
    const rs = runs.get(row.key)!;
    const range = `${fmt(Math.min(...rs.map((r) => r.rps)))}–${fmt(Math.max(...rs.map((r) => r.rps)))}`;
    const cpu = cpuOf(runs, row.key);
    const pgCpu = row.pg ? ` + ${fmt(pgCpuOf(runs, row.key))}` : '';
    const errors = rs.reduce((a, r) => a + r.errors, 0);
    return `| ${row.name} | ${fmt(rpsOf(runs, row.key))} (${range}) | ${(rpsOf(runs, row.key) / baseRps).toFixed(2)}× | ${fmt(cpu)}${pgCpu} | ${(baseCpu / cpu).toFixed(2)}× | ${errors} |`;
  });
  const baseName = rows.find((r) => r.key === base)?.name ?? base;
  return [
    `| server | req/s (rounds) | req/s vs ${base === 'sdk' ? 'SDK in memory' : baseName} | server CPU µs/req (+ PostgreSQL) | capacity vs ${base === 'sdk' ? 'SDK in memory' : baseName} | errors |`,
    '|---|---|---|---|---|---|',
    ...lines,
  ].join('\n');
}

/** The targets of the side-by-side run and whether each is met. */
export function verdicts(
  runs: Runs,
  o: { idleRss: number | undefined; fleetShare: number | undefined; nodeKey: string },
): string {
  const lines: string[] = [];
  // A target this run did not measure (rows left out, parts skipped) has no line.
  const add = (target: string, measured: string, met: boolean | undefined) => {
    if (met !== undefined) lines.push(`| ${target} | ${measured} | ${met ? 'met' : 'missed'} |`);
  };
  const has = (k: string) => runs.has(k) && runs.get(k)!.length > 0;
  const ratio = (a: string, b: string) =>
    has(a) && has(b) ? rpsOf(runs, a) / rpsOf(runs, b) : undefined;
  const times = (r: number | undefined, digits = 2) =>
    r === undefined ? '—' : `${r.toFixed(digits)}×`;
  const atLeast = (r: number | undefined, goal: number) =>
    r === undefined ? undefined : r >= goal;
  const nodeRps = ratio(o.nodeKey, 'sdk');
  add('default node ≥ 3× the in-memory SDK, req/s', times(nodeRps), atLeast(nodeRps, 3));
  const cap =
    has('sdk') && has(o.nodeKey) ? cpuOf(runs, 'sdk') / cpuOf(runs, o.nodeKey) : undefined;
  add('default node ≥ 4× the in-memory SDK, capacity', times(cap), atLeast(cap, 4));
  const pgRatio = ratio('node-pg', 'sdk-pg');
  add(
    'node on PostgreSQL ≥ 10× the SDK on its database, req/s',
    times(pgRatio, 1),
    atLeast(pgRatio, 10),
  );
  if (has('full')) {
    const r = rpsOf(runs, 'full') / rpsOf(runs, 'fresh');
    const c = cpuOf(runs, 'fresh') / cpuOf(runs, 'full');
    add(
      'after 200,000 more stored tasks within 10 % of fresh',
      `req/s ${(r * 100).toFixed(0)} %, capacity ${(c * 100).toFixed(0)} % of fresh`,
      r >= 0.9 && c >= 0.9,
    );
  } else add('after 200,000 more stored tasks within 10 % of fresh', '—', undefined);
  const sector = ratio('sector', 'sdk');
  add('`sector.movement` ≥ 3× the SDK echo, req/s', times(sector), atLeast(sector, 3));
  add(
    '`fleet.invoke` pairwise traced ≥ 75 % of direct',
    o.fleetShare === undefined ? '—' : `${o.fleetShare} %`,
    o.fleetShare === undefined ? undefined : o.fleetShare >= 75,
  );
  add(
    'idle node RSS < 60 MB',
    o.idleRss === undefined ? '—' : `${o.idleRss} MB`,
    o.idleRss === undefined ? undefined : o.idleRss < 60,
  );
  return ['| target | measured | verdict |', '|---|---|---|', ...lines].join('\n');
}
