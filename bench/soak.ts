/**
 * Soak: `bun run soak [--minutes N] [--kill-every S] [--json FILE]` (default 10 minutes, a kill every
 * 30 s). Starts the whole fleet under the supervisor in a temporary DATA_DIR on free ports, drives
 * A2A load (blocking sends to every A2A node and Ask questions to the hub), mesh traffic (direct
 * messages between presences), stalled consumers (trace streams that are never read), and kills a
 * random node or the hub with SIGKILL every S seconds (drawn from a shuffled bag of all of them,
 * the hub in its first half). At the end it reports each process's RSS
 * curve, the restarts, and how many acknowledged tasks and accepted mesh messages were lost
 * (read back after the last restart); it exits non-zero if any was.
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadFleet, type Fleet } from '../lib/config/fleet-file.ts';
import { ensureKeys } from '../lib/peer/keys.ts';
import { addToken } from '../lib/auth/tokens.ts';
import { fleetChildren } from '../hub/fleet/children.ts';
import { Supervisor } from '../hub/fleet/supervisor.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string' },
    'kill-every': { type: 'string' },
    json: { type: 'string' },
    keep: { type: 'boolean' },
  },
});
const minutes = Number(values.minutes ?? 10);
const killEveryS = Number(values['kill-every'] ?? 30);
if (!(minutes > 0 && minutes <= 24 * 60) || !(killEveryS >= 5)) {
  console.error(
    'usage: bun run soak [--minutes N (default 10)] [--kill-every S (default 30, at least 5)] [--json FILE] [--keep]',
  );
  process.exit(2);
}

const root = resolve(import.meta.dir, '..');
const say = (line: string) =>
  console.log(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${line}`);
const t0 = performance.now();

// ---- the fleet, on free ports in a temporary data folder ----

function freePorts(n: number): number[] {
  const servers = Array.from({ length: n }, () =>
    Bun.serve({ port: 0, fetch: () => new Response() }),
  );
  const ports = servers.map((s) => s.port!);
  servers.forEach((s) => s.stop(true));
  return ports;
}

const dataDir = mkdtempSync(join(tmpdir(), 'lume-a2a-soak-'));
const base = JSON.parse(readFileSync(join(root, 'fixtures', 'fleet.json'), 'utf8')) as {
  hub: Record<string, unknown>;
  nodes: Record<string, unknown>[];
};
const defaults = base.nodes.filter((n) => n.default !== false);
const ports = freePorts(defaults.length + 1);
const fleetFile = join(dataDir, 'fleet.json');
writeFileSync(
  fleetFile,
  JSON.stringify({
    hub: { ...base.hub, port: ports[0] },
    nodes: defaults.map((n, i) => ({ ...n, port: ports[i + 1] })),
  }),
);
const fleet: Fleet = await loadFleet(fleetFile);
await ensureKeys(dataDir, fleet);
// The soak's client is one principal (delegations need one, and it reads back its own tasks).
const auth = { Authorization: `Bearer ${addToken(dataDir, 'soak')}` };
mkdirSync(join(dataDir, 'logs'), { recursive: true });

const supervisor = new Supervisor(fleetChildren(fleet, root), {
  cwd: root,
  env: {
    ...process.env,
    DATA_DIR: dataDir,
    FLEET_FILE: fleetFile,
    PORT: undefined,
    LOG_LEVEL: 'warn',
  },
  logDir: join(dataDir, 'logs'),
  onChange: (row) => {
    if (row.state !== 'starting')
      say(`${row.name} ${row.state} pid=${row.pid ?? '-'} restarts=${row.restarts}`);
  },
});
supervisor.start();
const allUp = async (what: string, withinMs = 60_000) => {
  const until = performance.now() + withinMs;
  while (supervisor.rows().some((r) => r.state !== 'up')) {
    if (performance.now() > until)
      throw new Error(`${what}: not every process came up: ${JSON.stringify(supervisor.rows())}`);
    await Bun.sleep(200);
  }
};
await allUp('start');
say(
  `fleet up: ${supervisor
    .rows()
    .map((r) => `${r.name}:${r.port}`)
    .join(' ')}; data in ${dataDir}`,
);

const hubUrl = fleet.hub.url;
const endAt = performance.now() + minutes * 60_000;
let running = true;

// ---- RSS, sampled every 5 s per process (by name: a restarted process continues its curve) ----

const rss = new Map<string, { t: number; mib: number }[]>();
function sampleRss(): void {
  const t = (performance.now() - t0) / 1000;
  for (const r of supervisor.rows()) {
    if (!r.pid) continue;
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${r.pid}/status`, 'utf8'))?.[1]);
      if (kb) (rss.get(r.name) ?? rss.set(r.name, []).get(r.name)!).push({ t, mib: kb / 1024 });
    } catch {}
  }
}
sampleRss();
const rssTimer = setInterval(sampleRss, 5000);

// ---- A2A load: blocking sends; every acknowledged task is remembered ----

/** Pause between one worker's sends: four workers make at most about 50 sends a second. */
const PACE_MS = 80;

