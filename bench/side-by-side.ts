/**
 * @module bench/side-by-side — the node against the official `@a2a-js/sdk` server, in one run:
 * the SDK server keeping its tasks in memory and on its own `DatabaseTaskStore` (PostgreSQL through
 * kysely and pg), and the scanner node (`bun node/main.ts --name scanner`) on its embedded task
 * store and on PostgreSQL, in alternating rounds under the same load process (bench/load.ts, 32
 * keep-alive connections, blocking `SendMessage` with a fresh `messageId` per request); server
 * CPU per request from /proc, PostgreSQL's own CPU apart. Also: scanner's data-part call
 * `sector.movement` against the SDK's echo, `fleet.invoke` pairwise and traced against a direct
 * call (bench/fleet.ts), an idle node's resident memory, and a node after 200,000 more stored
 * tasks against a fresh one. Prints the tables and each target's verdict; `--write` records the
 * "Side by side with the official SDK" section in docs/benchmarks.md.
 *
 * Usage: bun bench/side-by-side.ts [--seconds 8] [--rounds 2] [--connections 32]
 *          [--stores default] [--sdk-runtime node|bun] [--more 200000] [--skip fleet,scale,rss]
 *          [--rows sdk,sector] [--write]
 * `--rows` runs only the named rows (sdk, sdk-pg, node, node-pg, sector; PostgreSQL starts only
 * when a row needs it): `--rows sdk,sector --skip scale,fleet,rss` prints the `sector.movement`
 * target's ratio alone.
 * `--stores default` runs the node on its embedded store (the task log); other values are kept for
 * comparing a TASK_STORE of another tree.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startPostgres } from '../test/support/postgres.ts';
import { cpuMs, treeCpuMs } from './proc-cpu.ts';
import { reportSection } from './report.ts';
import {
  fillTasks,
  type Row,
  type Runs,
  spawnServer,
  table,
  verdicts,
} from './side-by-side-parts.ts';
import { runLoad, SECTOR_PARTS, writeSendBody } from './send-body.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    stores: { type: 'string', default: 'default' },
    'sdk-runtime': { type: 'string', default: 'node' },
    more: { type: 'string', default: '200000' },
    skip: { type: 'string', default: '' },
    rows: { type: 'string' },
    write: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const more = Number(values.more);
const skip = new Set(values.skip.split(','));
const sdkRuntime = values['sdk-runtime'] === 'bun' ? 'bun' : 'node';
const root = join(import.meta.dir, '..');
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-side-'));
const textBody = writeSendBody(tmp, 'send.json');
const sectorBody = writeSendBody(tmp, 'send-sector.json', SECTOR_PARTS);

// One PostgreSQL cluster, durable (fsync and synchronous commit on), a database for each side;
// the SDK's table is made by its own migration tool. Started only when a chosen row needs it.
const chosen = values.rows?.split(',');
const pg =
  !chosen || chosen.some((k) => k.endsWith('-pg'))
    ? await startPostgres({ durable: true })
    : undefined;
const sdkDb = pg ? await pg.createDatabase('sdk') : '';
const nodeDb = pg ? await pg.createDatabase('node') : '';
if (pg) {
  const migrate = Bun.spawnSync(['node', 'node_modules/.bin/a2a-db', 'upgrade', '--url', sdkDb], {
    cwd: root,
  });
  if (migrate.exitCode !== 0) throw new Error(`a2a-db upgrade: ${migrate.stderr.toString()}`);
}
const postmaster = pg
  ? Number(readFileSync(join(pg.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
  : 0;

const storeEnv = (s: string): Record<string, string> => (s === 'default' ? {} : { TASK_STORE: s });
const storeName = (s: string) => (s === 'default' ? 'default embedded store' : `TASK_STORE=${s}`);
const node = ['bun', 'node/main.ts', '--name', 'scanner', '--port', '0'];
const sdk = [sdkRuntime, 'bench/servers/sdk-server.mjs'];
const stores = values.stores.split(',');
const allRows: Row[] = [
  { key: 'sdk', name: `official SDK 1.3.0 (${sdkRuntime}), in memory`, cmd: sdk },
  {
    key: 'sdk-pg',
    name: `official SDK 1.3.0 (${sdkRuntime}), its DatabaseTaskStore on PostgreSQL`,
    cmd: sdk,
    env: { SDK_DATABASE_URL: sdkDb },
    pg: true,
  },
  ...stores.map((s) => ({
    key: s === 'default' ? 'node' : `node-${s}`,
    name: `scanner node, ${storeName(s)}`,
    cmd: node,
    env: storeEnv(s),
  })),
  {
    key: 'node-pg',
    name: 'scanner node, PostgreSQL',
    cmd: node,
    env: { TASKS_DATABASE_URL: nodeDb },
    pg: true,
  },
  {
    key: 'sector',
    name: `scanner node, data part \`sector.movement\` (${storeName(stores[0]!)})`,
    cmd: node,
    env: storeEnv(stores[0]!),
    body: sectorBody,
  },
];

const rows = chosen ? allRows.filter((r) => chosen.includes(r.key)) : allRows;

/** One measured run of a row on a fresh server: warm-up, then `seconds` under load. */
async function measure(row: Row, dataDir?: string) {
  const server = await spawnServer(root, row.cmd, {
    DATA_DIR: dataDir ?? mkdtempSync(join(tmp, 'data-')),
    LOG_LEVEL: 'warn',
    ...row.env,
  });
  try {
    const load = (secs: number) =>
      runLoad(root, { port: server.port, connections, secs, body: row.body ?? textBody });
    await load(2);
    const cpu0 = cpuMs(server.proc.pid);
    const pg0 = row.pg ? treeCpuMs(postmaster) : 0;
    const r = await load(seconds);
    const n = Math.max(1, r.requests);
    const cpu = ((cpuMs(server.proc.pid) - cpu0) * 1000) / n;
    const pgCpu = row.pg ? ((treeCpuMs(postmaster) - pg0) * 1000) / n : 0;
    console.log(
      `  ${row.name}: ${r.rps} req/s, ${cpu.toFixed(0)} µs CPU/req${row.pg ? ` + ${pgCpu.toFixed(0)} in PostgreSQL` : ''}, p99 ${r.p99} ms, errors ${r.errors}`,
    );
    return { rps: r.rps, cpu, pgCpu, errors: r.errors };
  } finally {
    server.proc.kill();
    await server.proc.exited;
  }
}

