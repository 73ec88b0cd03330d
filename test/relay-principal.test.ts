/**
 * A call relayed through another node runs, on the last node, for the principal who started it:
 * real servers (the executor `resolve`, a relay node), the hub's signed client. Each user the hub
 * relays for has the executor's per-caller limit of their own, as with a direct call, instead of
 * every relayed job counting against the relay node.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Catalog, type Capability } from '../lib/catalog/catalog.ts';
import { parseFleet, type Fleet } from '../lib/config/fleet-file.ts';
import { createPeerClient, type PeerClient } from '../lib/peer/client.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { startExecutor, type ExecutorNode } from './support/executor.ts';
import { startNode, tempDir, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const doc = {
  hub: { name: 'a2a', port: 1, role: 'hub', file: 'hub/main.ts' },
  nodes: [
    { name: 'resolve', port: 1, role: 'resolve', file: 'node/resolve/index.ts' },
    { name: 'relay', port: 1, role: 'relay', file: 'node/relay.ts' },
  ],
};
const dataDir = tempDir('lume-a2a-relay-');
/** The relay's own catalog: one harmless capability (a node has at least one). */
const ping = {
  id: 'relay.ping',
  name: 'Ping',
  description: 'Answers pong',
  tags: ['test'],
  keywords: ['ping'],
  readOnly: true,
  args: {},
  run: () => ({ pong: true }),
} as unknown as Capability;
let ex: ExecutorNode;
let relay: TestNode;
let hub: PeerClient;
const started: string[] = [];

beforeAll(async () => {
  // One key set for the three: resolve's ring knows the relay, the relay's knows the hub.
  await ensureKeys(dataDir, parseFleet(doc));
  // The ring marks the relay one: only the hub and relays may name the principal they act for.
  const ringFile = join(dataDir, 'keys', 'ring.json');
  const ringDoc = JSON.parse(readFileSync(ringFile, 'utf8'));
  ringDoc.nodes.relay.relay = true;
  writeFileSync(ringFile, JSON.stringify(ringDoc));
  ex = await startExecutor({ dataDir });
  const withUrls = (urls: Record<string, string>): Fleet =>
    parseFleet({
      ...doc,
      nodes: doc.nodes.map((n) => (urls[n.name] ? { ...n, url: urls[n.name] } : n)),
    });
  const relayFleet = withUrls({ resolve: ex.node.url });
  const relayKeys = await loadPeerIdentity(dataDir, 'relay');
  relay = await startNode(
    { name: 'relay', description: 'forwards signed calls', catalog: new Catalog([ping]) },
    {
      dataDir: tempDir('lume-a2a-relay-node-'),
      peer: {
        verifier: relayKeys.verifier,
        client: createPeerClient({ signer: relayKeys.signer, fleet: relayFleet }),
        fleet: relayFleet,
      },
    },
  );
  hub = createPeerClient({
    signer: (await loadPeerIdentity(dataDir, 'a2a')).signer,
    fleet: withUrls({ resolve: ex.node.url, relay: relay.url }),
  });
});
afterAll(async () => {
  for (const id of started) await ex.ok('exec.cancel', { job_id: id });
  await relay?.dispose();
  await ex?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const relayedSubmit = (onBehalfOf?: string) =>
  hub.peerRelay(
    'relay',
    ['resolve'],
    'exec.submit',
    { prompt: 'x', recipe: 'slow' },
    onBehalfOf ? { onBehalfOf } : {},
  );

test('a relayed exec.submit counts against the original principal, not the relay', async () => {
  // Three jobs for alice, relayed: her limit (3 per caller) is full, and only hers.
  for (let i = 0; i < 3; i++) {
    const r = await relayedSubmit('user:alice');
    expect(r.ok ? r.result : r.error).toMatchObject({ state: 'running' });
    if (r.ok) started.push((r.result as { job_id: string }).job_id);
  }
  const fourth = await relayedSubmit('user:alice');
  expect(fourth.ok ? 'ran' : fourth.error.code).toBe('CALLER_BUSY');
  // Bob behind the same hub and relay, and the hub relaying for itself, each still get a job.
  for (const who of ['user:bob', undefined]) {
    const r = await relayedSubmit(who);
    expect([who, r.ok ? 'ran' : r.error.code]).toEqual([who, 'ran']);
    if (r.ok) started.push((r.result as { job_id: string }).job_id);
  }
});
