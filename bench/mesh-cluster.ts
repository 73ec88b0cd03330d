/**
 * Benchmark: two mesh hubs on one PostgreSQL database (fsync and synchronous commit on), one
 * project, senders on both hubs writing to receivers on the other one.
 * 0. The database path alone: two processes appending through the store, no hub in between.
 * 1. Durable messages/s in total (send -> committed -> accepted), each delivered across hubs and
 *    acknowledged back; sequences checked gap-free at the end.
 * 2. `kill -9` of one hub under load: clients fail over to the other hub (resume + recovery);
 *    every accepted message must be in the database and handled by its recipient; prints how long
 *    each moved client took to be back.
 * Phase 1 also reports the CPU time each process spent per message (hubs, PostgreSQL, clients).
 * Usage: bun bench/mesh-cluster.ts [--write] [--throughput-only]
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQL, type Subprocess } from 'bun';
import { silentLog } from '../lib/log.ts';
import { createMeshClient, type MeshClient } from '../lib/mesh/client.ts';
import { createPostgresMeshStore } from '../lib/mesh/postgres-store.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { claim, fmt } from './mesh-common.ts';
import { cpuMs, treeCpuMs } from './proc-cpu.ts';
import { reportSection } from './report.ts';

const TOTAL = Number(process.env.BENCH_MESSAGES ?? 160_000);
const PAIRS_PER_HUB = 8;
const WINDOW = 256;

/** `--throughput-only`: phase 1 alone, printed on one line (for trying a change quickly). */
const ONLY_THROUGHPUT = process.argv.includes('--throughput-only');
class Done extends Error {}

/** The messageId of a `message` frame's text (ids are plain ASCII, never escaped). */
function messageIdOf(text: string): string {
  const at = text.indexOf('"messageId":"') + 13;
  return text.slice(at, text.indexOf('"', at));
}

const HELPER = new URL('./mesh-cluster-hub.ts', import.meta.url).pathname;