const load0 = loadavg()[0]!;
const runs: Runs = new Map(rows.map((r) => [r.key, []]));
for (let round = 0; round < rounds; round++) {
  console.log(`round ${round + 1}`);
  // Odd rounds run the rows backwards, so no row always follows another.
  for (const row of round % 2 ? [...rows].reverse() : rows)
    runs.get(row.key)!.push(await measure(row));
}

// A node after `more` stored tasks against a fresh one, alternating; both may keep them all.
const scale: Row[] = [];
if (!skip.has('scale')) {
  const env = { ...storeEnv(stores[0]!), TASK_MAX_STORED: String(more * 2 + 100_000) };
  const full = mkdtempSync(join(tmp, 'full-'));
  const filled = await fillTasks(full, 'scanner', more);
  console.log(`filled ${more} tasks in ${filled.toFixed(1)} s`);
  scale.push(
    { key: 'fresh', name: 'scanner node, fresh', cmd: node, env },
    {
      key: 'full',
      name: `scanner node, ${more.toLocaleString('en')} more stored tasks`,
      cmd: node,
      env,
    },
  );
  for (const row of scale) runs.set(row.key, []);
  for (let round = 0; round < rounds; round++) {
    console.log(`scale round ${round + 1}`);
    for (const row of round % 2 ? [...scale].reverse() : scale)
      runs.get(row.key)!.push(await measure(row, row.key === 'full' ? full : undefined));
  }
}
const load1 = loadavg()[0]!;
await pg?.stop();