interface Acked {
  node: string;
  url: string;
  id: string;
  state: string;
}
const acked: Acked[] = [];
let sendFailures = 0;
const a2aNodes = fleet.nodes.filter((n) => n.default);
/** Per node, the read-only capabilities that need no arguments (found from `/capabilities`). */
const skills = new Map<string, string[]>();
for (const n of a2aNodes) {
  const caps = (await (await fetch(`${n.url}/capabilities`)).json()).capabilities as {
    id: string;
    readOnly: boolean;
    args: Record<string, { required?: boolean }>;
  }[];
  const card = await fetch(`${n.url}/.well-known/agent-card.json`);
  await card.body?.cancel();
  if (!card.ok) continue; // a peer-only app: no A2A
  skills.set(
    n.name,
    caps
      .filter((c) => c.readOnly && !Object.values(c.args).some((a) => a.required))
      .map((c) => c.id),
  );
}
const targets = [...skills.keys()];
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
/** Fisher-Yates. */
function shuffled<T>(xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

/** Every 50th send is a delegation to the executor, a task that stays working while its job runs. */
let sends = 0;
async function a2aWorker(): Promise<void> {
  while (running) {
    const delegate = ++sends % 50 === 0;
    const toHub = delegate || Math.random() < 0.1;
    const name = toHub ? fleet.hub.name : pick(targets);
    const url = toHub ? hubUrl : fleet.nodes.find((n) => n.name === name)!.url;
    const parts = delegate
      ? [{ data: { skill: 'task.delegate', args: { prompt: 'soak', recipe: 'demo' } } }]
      : toHub
        ? [{ text: pick(['which nodes are in the fleet', 'show the sectors', 'list customers']) }]
        : [{ data: { skill: pick(skills.get(name)!), args: {} } }];
    try {
      const res = await fetch(`${url}/a2a`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...auth },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts } },
        }),
        signal: AbortSignal.timeout(30_000),
      });
      const body = (await res.json()) as {
        result?: { task?: { id: string; status: { state: string } } };
      };
      const task = body.result?.task;
      if (task) acked.push({ node: name, url, id: task.id, state: task.status.state });
      else sendFailures++;
      await Bun.sleep(PACE_MS);
    } catch {
      sendFailures++;
      await Bun.sleep(100); // the node is down; the supervisor is bringing it back
    }
  }
}

// ---- mesh traffic: senders send direct messages; every `accepted` is remembered ----

interface Accepted {
  sequence: number;
  messageId: string;
}
const accepted: Accepted[] = [];
let meshSent = 0;
await fetch(`${hubUrl}/api/projects.create`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ name: 'soak' }),
});

