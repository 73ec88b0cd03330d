/**
 * SendMessage throughput of a node's task stores, in one run: one node process on JSON files,
 * one on PostgreSQL, and two processes of one node on one PostgreSQL task database with the
 * load split between them (as a load balancer would). PostgreSQL is a throw-away cluster started
 * here (test/support/postgres.ts). Prints a table; `--write` records it in docs/benchmarks.md.
 *
 * Usage: bun bench/tasks-postgres.ts [--seconds 8] [--rounds 2] [--connections 32] [--write]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SQL } from 'bun';
import { startPostgres } from '../test/support/postgres.ts';
import { reportSection } from './report.ts';
import { type LoadFigures, listeningPort, runLoad, writeSendBody } from './send-body.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    write: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const root = join(import.meta.dir, '..');
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-bench-tasks-'));

const bodyFile = writeSendBody(tmp, 'send.json');

type Server = { proc: Bun.Subprocess<'ignore', 'pipe', 'inherit'>; port: number };

async function startServer(env: Record<string, string>): Promise<Server> {
  const proc = Bun.spawn(['bun', 'bench/servers/node-server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', DATA_DIR: mkdtempSync(join(tmp, 'data-')), ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  return { proc, port: await listeningPort(proc.stdout, 'bench node') };
}

const load = (port: number, conns: number, secs: number): Promise<LoadFigures> =>
  runLoad(root, { port, connections: conns, secs, body: bodyFile });

/** Loads every server at once, the connections split evenly; the figures are summed (p99: the worst). */
async function loadAll(servers: Server[], secs: number): Promise<LoadFigures> {
  const each = await Promise.all(
    servers.map((s) => load(s.port, Math.max(1, Math.round(connections / servers.length)), secs)),
  );
  return {
    rps: each.reduce((a, r) => a + r.rps, 0),
    p50: Math.max(...each.map((r) => r.p50)),
    p99: Math.max(...each.map((r) => r.p99)),
    errors: each.reduce((a, r) => a + r.errors, 0),
    requests: each.reduce((a, r) => a + r.requests, 0),
  };
}

const loadBefore = loadavg()[0]!.toFixed(1);
const pg = await startPostgres();
// Node processes started by the current target; an interrupted run ends them and removes the throw-away cluster.
const running = new Set<Server>();
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the node processes and the throw-away PostgreSQL cluster`);
    for (const s of running) s.proc.kill('SIGKILL');
    void pg.stop().finally(() => {
      rmSync(tmp, { recursive: true, force: true });
      process.exit(130);
    });
  });
let databases = 0;
const targets: { name: string; processes: number; db: boolean }[] = [
  { name: 'one process, JSON files', processes: 1, db: false },
  { name: 'one process, PostgreSQL', processes: 1, db: true },
  { name: 'two processes, one PostgreSQL database', processes: 2, db: true },
];
const results = new Map<string, { rps: number[]; p99: number[]; errors: number; stored: number }>();
try {
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const url = t.db ? await pg.createDatabase(`bench_${++databases}`) : undefined;
      const servers = await Promise.all(
        Array.from({ length: t.processes }, () =>
          startServer(url ? { TASKS_DATABASE_URL: url } : {}),
        ),
      );
      for (const s of servers) running.add(s);
      await loadAll(servers, 2); // warm-up
      const r = await loadAll(servers, seconds);
      for (const s of servers) s.proc.kill();
      await Promise.all(servers.map((s) => s.proc.exited));
      for (const s of servers) running.delete(s);
      // Every answered task is in the database (the answer waits for its write).
      let stored = -1;
      if (url) {
        const sql = new SQL(url);
        stored = Number((await sql`SELECT count(*) AS n FROM lume_a2a_tasks`)[0].n);
        await sql.close();
      }
      const acc = results.get(t.name) ?? { rps: [], p99: [], errors: 0, stored: 0 };
      acc.rps.push(r.rps);
      acc.p99.push(r.p99);
      acc.errors += r.errors;
      results.set(t.name, acc);
      console.log(
        `round ${round + 1} ${t.name}: ${r.rps} req/s, p99 ${r.p99} ms, errors ${r.errors}${stored >= 0 ? `, tasks stored ${stored} (warm-up included)` : ''}`,
      );
    }
  }
} finally {
  await pg.stop();
  rmSync(tmp, { recursive: true, force: true });
}

const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
const files = mean(results.get(targets[0]!.name)!.rps);
const rows = targets.map((t) => {
  const r = results.get(t.name)!;
  return `| ${t.name} | ${mean(r.rps)} | ${(mean(r.rps) / files).toFixed(2)}x | ${Math.max(...r.p99).toFixed(2)} | ${r.errors} |`;
});
const table = [
  '| task store | SendMessage req/s | vs JSON files | p99 ms (worst round) | errors |',
  '|---|---|---|---|---|',
  ...rows,
].join('\n');

reportSection(
  'Task stores: JSON files and PostgreSQL',
  `Command: \`bun bench/tasks-postgres.ts --seconds ${seconds} --rounds ${rounds} --connections ${connections}\` (${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, PostgreSQL from Debian, ${navigator.hardwareConcurrency} cores shared by the database, the node processes and the load generators; load average ${loadBefore} at the start).

Blocking \`SendMessage\` (A2A 1.0) at ${connections} connections in total, ${seconds} s per target after a 2 s warm-up, ${rounds} rounds; req/s is the mean over rounds. The agent reports working, one artifact, completed; each answer waits until its task is stored (a file, or a committed row). Two processes: the connections are split between them, as a load balancer would. The throw-away cluster runs with \`fsync=off\` and \`synchronous_commit=off\` (the JSON file store does not fsync either), so both measure the stores' own work, not the disk. On one machine the two processes share the same cores with the database and the load generators, so their row shows what coordination costs under contention, not what a second machine adds.

${table}`,
);
