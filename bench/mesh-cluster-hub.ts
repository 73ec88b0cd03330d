/**
 * Benchmark helper, one process on a shared PostgreSQL database, in one of two modes:
 * `hub <url> <lease ms> <recovery max>` serves a mesh hub and prints its port until killed;
 * `store <url> <messages> <prefix>` appends that many messages straight to the store (no hub, no
 * sockets; 2,048 in flight) and prints how many it stored and in how many milliseconds.
 */

import { SQL } from 'bun';
import { silentLog } from '../lib/log.ts';
import { encodeText } from '../lib/mesh/payload.ts';
import { createPostgresMeshStore } from '../lib/mesh/postgres-store.ts';
import { createPostgresCluster, newHubId } from '../hub/mesh/postgres-cluster.ts';
import { createMeshServer, type MeshSocketData } from '../hub/mesh/server.ts';

const [mode = 'hub', url = '', a = '', b = ''] = process.argv.slice(2);
const sql = new SQL(url, { max: 8 });
const hubId = newHubId();
const store = await createPostgresMeshStore({ sql, log: silentLog, origin: hubId });

if (mode === 'store') {
  const total = Number(a);
  let next = 0;
  let stored = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 2048 }, async () => {
      while (next < total) {
        const id = `${b}-${next++}`;
        const r = await store.append({
          project: 'store',
          from: { name: b, presenceId: hubId },
          messageId: id,
          target: { type: 'agent', name: 'receiver', presenceId: 'receiver' },
          payload: encodeText(`status update ${id}`),
          attachments: [],
        });
        if (r.ok) stored++;
      }
    }),
  );
  console.log(JSON.stringify({ stored, ms: performance.now() - t0 }));
  process.exit(0);
}

const cluster = await createPostgresCluster({
  sql,
  log: silentLog,
  hubId,
  leaseMs: Number(a || 1500),
});
const mesh = createMeshServer({
  store,
  log: silentLog,
  cluster,
  limits: { recoveryMaxMessages: Number(b || 500) },
});
const server = Bun.serve<MeshSocketData>({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req, srv) => mesh.fetch(req, srv) ?? new Response('not found', { status: 404 }),
  websocket: mesh.websocket,
});
console.log(server.port);
// Ends normally on SIGTERM, so a profiler started with `--cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
