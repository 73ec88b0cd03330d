/** Benchmark helper: a mesh hub in its own process (so it has its own core); prints its port, then serves until killed. */

import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import { silentLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { createMeshServer, type MeshSocketData } from '../hub/mesh/server.ts';

// argv: <file|memory> <dataDir> <project>...
const [mode = 'memory', dir = '/tmp', ...projects] = process.argv.slice(2);
const db =
  mode === 'file'
    ? openMeshDatabase(join(dir, 'hub', 'mesh.sqlite'))
    : new Database(':memory:', { strict: true });
const store = createSqliteMeshStore({ db, log: silentLog });
for (const p of projects) store.createProject({ name: p });
const mesh = createMeshServer({ store, log: silentLog });
const server = Bun.serve<MeshSocketData>({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req, srv) {
    if (new URL(req.url).pathname === '/bench/stats') {
      Bun.gc(true);
      const m = process.memoryUsage();
      return Response.json({
        rss: m.rss,
        heapUsed: m.heapUsed,
        presences: mesh.realtime.roster.size,
      });
    }
    return mesh.fetch(req, srv) ?? new Response('not found', { status: 404 });
  },
  websocket: mesh.websocket,
});
// Ends normally on SIGTERM, so a profiler started with `--cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
console.log(server.port);