function meshPresence(name: string, peer: string | null): void {
  if (!running) return;
  const ws = new WebSocket(`${hubUrl.replace(/^http/, 'ws')}/v1/connect`);
  let timer: ReturnType<typeof setInterval> | undefined;
  ws.onopen = () =>
    ws.send(JSON.stringify({ type: 'hello', protocolVersion: 3, project: 'soak', name }));
  ws.onmessage = (e) => {
    const f = JSON.parse(String(e.data));
    if (f.type === 'claimed' && peer) {
      timer = setInterval(() => {
        if (!running) return ws.close(); // the load has stopped; answers to what was sent still arrive first
        const id = crypto.randomUUID();
        const text = `soak ${name} ${meshSent++}`;
        ws.send(
          JSON.stringify({
            type: 'message',
            requestId: id,
            messageId: id,
            target: { type: 'agent', name: peer },
            payload: { encoding: 'identity', data: text, uncompressedBytes: text.length },
            attachments: [],
          }),
        );
      }, 25);
    } else if (f.type === 'accepted')
      accepted.push({ sequence: f.message.sequence, messageId: f.message.messageId });
    else if (f.type === 'message')
      ws.send(JSON.stringify({ type: 'delivered', messageId: f.message.messageId }));
  };
  ws.onclose = () => {
    clearInterval(timer);
    setTimeout(() => meshPresence(name, peer), 500); // the hub restarts; join again
  };
  ws.onerror = () => {};
}

// ---- stalled consumers: trace streams read once, then never again (TCP backpressure) ----

let stalledOpened = 0;
const hubPid = () => supervisor.rows().find((r) => r.name === fleet.hub.name)?.pid ?? null;
/** A paused socket never reads the end of its stream, so a hub restart is noticed by its pid. */
function stalledTraceReader(): void {
  if (!running) return;
  const url = new URL(hubUrl);
  const pid = hubPid();
  const sock: Socket = connect(Number(url.port), url.hostname, () => {
    stalledOpened++;
    sock.write(
      `GET /api/trace/stream HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`,
    );
  });
  sock.once('data', () => sock.pause());
  sock.on('error', () => {});
  const watch = setInterval(() => {
    if (running && hubPid() === pid) return;
    clearInterval(watch);
    sock.destroy();
    setTimeout(stalledTraceReader, 1000);
  }, 2000);
}

// ---- the killer ----

const kills: { at: number; name: string; pid: number }[] = [];
/**
 * Victims come from a shuffled bag of every process, so a long enough run kills each one; the hub
 * (mesh, trace, delegations) is always in the bag's first half, so every run of four kills or
 * more kills it at least once.
 */
let bag: string[] = [];
const killer = setInterval(() => {
  if (!bag.length) {
    const nodes = shuffled(
      supervisor
        .rows()
        .map((r) => r.name)
        .filter((n) => n !== fleet.hub.name),
    );
    nodes.splice(Math.floor(Math.random() * Math.ceil((nodes.length + 1) / 2)), 0, fleet.hub.name);
    bag = nodes.reverse(); // drawn from the end
  }
  const name = bag.pop()!;
  const v = supervisor.rows().find((r) => r.name === name && r.pid && r.state === 'up');
  if (!v) return;
  kills.push({ at: Math.round((performance.now() - t0) / 1000), name: v.name, pid: v.pid! });
  say(`kill -9 ${v.name} (pid ${v.pid})`);
  try {
    process.kill(v.pid!, 'SIGKILL');
  } catch {}
}, killEveryS * 1000);

// ---- run ----

const workers = Array.from({ length: 4 }, () => a2aWorker());
for (let i = 0; i < 2; i++) meshPresence(`recv${i}`, null), meshPresence(`send${i}`, `recv${i}`);
for (let i = 0; i < 4; i++) stalledTraceReader();
const progress = setInterval(
  () =>
    say(
      `${acked.length} tasks acknowledged, ${accepted.length} mesh messages accepted, ${kills.length} kills`,
    ),
  60_000,
);
while (performance.now() < endAt) await Bun.sleep(1000);
running = false;
clearInterval(killer);
clearInterval(progress);
await Promise.all(workers);
say('load stopped; waiting for every process to be up, then reading everything back');
await allUp('the check');
sampleRss();
clearInterval(rssTimer);

// ---- read back: nothing acknowledged may be gone ----