// Resident memory of an idle scanner node, 1 s after it listens (bench/idle-rss.ts has the detail).
let idleRss: number | undefined;
if (!skip.has('rss')) {
  const idle = await spawnServer(root, node, { DATA_DIR: mkdtempSync(join(tmp, 'idle-')) });
  await Bun.sleep(1000); // not synchronisation: start-up garbage settles before the reading
  idleRss = Math.round(
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${idle.proc.pid}/status`, 'utf8'))![1]) / 1024,
  );
  idle.proc.kill();
  await idle.proc.exited;
}

// fleet.invoke pairwise and traced against a direct call (bench/fleet.ts, its own rounds).
let fleetShare: number | undefined;
if (!skip.has('fleet')) {
  const args = ['--paths', 'pairwise', '--no-aggregate', '--seconds', String(Math.min(seconds, 5))];
  const out = await new Response(
    Bun.spawn(['bun', 'bench/fleet.ts', ...args, '--rounds', '3'], { cwd: root, stdout: 'pipe' })
      .stdout,
  ).text();
  const m = /pairwise (\d+)% \(rounds/.exec(out);
  fleetShare = m ? Number(m[1]) : undefined;
  console.log(
    out
      .split('\n')
      .filter((l) => l.startsWith('round'))
      .join('\n'),
  );
}

const mainTable = table(rows, runs);
const scaleTable = scale.length ? table(scale, runs, 'fresh') : '';
const targets = verdicts(runs, {
  idleRss,
  fleetShare,
  nodeKey: runs.has('node') ? 'node' : `node-${stores[0]}`,
});
const command = `bun bench/side-by-side.ts --seconds ${seconds} --rounds ${rounds} --connections ${connections}${values.stores !== 'default' ? ` --stores ${values.stores}` : ''}${sdkRuntime !== 'node' ? ' --sdk-runtime bun' : ''}${more !== 200000 ? ` --more ${more}` : ''}${values.rows ? ` --rows ${values.rows}` : ''}${values.skip ? ` --skip ${values.skip}` : ''}${values.write ? ' --write' : ''}`;
console.log(`\n${mainTable}\n\n${scaleTable}\n\n${targets}`);
reportSection(
  !chosen
    ? 'Side by side with the official SDK'
    : chosen.join(',') === 'sdk,sector'
      ? '`sector.movement` against the official SDK'
      : `Side by side with the official SDK: ${chosen.join(', ')}`,
  `Command: \`${command}\` (${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, Node ${(await Bun.$`node --version`.text()).trim()}, ${navigator.hardwareConcurrency} cores; load average ${load0.toFixed(1)} → ${load1.toFixed(1)}).

Blocking \`SendMessage\` (A2A 1.0) from a separate load process (\`bench/load.ts\`: ${connections} keep-alive connections, a fresh \`messageId\` per request), ${seconds} s per run after a 2 s warm-up, ${rounds} rounds, odd rounds in reverse order, each run on a fresh server process. The SDK server (\`bench/servers/sdk-server.mjs\`, Express, on ${sdkRuntime}) runs an agent that publishes the task, \`working\`, one artifact and \`completed\`; the node is scanner as \`bun node/main.ts --name scanner\` starts it, whose keyword agent reads the text and answers it (here: which of its skills to run, \`input-required\`). Its \`sector.movement\` row sends the data part \`{"skill":"sector.movement","args":{}}\` instead, which the keyword agent runs directly: \`working\`, one artifact (the ranked sectors as a data part and a one-line summary) and \`completed\`. PostgreSQL is one throw-away cluster with fsync and synchronous commit on, a database for each; the SDK's table is made by its own \`a2a-db upgrade\`. req/s is the mean of the rounds (their range after it); CPU per request the least of the rounds (other load only adds to it), "+ PostgreSQL" the cluster's processes' CPU per request beside it. "vs SDK" compares with the SDK in memory: req/s, and capacity (its CPU per request over this row's).

${[
  mainTable,
  scaleTable &&
    `A node after ${more.toLocaleString('en')} more stored tasks (written through the store before the node starts) against a fresh one, both allowed to keep them all (\`TASK_MAX_STORED\`), alternating:\n\n${scaleTable}`,
  [
    idleRss !== undefined
      ? `Idle scanner node (\`bun node/main.ts --name scanner\`), resident memory 1 s after it listens: **${idleRss} MB** (\`bun bench/idle-rss.ts\` has the detail).`
      : '',
    fleetShare !== undefined
      ? `\`fleet.invoke\` pairwise and traced: **${fleetShare} %** of a direct call's throughput (\`bun bench/fleet.ts --paths pairwise --no-aggregate\`, 3 rounds; its own section below has the detail).`
      : '',
  ]
    .filter(Boolean)
    .join(' '),
  targets,
]
  .filter(Boolean)
  .join('\n\n')}`,
);
rmSync(tmp, { recursive: true, force: true });
