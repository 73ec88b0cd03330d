/**
 * Multi-hop relays between nodes that hold their keys as the fleet's processes do: a live identity
 * (lib/peer/live-identity.ts) over the key files on disk, reloaded when an app joins. Through the
 * hub, through a member the ring or the fleet file marks `"relay": true`, through an unmarked
 * member (refused with its code), and with a joined app at either end of the chain.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseFleet, type Fleet } from '../lib/config/fleet-file.ts';
import { handlePeerInvoke, handlePeerRelay } from '../lib/fleet/peer-routes.ts';
import { createPeerClient, type PeerClient } from '../lib/peer/client.ts';
import { ensureKeys, ensureOwnKey } from '../lib/peer/keys.ts';
import { liveIdentity, type LiveIdentity } from '../lib/peer/live-identity.ts';
import { testDispatch } from './support/peer.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

/** a2a is the hub; crm is a relay in the ring, talentlens in the fleet file; app joins later. */
const NAMES = ['a2a', 'crm', 'scanner', 'lan', 'talentlens', 'app'];
const dataDir = tempDir('lume-a2a-relay-members-');
const servers = NAMES.map(() =>
  Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req) => route(req) }),
);
const member = (name: string, i: number) => ({
  name,
  port: servers[i]!.port,
  role: 'test',
  file: `node/${name}.ts`,
  ...(name === 'talentlens' ? { relay: true } : {}),
});
const fleet: Fleet = parseFleet({
  hub: member('a2a', 0),
  nodes: NAMES.slice(1).map((n, i) => member(n, i + 1)),
});
const identities = new Map<string, LiveIdentity>();
const clients = new Map<string, PeerClient>();
const nameOf = new Map(servers.map((s, i) => [s.port, NAMES[i]!]));

function route(req: Request): Promise<Response> | Response {
  const self = nameOf.get(Number(new URL(req.url).port))!;
  const identity = identities.get(self);
  if (!identity) return new Response('not started', { status: 503 });
  const deps = {
    self,
    verifier: identity.verifier,
    client: clients.get(self)!,
    fleet,
    dispatch: testDispatch(self),
  };
  const path = new URL(req.url).pathname;
  return path === '/peer/relay' ? handlePeerRelay(req, deps) : handlePeerInvoke(req, deps);
}

async function load(name: string) {
  const identity = await liveIdentity(dataDir, name);
  identities.set(name, identity);
  clients.set(name, createPeerClient({ signer: identity.signer, fleet }));
}

const client = (name: string) => clients.get(name)!;
/** What the last node of a chain saw: itself, the node that called it, the principal named. */
const seen = (node: string, from: string, onBehalfOf: string) => ({
  ok: true as const,
  result: { node, from, onBehalfOf },
});

beforeAll(async () => {
  // Every member but app has its pair in one key folder, as `bun run fleet` makes them.
  await ensureKeys(dataDir, { ...fleet, nodes: fleet.nodes.filter((n) => n.name !== 'app') });
  const ringFile = join(dataDir, 'keys', 'ring.json');
  const ring = JSON.parse(readFileSync(ringFile, 'utf8'));
  ring.nodes.crm.relay = true;
  writeFileSync(ringFile, JSON.stringify(ring));
  for (const name of NAMES.filter((n) => n !== 'app')) await load(name);
});
afterAll(() => {
  for (const s of servers) s.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a relay chain, every node on a live identity', () => {
  test('through the hub: lan > a2a > scanner runs for lan', async () => {
    expect(await client('lan').peerRelay('a2a', ['scanner'], 'caller')).toEqual(
      seen('scanner', 'a2a', 'node:lan'),
    );
  });

  test('through a member the ring marks a relay: lan > crm > scanner, a2a > crm > scanner', async () => {
    expect(await client('lan').peerRelay('crm', ['scanner'], 'caller')).toEqual(
      seen('scanner', 'crm', 'node:lan'),
    );
    expect(await client('a2a').peerRelay('crm', ['scanner'], 'caller')).toEqual(
      seen('scanner', 'crm', 'node:a2a'),
    );
    expect(
      await client('a2a').peerRelay('crm', ['scanner'], 'caller', {}, { onBehalfOf: 'user:alice' }),
    ).toEqual(seen('scanner', 'crm', 'user:alice'));
  });

  test('through the hub and a relay member: lan > a2a > crm > scanner', async () => {
    expect(await client('lan').peerRelay('a2a', ['crm', 'scanner'], 'caller')).toEqual(
      seen('scanner', 'crm', 'node:lan'),
    );
  });

  test('through a member the fleet file marks a relay: lan > talentlens > scanner', async () => {
    expect(await client('lan').peerRelay('talentlens', ['scanner'], 'caller')).toEqual(
      seen('scanner', 'talentlens', 'node:lan'),
    );
  });

  test('through an unmarked member: refused by the next node with PEER_NOT_DELEGATE, 403', async () => {
    for (const [first, via, last] of [
      ['crm', 'lan', 'scanner'],
      ['a2a', 'scanner', 'crm'],
    ] as const)
      expect(await client(first).peerRelay(via, [last], 'caller')).toEqual({
        ok: false,
        error: {
          code: 'PEER_NOT_DELEGATE',
          message: expect.stringContaining(`${via} is neither the hub nor a relay`),
          kind: 'failed',
          status: 403,
          at: last,
        },
      });
  });

  test('a joined app, at either end of the chain; the reloaded identities keep the relay marks', async () => {
    await ensureOwnKey(dataDir, 'app'); // what a join pins in the ring
    await load('app');
    for (const [name, identity] of identities) if (name !== 'app') await identity.reload();
    expect(await client('app').peerRelay('crm', ['scanner'], 'caller')).toEqual(
      seen('scanner', 'crm', 'node:app'),
    );
    expect(await client('lan').peerRelay('crm', ['app'], 'caller')).toEqual(
      seen('app', 'crm', 'node:lan'),
    );
    expect(await client('scanner').peerRelay('a2a', ['crm', 'app'], 'caller')).toEqual(
      seen('app', 'crm', 'node:scanner'),
    );
    expect(await client('crm').peerRelay('app', ['scanner'], 'caller')).toMatchObject({
      ok: false,
      error: { code: 'PEER_NOT_DELEGATE', status: 403, at: 'scanner' },
    });
  });
});