/** A hub process; recovery may replay up to 100,000 messages, so a receiver away during the kill gets its whole gap back. */
async function spawnHub(url: string): Promise<{ url: string; proc: Subprocess }> {
  // BENCH_PROFILE_DIR=<dir>: the hubs write a CPU profile there when phase 1 ends them.
  const profile = process.env.BENCH_PROFILE_DIR
    ? ['--cpu-prof-md', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
    : [];
  const proc = Bun.spawn(['bun', ...profile, HELPER, 'hub', url, '1500', '100000'], {
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = '';
  while (!out.includes('\n')) {
    const r = await reader.read();
    if (r.done) throw new Error('hub process ended before printing its port');
    out += new TextDecoder().decode(r.value);
  }
  return { url: `http://127.0.0.1:${out.trim()}`, proc };
}

const pg = await startPostgres({ durable: true });
const procs: Subprocess[] = [];
const stopAll = async () => {
  for (const p of procs) p.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await pg.stop();
};
// An interrupted run still removes its throw-away cluster and hub processes.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the hubs and the throw-away PostgreSQL cluster`);
    void stopAll().finally(() => process.exit(130));
  });
const postmasterPid = () =>
  Number(readFileSync(join(pg.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);

/** Sequences of a project: count, highest, distinct; gap-free when all three agree. */
async function sequences(sql: SQL, project: string) {
  const [r] =
    await sql`SELECT count(*)::int AS n, coalesce(max(sequence), 0)::int AS top, count(DISTINCT sequence)::int AS distinct_ FROM mesh_messages WHERE project = ${project}`;
  return { n: r.n as number, top: r.top as number, gapFree: r.n === r.top && r.n === r.distinct_ };
}

/** Phase 0: the database path alone, as two processes appending to one project through the store (no hub, no sockets). */
async function storeOnly(url: string) {
  const sql = new SQL(url);
  await sql`INSERT INTO mesh_projects (name, created_at, epoch) VALUES ('store', 0, 'bench')`;
  const run = (prefix: string) =>
    new Response(
      Bun.spawn(['bun', HELPER, 'store', url, String(TOTAL / 2), prefix], {
        stdout: 'pipe',
        stderr: 'inherit',
      }).stdout,
    ).text();
  const results = (await Promise.all([run('a'), run('b')])).map(
    (t) => JSON.parse(t) as { stored: number; ms: number },
  );
  const seq = await sequences(sql, 'store');
  await sql.close();
  const stored = results.reduce((n, r) => n + r.stored, 0);
  return { stored, rate: stored / (Math.max(...results.map((r) => r.ms)) / 1000), seq };
}

/** Phase 1: raw sockets, WINDOW messages in flight per sender, each receiver acknowledging. */
async function throughput(url: string) {
  const hubs = [await spawnHub(url), await spawnHub(url)];
  procs.push(...hubs.map((h) => h.proc));
  await fetch(`${hubs[0]!.url}/api/projects.create`, {
    method: 'POST',
    body: JSON.stringify({ name: 'bench' }),
  });
  const perSender = Math.floor(TOTAL / (2 * PAIRS_PER_HUB));
  const total = perSender * 2 * PAIRS_PER_HUB;
  let accepted = 0;
  let outcomes = 0;
  let lastAccepted = 0;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const starts: (() => void)[] = [];
  for (let h = 0; h < 2; h++)
    for (let i = 0; i < PAIRS_PER_HUB; i++) {
      const receiver = `r${h}-${i}`;
      // The clients read frames as text and look only at what they need (type, messageId, status):
      // they share the machine with the hubs, and parsing every frame whole would measure them more than the hubs.
      await claim(
        hubs[1 - h]!.url,
        'bench',
        receiver,
        (text: string, c) => {
          if (text.startsWith('{"type":"message"'))
            c.ws.send(`{"type":"delivered","messageId":"${messageIdOf(text)}"}`);
        },
        true,
      );
      let sent = 0;
      const sendOne = (ws: WebSocket) => {
        const id = `h${h}-${i}-${sent++}`;
        ws.send(
          `{"type":"message","requestId":"${id}","messageId":"${id}","target":{"type":"agent","name":"${receiver}"},"payload":{"encoding":"identity","data":"status update ${id}","uncompressedBytes":${`status update ${id}`.length}},"attachments":[]}`,
        );
      };
      const s = await claim(
        hubs[h]!.url,
        'bench',
        `s${h}-${i}`,
        (text: string, c) => {
          if (text.startsWith('{"type":"accepted"')) {
            if (++accepted === total) lastAccepted = performance.now();
            if (sent < perSender) sendOne(c.ws);
          } else if (text.startsWith('{"type":"delivery"') && text.includes('"status":"delivered"'))
            ++outcomes;
          // Done when every message is both accepted and acknowledged (either frame may come last).
          if (accepted === total && outcomes === total) finish();
        },
        true,
      );
      starts.push(() => {
        for (let k = 0; k < WINDOW && sent < perSender; k++) sendOne(s.ws);
      });
    }
  // CPU of each process over the run, per message: the hubs, PostgreSQL (all its processes), this client process.
  const pgPid = postmasterPid();
  const stats = new SQL(url, { max: 1 });
  const commits = async () =>
    Number(
      (await stats`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)[0]
        .xact_commit,
    );
  const commits0 = await commits();
  const cpu0 = {
    a: cpuMs(hubs[0]!.proc.pid),
    b: cpuMs(hubs[1]!.proc.pid),
    pg: treeCpuMs(pgPid),
    client: process.cpuUsage(),
  };
  const t0 = performance.now();
  for (const s of starts) s();
  await done;
  const seconds = (lastAccepted - t0) / 1000;
  const endToEnd = (performance.now() - t0) / 1000;
  const us = (ms: number) => (ms * 1000) / total;
  const clientCpu = process.cpuUsage(cpu0.client);
  const cpu = {
    hubA: us(cpuMs(hubs[0]!.proc.pid) - cpu0.a),
    hubB: us(cpuMs(hubs[1]!.proc.pid) - cpu0.b),
    postgres: us(treeCpuMs(pgPid) - cpu0.pg),
    client: (clientCpu.user + clientCpu.system) / total,
  };
  // Statistics reach pg_stat_database within a second of a transaction's end.
  await Bun.sleep(1_100);
  const transactions = (await commits()) - commits0;
  await stats.close();
  // SIGTERM lets a profiled hub write its profile.
  for (const h of hubs) h.proc.kill(process.env.BENCH_PROFILE_DIR ? 'SIGTERM' : 'SIGKILL');
  await Promise.all(hubs.map((h) => h.proc.exited));
  return {
    total,
    rate: total / seconds,
    deliveredRate: total / endToEnd,
    cpu,
    messagesPerTransaction: total / transactions,
  };
}

/** Phase 2: mesh clients with both hub addresses; one hub is killed under load. */
async function failover(url: string) {
  const hubs = [await spawnHub(url), await spawnHub(url)];
  procs.push(...hubs.map((h) => h.proc));
  await fetch(`${hubs[0]!.url}/api/projects.create`, {
    method: 'POST',
    body: JSON.stringify({ name: 'failover' }),
  });
  const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-'));
  const handled = new Set<string>();
  const clients: { c: MeshClient; hub: number; name: string }[] = [];
  const agents = 4;
  for (let h = 0; h < 2; h++)
    for (let i = 0; i < agents; i++)
      for (const role of ['s', 'r']) {
        const urls = h === 0 ? [hubs[0]!.url, hubs[1]!.url] : [hubs[1]!.url, hubs[0]!.url];
        const c = createMeshClient({
          hubUrl: urls[0]!,
          hubUrls: [urls[1]!],
          log: silentLog,
          attachmentsDir: dir,
          ...(role === 'r'
            ? {
                onInbound: (m: { message: { messageId: string } }) =>
                  void handled.add(m.message.messageId),
              }
            : {}),
        });
        const name = `${role}${h}-${i}`;
        await c.connect(name, 'failover', name);
        clients.push({ c, hub: h, name });
      }
  const acceptedIds = new Set<string>();
  let stop = false;
  let refused = 0;
  const senders = clients.filter((x) => x.name.startsWith('s'));
  const loops = senders.flatMap(({ c, hub, name }) => {
    const i = Number(name.split('-')[1]);
    const to = `r${1 - hub}-${i}`;
    let n = 0;
    return Array.from({ length: 32 }, async (_, lane) => {
      while (!stop) {
        const id = `${name}-${lane}-${n++}`;
        // A send cut by the hub's death is retried with the same id on the other hub: stored once.
        for (;;) {
          const r = await c.send(name, {
            target: { type: 'agent', name: to },
            text: `update ${id}`,
            messageId: id,
          });
          if (r.ok) {
            acceptedIds.add(id);
            break;
          }
          refused++;
          await Bun.sleep(20);
        }
      }
    });
  });
  await Bun.sleep(2_000);
  const moved = clients.filter((x) => x.hub === 0);
  const killedAt = performance.now();
  const backAfter = moved.map(
    ({ c, name }) =>
      new Promise<number>((resolve) => {
        let dropped = false;
        const off = c.on('presence-changed', (e) => {
          if (e.agentId !== name) return;
          if (e.state !== 'connected') dropped = true;
          else if (dropped) {
            off();
            resolve(performance.now() - killedAt);
          }
        });
      }),
  );
  hubs[0]!.proc.kill('SIGKILL');
  const back = await Promise.all(backAfter);
  await Bun.sleep(3_000);
  stop = true;
  await Promise.all(loops);
  // Every accepted message reaches its recipient (live or recovered); wait for the stragglers.
  for (
    let waited = 0;
    waited < 10_000 && [...acceptedIds].some((id) => !handled.has(id));
    waited += 100
  )
    await Bun.sleep(100);
  const sql = new SQL(url);
  const ids = [...acceptedIds];
  const [stored] =
    await sql`SELECT count(*)::int AS n FROM mesh_messages WHERE msg_id = ANY(${ids}::text[])`;
  const seq = await sequences(sql, 'failover');
  await sql.close();
  await Promise.all(clients.map(({ c }) => c.close()));
  rmSync(dir, { recursive: true, force: true });
  for (const h of hubs) h.proc.kill('SIGKILL');
  return {
    accepted: ids.length,
    lostInDb: ids.length - (stored.n as number),
    notDelivered: ids.filter((id) => !handled.has(id)).length,
    retried: refused,
    backMaxMs: Math.max(...back),
    backMedianMs: back.sort((a, b) => a - b)[Math.floor(back.length / 2)]!,
    moved: back.length,
    seq,
  };
}

const loadAtStart = loadavg()[0]!.toFixed(1);
try {
  const url = await pg.createDatabase('bench');
  // The schema is made by the first process to open the store; make it here so phase 0 can add its project.
  await createPostgresMeshStore({ sql: new SQL(url), log: silentLog });
  const s0 = ONLY_THROUGHPUT ? undefined! : await storeOnly(url);
  const t = await throughput(url);
  const sql = new SQL(url);
  const seqT = await sequences(sql, 'bench');
  await sql.close();
  const perMessage = `hub A ${t.cpu.hubA.toFixed(1)} µs, hub B ${t.cpu.hubB.toFixed(1)} µs, PostgreSQL ${t.cpu.postgres.toFixed(1)} µs, the benchmark's clients ${t.cpu.client.toFixed(1)} µs`;
  if (ONLY_THROUGHPUT) {
    console.log(
      `two hubs: ${fmt(t.rate)} accepted/s, ${fmt(t.deliveredRate)} delivered/s, ${seqT.gapFree && seqT.n === t.total ? 'gap-free' : 'NOT gap-free'}; ${t.messagesPerTransaction.toFixed(1)} messages per database transaction; CPU per message: ${perMessage}`,
    );
    throw new Done();
  }
  const f = await failover(url);
  const rows = [
    `| the store alone: two processes appending to one project, 2,048 in flight each | ${fmt(s0.rate)} durable messages/s (${s0.seq.gapFree && s0.seq.n === s0.stored ? 'gap-free' : 'NOT gap-free'}) |`,
    `| two hubs, ${2 * PAIRS_PER_HUB} senders (half per hub) to receivers on the other hub, ${WINDOW} in flight each | ${fmt(t.rate)} durable messages/s (accepted) |`,
    `| the same, delivered across hubs and acknowledged back to the sender | ${fmt(t.deliveredRate)} messages/s |`,
    `| CPU time per message in that run (user + system) | ${perMessage} |`,
    `| messages per PostgreSQL transaction in that run (group commits, outcome notes, leases) | ${t.messagesPerTransaction.toFixed(1)} |`,
    `| sequences after ${fmt(t.total)} messages | ${seqT.n === t.total && seqT.gapFree ? `1..${fmt(seqT.top)}, gap-free` : `NOT gap-free: ${JSON.stringify(seqT)}`} |`,
    `| \`kill -9\` of one hub under load: accepted messages | ${fmt(f.accepted)} (sends cut by the kill were retried with the same id: ${fmt(f.retried)} attempts refused while reconnecting) |`,
    `| accepted but missing from the database / never handled by the recipient | ${f.lostInDb} / ${f.notDelivered} |`,
    `| clients moved to the other hub (${f.moved}), back after kill: median / max | ${Math.round(f.backMedianMs)} ms / ${Math.round(f.backMaxMs)} ms |`,
    `| sequences after the failover run | ${f.seq.gapFree ? `1..${fmt(f.seq.top)}, gap-free` : `NOT gap-free: ${JSON.stringify(f.seq)}`} |`,
  ];
  reportSection(
    'Mesh on PostgreSQL: two hubs, one database',
    [
      `\`bun bench/mesh-cluster.ts\` (${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}) — two hub processes (\`MESH_DATABASE_URL\` mode) on one PostgreSQL 15 cluster with`,
      '`fsync`, `synchronous_commit` and `full_page_writes` on, all on this machine (2 cores shared by PostgreSQL, both',
      `hubs and the clients; load average ${loadAtStart} at the start of this run: other work on the machine moves these`,
      'figures a lot). A message counts when its group commit returned and `accepted` reached the sender. The',
      "benchmark's clients read each frame as text and look only at its type, messageId and status (they share the",
      'cores, and a real deployment parses on its own machines). CPU time per message is read from /proc for each',
      'process over the throughput run: it holds up better than throughput when the machine is busy.',
      '',
      '| What | Figure |',
      '|---|---|',
      ...rows,
    ].join('\n'),
  );
  const ok =
    s0.seq.gapFree &&
    seqT.gapFree &&
    f.seq.gapFree &&
    f.lostInDb === 0 &&
    f.notDelivered === 0 &&
    f.backMaxMs < 2_000;
  if (!ok) process.exitCode = 1;
} catch (e) {
  if (!(e instanceof Done)) throw e;
} finally {
  await stopAll();
}
process.exit();
