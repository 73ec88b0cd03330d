/**
 * @module bench/tasks-scale — is a node flat as its tasks accumulate? Builds a task folder of
 * `--tasks` stored tasks (default 1,000,000) directly (segments and index rows written by this
 * script through the store's own modules, far faster than sending them), then runs two scanner
 * processes (`bun node/main.ts --name scanner`) side by side, one on a fresh data folder and one
 * on the full one, and measures for each: start-up (spawn to listening), the first `ListTasks`
 * page (the caller owns every stored task: the worst case), and blocking `SendMessage` with wrk
 * (a fresh messageId per request), alternating fresh and full per round, with CPU per request.
 *
 * Usage: bun bench/tasks-scale.ts [--tasks 1000000] [--seconds 10] [--rounds 2]
 *          [--connections 32] [--folder DIR (reuse or keep a built folder)] [--write]
 *        bun bench/tasks-scale.ts --store-only --folder DIR: in this process, the store's own
 *          open and first ListTasks page on the built folder, without a node around them.
 * Needs wrk (Debian: apt-get install -y wrk).
 */

import { isA2AError } from '../lib/a2a/errors.ts';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeRecord, metaOf } from '../lib/a2a/store/task-folder.ts';
import { encodeFrames, KIND_RECORD, type Outgoing } from '../lib/a2a/store/log/frame.ts';
import { LogIndex } from '../lib/a2a/store/log/log-index.ts';
import { Segments } from '../lib/a2a/store/log/segments.ts';
import { LIMITS } from '../lib/limits.ts';
import type { TaskRecord } from '../lib/a2a/store/task-store.ts';
import { hashSecret } from '../lib/auth/secret.ts';
import { cpuMs } from './proc-cpu.ts';
import { reportSection } from './report.ts';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    folder: { type: 'string' },
    'store-only': { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
  },
});
const TASKS = Number(values.tasks);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const root = join(import.meta.dir, '..');
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-bench-scale-'));
const TOKEN = `bench-${crypto.randomUUID()}`;
const CREATOR = 'user:bench';

/** A data folder with a fleet file (scanner on port 0) and the bench token. */
function dataFolder(dir: string): string {
  mkdirSync(join(dir, 'keys'), { recursive: true, mode: 0o700 });
  const tokens = join(dir, 'keys', 'tokens.json');
  writeFileSync(
    tokens,
    JSON.stringify({
      format: 'lume-a2a.tokens/1',
      tokens: { bench: { hash: hashSecret(TOKEN), created: new Date().toISOString() } },
    }),
    { mode: 0o600 },
  );
  writeFileSync(
    join(dir, 'fleet.json'),
    JSON.stringify({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
      nodes: [{ name: 'scanner', port: 0, role: 'sectors', file: 'node/scanner/index.ts' }],
    }),
  );
  return dir;
}

