/**
 * Benchmark: history page latency on a project of one million messages (file store, WAL), through
 * the store and through `GET /v1/history`; then hub memory with 1,000 presences connected.
 * Usage: bun bench/mesh-history.ts [messages=1000000]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLog } from '../lib/log.ts';
import { encodeText } from '../lib/mesh/payload.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { createMeshServer } from '../hub/mesh/server.ts';
import { claim, fmt, spawnHub } from './mesh-common.ts';

const total = Number(process.argv[2] ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), 'mesh-history-'));
const db = openMeshDatabase(join(dir, 'hub', 'mesh.sqlite'));
// Filling: large groups, synchronous = NORMAL only while filling (this is set-up, not the measured path).
db.exec('PRAGMA synchronous = NORMAL');
const store = createSqliteMeshStore({ db, log: silentLog, maxBatch: 5000, schedule: () => {} });
store.createProject({ name: 'big' });
const t0 = performance.now();
const names = ['alice', 'bob', 'carol', 'dave'];
for (let i = 1; i <= total; i++) {
  void store.append({
    project: 'big',
    from: { name: names[i % 4]!, presenceId: 'p' },
    messageId: `m-${i}`,
    target: { type: 'project' },
    payload: encodeText(`message number ${i} with a little text like a real status line`),
    attachments: [],
  });
}
store.flush();
db.exec('PRAGMA synchronous = FULL');
console.log(`filled ${fmt(total)} messages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const pct = (xs: number[], p: number) =>
  xs.slice().sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;
function measure(label: string, run: (before: number) => unknown, n = 2000) {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const before = 51 + Math.floor(Math.random() * (total - 51));
    const t = performance.now();
    run(before);
    xs.push(performance.now() - t);
  }
  console.log(
    `${label.padEnd(48)} median ${pct(xs, 0.5).toFixed(3)} ms  p99 ${pct(xs, 0.99).toFixed(3)} ms`,
  );
}
measure('store.history, 50 before a random cursor', (before) =>
  store.history({ project: 'big', before, limit: 50 }),
);
measure('store.history, newest 50', () => store.history({ project: 'big', limit: 50 }));
measure('store.history, 50 from one sender before cursor', (before) =>
  store.history({ project: 'big', before, from: 'carol', limit: 50 }),
);

// Through HTTP: the same hub code in this process, answering GET /v1/history.
const mesh = createMeshServer({ store, log: silentLog });
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req, srv) => mesh.fetch(req, srv as never) ?? new Response('', { status: 404 }),
  websocket: mesh.websocket,
});
const http: number[] = [];
for (let i = 0; i < 1000; i++) {
  const before = 51 + Math.floor(Math.random() * (total - 51));
  const t = performance.now();
  const r = await fetch(
    `${server.url.origin}/v1/history?project=big&before=big:${before}&limit=50`,
  );
  await r.json();
  http.push(performance.now() - t);
}
console.log(
  `${'GET /v1/history, 50 before a random cursor'.padEnd(48)} median ${pct(http, 0.5).toFixed(3)} ms  p99 ${pct(http, 0.99).toFixed(3)} ms`,
);
mesh.close();
await server.stop(true);
store.close();
rmSync(dir, { recursive: true, force: true });

// Memory: a hub process with 1,000 presences connected (clients in this process).
const hub = await spawnHub('memory', tmpdir(), ['big']);
const idle = (await fetch(`${hub.url}/bench/stats`).then((r) => r.json())) as { rss: number };
const clients = [];
for (let i = 0; i < 1000; i++) clients.push(await claim(hub.url, 'big', `agent-${i}`, () => {}));
const busy = (await fetch(`${hub.url}/bench/stats`).then((r) => r.json())) as {
  rss: number;
  presences: number;
};
console.log(
  `hub RSS idle ${(idle.rss / 2 ** 20).toFixed(1)} MB; with ${busy.presences} presences ${(busy.rss / 2 ** 20).toFixed(1)} MB`,
);
for (const c of clients) c.ws.close();
await hub.stop();
process.exit(0);
