// The scanner node with its real peer verifier on /peer/invoke, and the same dispatch behind an
// unsigned route /plain/invoke, for the fleet benchmark, and its CPU time at GET /cpu. Keys come
// from DATA_DIR/keys.
// Prints "LISTENING <port>".
import { resolve } from 'node:path';
import { createNode } from '../../lib/node/create-node.ts';
import { loadPeerIdentity } from '../../lib/peer/keys.ts';
import { handlePeerInvoke } from '../../lib/fleet/peer-routes.ts';
import type { PeerVerifier } from '../../lib/peer/verifier.ts';
import scanner from '../../node/scanner/index.ts';

const dataDir = process.env.DATA_DIR!;
const def = scanner({ fixturesDir: resolve(import.meta.dir, '../../fixtures') });
const { verifier } = await loadPeerIdentity(dataDir, 'scanner');
const node = createNode(def, { dataDir, port: 0, peer: { verifier } });
const passThrough: PeerVerifier = {
  verify: async (h) => ({
    ok: true,
    result: { node: 'a2a', mode: 'ed25519', scope: h.get('x-peer-scope') ?? '', ts: 0 },
  }),
};
// GET /cpu: this process's CPU time, so the benchmark can charge each path its node-side cost.
node.app.get('/cpu', () => process.cpuUsage());
node.app.post('/plain/invoke', ({ request }) =>
  handlePeerInvoke(request, {
    self: 'scanner',
    verifier: passThrough,
    dispatch: (c, a) => def.catalog.invoke(c, a),
  }),
);
const running = await node.start();
console.log(`LISTENING ${running.port}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