/** The kind of task scanner stores for a question: the user's message, the agent's answer, completed. */
function taskAt(ts: number): TaskRecord {
  // A UUIDv7 of its own time, as the store makes them (lib/a2a/store/task-store.ts newTaskId).
  const id = Bun.randomUUIDv7('hex', ts);
  const contextId = crypto.randomUUID();
  const at = new Date(ts).toISOString();
  return {
    task: {
      id,
      contextId,
      status: { state: 'completed', timestamp: at },
      artifacts: [
        {
          artifactId: crypto.randomUUID(),
          name: 'sector.movement',
          parts: [{ data: { sectors: [{ name: 'Energy', change: 1.2 }], asOf: at } }],
        },
      ],
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
    creator: CREATOR,
  };
}

/** Writes `n` records into the task log's segments and index, as the store appends them. */
function buildLog(dir: string, n: number): number {
  const t0 = performance.now();
  const tasks = join(dir, 'scanner', 'tasks');
  mkdirSync(tasks, { recursive: true, mode: 0o700 });
  const segments = new Segments(tasks, LIMITS.taskLogSegmentBytes, false);
  const index = new LogIndex(join(tasks, 'log.sqlite'));
  const start = Date.now() - 3_600_000 - n * 1000;
  let batch: Outgoing[] = [];
  let recs: TaskRecord[] = [];
  for (let i = 0; i < n; i++) {
    const rec = taskAt(start + i * 1000);
    batch.push({ kind: KIND_RECORD, id: rec.task.id, json: encodeRecord(rec) });
    recs.push(rec);
    if (batch.length === 1_000 || i === n - 1) {
      const sizes: number[] = [];
      const at = segments.append(encodeFrames(batch, sizes));
      let off = at.off;
      recs.forEach((r, j) => {
        index.put(r.task.id, metaOf(r), { seg: at.seg, off, size: sizes[j]! }, undefined);
        off += sizes[j]!;
      });
      batch = [];
      recs = [];
      if (index.pending >= 20_000) index.commit();
      if ((i + 1) % 100_000 === 0) console.log(`  ${i + 1} tasks written`);
    }
  }
  index.advance(segments.end);
  index.rebuilt();
  index.close();
  segments.close();
  return (performance.now() - t0) / 1000;
}

interface Node {
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  url: string;
  startMs: number;
}

async function startScanner(dir: string): Promise<Node> {
  const t0 = performance.now();
  const proc = Bun.spawn(['bun', 'node/main.ts', '--name', 'scanner'], {
    cwd: root,
    env: {
      ...process.env,
      DATA_DIR: dir,
      FLEET_FILE: join(dir, 'fleet.json'),
      PORT: '0',
      TASK_MAX_STORED: String(TASKS * 2 + 1_000_000),
      LOG_LEVEL: 'warn',
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done)
      throw new Error(`scanner exited before listening: ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
    const url = /listening on (http:\/\/\S+?)(?:\s|$)/.exec(out)?.[1];
    if (url) {
      const startMs = performance.now() - t0;
      void (async () => {
        for (;;) if ((await reader.read()).done) break;
      })();
      void new Response(proc.stderr).text();
      return { proc, url, startMs };
    }
  }
}

const auth = {
  Authorization: `Bearer ${TOKEN}`,
  'Content-Type': 'application/json',
  'A2A-Version': '1.0',
};

/** Milliseconds per first ListTasks page (client side, over HTTP): median and p99 of `n` calls. */
async function listFirstPage(
  url: string,
  n: number,
): Promise<{ p50: number; p99: number; total: number }> {
  const times: number[] = [];
  let total = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(`${url}/a2a`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'ListTasks', params: {} }),
    });
    const body = (await res.json()) as { result?: { totalSize: number; tasks: unknown[] } };
    times.push(performance.now() - t0);
    if (!body.result?.tasks.length)
      throw new Error(`ListTasks answered ${JSON.stringify(body).slice(0, 200)}`);
    total = body.result.totalSize;
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(n / 2)]!, p99: times[Math.floor(n * 0.99)]!, total };
}

const LUA = join(tmp, 'send.lua');
writeFileSync(
  LUA,
  `-- blocking SendMessage with a fresh messageId per request
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
wrk.headers["Authorization"] = "Bearer ${TOKEN}"
local n = 0
local prefix = ""
local errors = 0
function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
  prefix = tostring(math.random(1, 2000000000))
end
function request()
  n = n + 1
  return wrk.format(nil, "/a2a", nil, '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"' .. prefix .. '-' .. n .. '","role":"ROLE_USER","parts":[{"text":"which sector moved today?"}]}}}')
end
function response(status, headers, body)
  if status ~= 200 or string.find(body, '"error"', 1, true) then errors = errors + 1 end
end
function done(summary, latency, requests)
  io.write(string.format("ERRORS %d\\n", errors))
end
`,
);

async function wrk(
  url: string,
  seconds: number,
): Promise<{ rps: number; p99: string; errors: number; requests: number }> {
  const proc = Bun.spawn(
    ['wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', LUA, url],
    { stdout: 'pipe', stderr: 'inherit' },
  );
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  // The line of --latency's distribution: a Stdev share such as `79.99%` in the thread stats
  // above it also ends in `99%`, and was read as the p99 before.
  const p99 = /^\s*99%\s+(\S+)\s*$/m.exec(out)?.[1] ?? '?';
  const errors =
    Number(/ERRORS (\d+)/.exec(out)?.[1] ?? 0) +
    Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  return { rps, p99, errors, requests };
}

const loadBefore = loadavg()[0]!.toFixed(1);
const fullDir = values.folder ?? join(tmp, 'full');
let buildSeconds: number | undefined;
if (!existsSync(join(fullDir, 'scanner', 'tasks', 'log.sqlite'))) {
  console.log(`building ${TASKS} tasks in ${fullDir} (task log)`);
  buildSeconds = buildLog(dataFolder(fullDir), TASKS);
  console.log(
    `built in ${buildSeconds.toFixed(1)} s (${Math.round(TASKS / buildSeconds)} tasks/s)`,
  );
} else {
  dataFolder(fullDir);
  console.log(`reusing the task folder in ${fullDir}`);
}
if (values['store-only']) {
  const { LogTaskStore } = await import('../lib/a2a/store/log-store.ts');
  const dir = join(fullDir, 'scanner', 'tasks');
  const opens: number[] = [];
  const pages: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const opts = { dir, log: () => {}, maxStored: TASKS * 2 };
    const store = LogTaskStore.open(opts);
    opens.push(performance.now() - t0);
    const t1 = performance.now();
    const page = await store.list({ pageSize: 50, includeArtifacts: true }, CREATOR);
    pages.push(performance.now() - t1);
    if (isA2AError(page)) throw new Error(page.message);
    console.log(
      `store open ${opens.at(-1)!.toFixed(1)} ms, first page ${pages.at(-1)!.toFixed(1)} ms (${page.tasks.length} of ${page.totalSize})`,
    );
    await store.close();
  }
  rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}
const freshDir = dataFolder(join(tmp, 'fresh'));
const nodes: Node[] = [];
process.on('SIGINT', () => {
  for (const n of nodes) n.proc.kill('SIGKILL');
  if (!values.folder) rmSync(tmp, { recursive: true, force: true });
  process.exit(130);
});

try {
  // Start-up, twice each (the second with the files in the page cache, as after a restart).
  const starts = { fresh: [] as number[], full: [] as number[] };
  for (let i = 0; i < 2; i++)
    for (const [name, dir] of [
      ['fresh', freshDir],
      ['full', fullDir],
    ] as const) {
      const n = await startScanner(dir);
      starts[name].push(n.startMs);
      n.proc.kill();
      await n.proc.exited;
    }
  const fresh = await startScanner(freshDir);
  const full = await startScanner(fullDir);
  nodes.push(fresh, full);
  // The fresh node's caller needs one task of its own for a first page.
  await wrk(fresh.url, 1);
  await wrk(full.url, 1);
  const list = {
    fresh: await listFirstPage(fresh.url, 200),
    full: await listFirstPage(full.url, 200),
  };
  const runs = { fresh: [] as number[], full: [] as number[] };
  const cpu = { fresh: [] as number[], full: [] as number[] };
  let errors = 0;
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, n] of (r % 2 === 0
      ? [
          ['fresh', fresh],
          ['full', full],
        ]
      : [
          ['full', full],
          ['fresh', fresh],
        ]) as ['fresh' | 'full', Node][]) {
      const c0 = cpuMs(n.proc.pid);
      const w = await wrk(n.url, SECONDS);
      const used = cpuMs(n.proc.pid) - c0;
      runs[name].push(w.rps);
      cpu[name].push((used * 1000) / w.requests);
      errors += w.errors;
      console.log(
        `round ${r + 1} ${name}: ${Math.round(w.rps)} req/s, p99 ${w.p99}, ${((used * 1000) / w.requests).toFixed(0)} µs CPU per request, errors ${w.errors}`,
      );
    }
  for (const n of nodes) n.proc.kill();
  await Promise.all(nodes.map((n) => n.proc.exited));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const row = (name: 'fresh' | 'full', label: string) =>
    `| ${label} | ${Math.round(mean(runs[name]))} | ${mean(cpu[name]).toFixed(0)} | ${starts[name].map((s) => s.toFixed(0)).join(' / ')} | ${list[name].p50.toFixed(2)} / ${list[name].p99.toFixed(2)} | ${list[name].total} |`;
  const ratio = mean(runs.full) / mean(runs.fresh);
  reportSection(
    `Flat as tasks accumulate: a fresh scanner and one with a million stored tasks`,
    `Command: \`bun bench/tasks-scale.ts --tasks ${TASKS} --seconds ${SECONDS} --rounds ${ROUNDS} --connections ${CONNECTIONS}\` (${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, wrk ${'4.1.0'} from Debian, ${navigator.hardwareConcurrency} cores shared by both nodes and wrk; load average ${loadBefore} at the start).

The full folder holds ${TASKS.toLocaleString('en')} completed tasks of the bench's own caller, written by the script straight into the task log's segments and its index${buildSeconds ? ` (${buildSeconds.toFixed(0)} s, ${Math.round(TASKS / buildSeconds).toLocaleString('en')} tasks/s)` : ''}; both nodes run with \`TASK_MAX_STORED\` above it, so retention deletes nothing. Blocking \`SendMessage\` (A2A 1.0, a text question scanner answers with its \`sector.movement\` tool) from wrk at ${CONNECTIONS} connections, a fresh messageId per request, ${SECONDS} s per node per round, the nodes alternating (fresh first in odd rounds, full first in even ones); CPU per request is the node process's user + system time over the run. Start-up is spawn to \`listening\`, first run then second. ListTasks is the first page (50 tasks, the caller's own, totalSize counted), 200 calls one after another, client-side milliseconds over HTTP.

| data folder | SendMessage req/s | CPU µs per request | start-up ms (1st / 2nd) | first ListTasks page ms (p50 / p99) | tasks listed (totalSize) |
|---|---|---|---|---|---|
${row('fresh', 'fresh')}
${row('full', `${TASKS.toLocaleString('en')} tasks`)}

Full vs fresh: **${(ratio * 100).toFixed(0)} %** of the requests per second; errors ${errors}.`,
  );
} finally {
  for (const n of nodes) n.proc.kill('SIGKILL');
  if (values.folder) rmSync(freshDir, { recursive: true, force: true });
  else rmSync(tmp, { recursive: true, force: true });
}
