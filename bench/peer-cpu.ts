/**
 * @module bench/peer-cpu — what the signed channel's steps cost in process, one at a time: signing
 * a request (pairwise), verifying it on the receiver, and the peer client's whole call around a
 * fetch that answers at once (a prepared answer with its Content-Length). Prints µs per step (least
 * and median of 5 runs of 50,000).
 *
 * Usage: bun bench/peer-cpu.ts [--tree <dir>] (another source tree, to compare two side by side)
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { tree: { type: 'string' } } });
const tree = resolve(values.tree ?? join(import.meta.dir, '..'));
const { parseFleet } = await import(join(tree, 'lib/config/fleet-file.ts'));
const { ensureKeys, loadPeerIdentity } = await import(join(tree, 'lib/peer/keys.ts'));
const { createPeerClient } = await import(join(tree, 'lib/peer/client.ts'));
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-peer-cpu-'));
const doc = {
  hub: { name: 'a2a', port: 0, role: 'hub', file: 'x' },
  nodes: [{ name: 'scanner', port: 0, role: 'scanner', file: 'x', url: 'http://127.0.0.1:9' }],
};
await ensureKeys(tmp, parseFleet(doc));
const hub = await loadPeerIdentity(tmp, 'a2a');
const node = await loadPeerIdentity(tmp, 'scanner');
const body = new TextEncoder().encode(JSON.stringify({ capability: 'scanner.status', args: {} }));
const target = { to: 'scanner', route: '/peer/invoke', scope: 'scanner.status' };
const N = 50_000;

async function time(label: string, step: () => unknown) {
  for (let i = 0; i < 5_000; i++) await step();
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await step();
    runs.push(((performance.now() - t0) * 1000) / N);
  }
  runs.sort((a, b) => a - b);
  console.log(`${label.padEnd(24)} least ${runs[0]!.toFixed(2)} µs, median ${runs[2]!.toFixed(2)}`);
}

await time('sign (pairwise)', () => hub.signer.sign(target, body));
// Requests signed beforehand (a nonce is accepted once), with the headers a call carries.
const signed: Headers[] = [];
for (let i = 0; i < 5_000 + 5 * N; i++) {
  const h = await hub.signer.sign(target, body);
  h.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  h['content-type'] = 'application/json';
  signed.push(new Headers(h));
}
let next = 0;
await time('verify (pairwise)', async () => {
  const v = await node.verifier.verify(signed[next++]!, body, '/peer/invoke');
  if (!v.ok) throw new Error(v.error.code);
});
const answer = JSON.stringify({ ok: true, result: { status: 'ok', sectors: 12 } });
const length = String(Buffer.byteLength(answer));
const answers = (async () =>
  new Response(answer, {
    headers: { 'content-type': 'application/json', 'content-length': length },
  })) as unknown as typeof fetch;
const client = createPeerClient({ signer: hub.signer, fleet: parseFleet(doc), fetch: answers });
await time('peerFetch (no network)', async () => {
  if (!(await client.peerFetch('scanner', 'scanner.status', {})).ok) throw new Error('failed');
});
console.log(`tree ${tree}`);
rmSync(tmp, { recursive: true, force: true });