const TERMINAL = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);
const lostTasks: (Acked & { now: string })[] = [];
let failedByRestart = 0;
const finalStates = new Map<string, number>();
for (let i = 0; i < acked.length; i += 16) {
  await Promise.all(
    acked.slice(i, i + 16).map(async (a) => {
      const res = await fetch(`${a.url}/a2a`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...auth },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'GetTask',
          params: { id: a.id, historyLength: 0 },
        }),
      });
      const body = (await res.json()) as {
        result?: { status: { state: string }; metadata?: Record<string, unknown> };
      };
      const now = body.result?.status.state ?? 'missing';
      finalStates.set(now, (finalStates.get(now) ?? 0) + 1);
      // Lost: gone, or a state the client was told is final has changed.
      if (now === 'missing' || (TERMINAL.has(a.state) && now !== a.state))
        lostTasks.push({ ...a, now });
      else if (!TERMINAL.has(a.state) && body.result?.metadata?.recovery) failedByRestart++;
    }),
  );
}
const history = new Map<number, string>();
// Newest first, paged backwards with `before` (a page may be cut short by the size budget).
for (let before = 0; ; ) {
  const res = await fetch(
    `${hubUrl}/v1/history?project=soak&limit=500${before ? `&before=soak:${before}` : ''}`,
  );
  const page = (await res.json()) as { messages?: { sequence: number; messageId: string }[] };
  if (!page.messages) throw new Error(`history read failed: ${res.status} ${JSON.stringify(page)}`);
  if (!page.messages.length) break;
  for (const m of page.messages) history.set(m.sequence, m.messageId);
  before = page.messages[0]!.sequence;
  if (before === 1) break;
}
const lostMessages = accepted.filter((a) => history.get(a.sequence) !== a.messageId);

// ---- report ----

const rows = supervisor.rows();
await supervisor.stop();
const mib = (n: number) => n.toFixed(0).padStart(5);
console.log(
  `\nsoak: ${minutes} min, a kill -9 every ${killEveryS} s (${kills.length} kills: ${Object.entries(
    kills.reduce<Record<string, number>>((m, k) => ((m[k.name] = (m[k.name] ?? 0) + 1), m), {}),
  )
    .map(([n, c]) => `${n} ${c}`)
    .join(', ')})`,
);
console.log('\nRSS per process (MiB): start, then the highest sample of each minute, and the end');
for (const [name, samples] of rss) {
  const perMinute: number[] = [];
  for (const s of samples)
    perMinute[Math.floor(s.t / 60)] = Math.max(perMinute[Math.floor(s.t / 60)] ?? 0, s.mib);
  const max = Math.max(...samples.map((s) => s.mib));
  console.log(
    `  ${name.padEnd(11)} start ${mib(samples[0]!.mib)} | ${perMinute.map((m) => mib(m ?? 0)).join(' ')} | end ${mib(samples[samples.length - 1]!.mib)} | max ${mib(max)}`,
  );
}
console.log(`\nrestarts: ${rows.map((r) => `${r.name} ${r.restarts}`).join(', ')}`);
console.log(
  `A2A: ${acked.length} tasks acknowledged (${targets.length} nodes and the hub), ${sendFailures} sends not acknowledged (node down), ${failedByRestart} acknowledged while working and failed by a restart`,
);
console.log(
  `   read back: ${[...finalStates].map(([st, n]) => `${n} ${st.replace('TASK_STATE_', '').toLowerCase()}`).join(', ')}`,
);
console.log(`mesh: ${meshSent} messages sent, ${accepted.length} accepted`);
console.log(`stalled trace readers opened: ${stalledOpened}`);
console.log(
  `LOST: ${lostTasks.length} acknowledged tasks, ${lostMessages.length} accepted mesh messages`,
);
for (const l of lostTasks.slice(0, 10))
  console.log(`  task ${l.node} ${l.id}: acknowledged ${l.state}, now ${l.now}`);
for (const l of lostMessages.slice(0, 10)) console.log(`  mesh soak:${l.sequence} ${l.messageId}`);
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify(
      {
        minutes,
        killEveryS,
        kills,
        rss: Object.fromEntries(rss),
        restarts: rows,
        acked: acked.length,
        sendFailures,
        failedByRestart,
        meshSent,
        accepted: accepted.length,
        lostTasks,
        lostMessages,
      },
      null,
      2,
    ),
  );
if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
process.exit(lostTasks.length || lostMessages.length ? 1 : 0);
