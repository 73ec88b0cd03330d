/**
 * The hub's `POST /peer/join` as a token holder attacks it, against a real hub process on port 0:
 * the URL is probed only after the token, the proof and the name gate, and every way the probe
 * fails (nothing listening, some other server, another node's key, an interface on another
 * member's port) is one answer, so a closed port and an open one look alike; a member may not
 * list the hub's gRPC port as its own. And a node that joins is checked against the key it pinned
 * from that moment: its card signed by a foreign key shows `cardSignature` failed in /api/fleet,
 * with no restart.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cardKeyOf } from '../lib/a2a/card/signature.ts';
import { JOIN_ROUTE, JOIN_SCOPE } from '../lib/fleet/join.ts';
import { capability, defineNode, serveNode } from '../lib/kit/node.ts';
import { ensureOwnKey, loadPeerIdentity, publicIdentity } from '../lib/peer/keys.ts';
import { tempDir, TEST_TOKEN } from './support/node.ts';
import { startProcess, type ServingProcess } from './support/process.ts';
import { freePorts } from './support/processes.ts';
import { bunCommand } from './support/bundle.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const work = tempDir('lume-a2a-join-gate-');
let hub: ServingProcess;
let hubGrpc: number;
const servers: { stop(force?: boolean): unknown }[] = [];
let seen = 0;

/** A server at a URL a joiner presents: answers what `answer` gives, and counts what it is asked. */
function serve(answer: (path: string, base: string) => unknown): string {
  const s = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      seen++;
      const base = `http://127.0.0.1:${s.port}`;
      const body = answer(new URL(req.url).pathname, base);
      return body === undefined ? new Response('not here', { status: 404 }) : Response.json(body);
    },
  });
  servers.push(s);
  return `http://127.0.0.1:${s.port}`;
}

type Signer = Awaited<ReturnType<typeof loadPeerIdentity>>['signer'];
let key: { kid: string; publicKey: string };
let signer: Signer;

/** A key pair of a node called `name`, its signer and its public key. */
async function identityOf(name: string) {
  const dir = join(work, name);
  await ensureOwnKey(dir, name);
  const identity = await loadPeerIdentity(dir, name);
  return { signer: identity.signer, key: publicIdentity(name, identity.ring)!.keys[0]! };
}

/** Posts a join signed with the probe's key (or `as`'s): its status and body. */
async function attempt(
  doc: Record<string, unknown>,
  as: Signer = signer,
): Promise<[number, unknown]> {
  const body = new TextEncoder().encode(JSON.stringify(doc));
  const signed = await as.sign({ to: 'a2a', route: JOIN_ROUTE, scope: JOIN_SCOPE }, body, {
    mode: 'ed25519',
  });
  const res = await fetch(`${hub.url}${JOIN_ROUTE}`, {
    method: 'POST',
    headers: {
      ...signed,
      'content-type': 'application/json',
      authorization: `Bearer ${TEST_TOKEN}`,
    },
    body,
  });
  return [res.status, await res.json()];
}

beforeAll(async () => {
  hub = await startProcess('hub/main.ts');
  hubGrpc = Number(/gRPC on port (\d+)/.exec(hub.out())![1]);
  ({ signer, key } = await identityOf('probe'));
});
afterAll(async () => {
  for (const s of servers) s.stop(true);
  await hub?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('every probing failure is one answer, after the gate; an interface on the hub’s gRPC port is refused', async () => {
  const fleetFile = () => readFileSync(join(hub.dataDir, 'fleet.json'), 'utf8');
  const before = fleetFile();
  const card = (grpc: string | undefined) => (path: string, base: string) =>
    path === '/.well-known/agent-card.json'
      ? {
          name: 'probe',
          supportedInterfaces: [
            { url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
            ...(grpc ? [{ url: grpc, protocolBinding: 'GRPC', protocolVersion: '1.0' }] : []),
          ],
        }
      : path === '/peer/identity'
        ? { node: 'probe', keys: [{ publicKey: key.publicKey }] }
        : undefined;

  // The name gate comes first: a name the probe cannot have probes nothing.
  const counted = serve(() => undefined);
  const hubNamed = await identityOf('a2a');
  const [status, body] = await attempt(
    { name: 'a2a', url: counted, ...hubNamed.key },
    hubNamed.signer,
  );
  expect([status, (body as any).error.code, seen]).toEqual([409, 'JOIN_NAME_TAKEN', 0]);

  const [closed] = freePorts(1) as [number];
  const urls = [
    `http://127.0.0.1:${closed}`, // nothing listens
    counted, // something does, but no node
    serve((path, base) =>
      path === '/peer/identity'
        ? { node: 'probe', keys: [{ publicKey: 'A'.repeat(43) }] }
        : card(undefined)(path, base),
    ), // another key
    serve(card(`127.0.0.1:${hubGrpc}`)), // the hub's gRPC port as its own
  ];
  const answers = [];
  for (const url of urls) answers.push(await attempt({ name: 'probe', url, ...key }));
  const [first] = answers as [[number, any]];
  expect(first[0]).toBe(403);
  expect(first[1].error.code).toBe('JOIN_URL_NOT_YOURS');
  // Byte for byte the same: the answer says nothing of what runs there.
  for (const a of answers) expect(a).toEqual(first);
  expect(fleetFile()).toBe(before);

  // The same node with interfaces of its own joins.
  const own = serve(card(undefined));
  const [ok, joined] = await attempt({ name: 'probe', url: own, ...key });
  expect([ok, (joined as any).result.status]).toEqual([200, 'added']);
  expect(hub.alive()).toBe(true);
});

test('a node joined with a card signed by a foreign key shows cardSignature failed, with no restart', async () => {
  const node = await serveNode(
    defineNode(() => ({
      name: 'stranger',
      description: 'Signs its card with a key nobody pinned',
      capabilities: [
        capability({
          id: 'stranger.ping',
          name: 'Ping',
          description: 'Answers',
          tags: ['t'],
          keywords: ['ping'],
          readOnly: true,
          args: {},
          run: () => ({ ok: true }),
        }),
      ],
    })),
    {
      dataDir: join(work, 'stranger'),
      join: { hub: hub.url, token: TEST_TOKEN, retry: { firstMs: 50, maxMs: 100 } },
    },
  );
  servers.push({ stop: () => node.stop() });
  const joined = await node.node.join!.done;
  expect(joined.ok).toBe(true);
  const status = async () =>
    ((await (await fetch(`${hub.url}/api/fleet`)).json()) as any).nodes.find(
      (n: any) => n.name === 'stranger',
    );
  // Its card is signed by a key the hub never pinned before the hub first reads it: the hub
  // checks it against the key the join pinned, with no restart.
  node.node.rotateCardKey(cardKeyOf(crypto.getRandomValues(new Uint8Array(32))));
  const marked = await status();
  expect(marked.cardSignature).toEqual({ state: 'failed', code: 'CARD_KEY_UNKNOWN' });
  expect(marked.warnings).toEqual([
    'card signature does not verify against the key pinned for stranger (CARD_KEY_UNKNOWN)',
  ]);
});

test('a fleet file edited into invalid JSON: a join is 503 JOIN_FLEET_FILE_INVALID and the hub stays up; a hub started on it exits naming the file', async () => {
  const path = join(hub.dataDir, 'fleet.json');
  const good = readFileSync(path, 'utf8');
  try {
    writeFileSync(path, '{"hub": {"name": "a2a", ');
    const { key: k, signer: s } = await identityOf('late');
    const [status, body] = await attempt({ name: 'late', url: serve(() => undefined), ...k }, s);
    expect([status, (body as any).error.code]).toEqual([503, 'JOIN_FLEET_FILE_INVALID']);
    expect(hub.alive()).toBe(true);
    expect(await hub.waitForLog(path)).toContain('join refused: the fleet file does not read');
  } finally {
    writeFileSync(path, good);
  }
  const broken = join(work, 'broken-fleet.json');
  writeFileSync(broken, '{"hub": ');
  const proc = Bun.spawn(bunCommand(['hub/main.ts']), {
    cwd: join(import.meta.dir, '..'),
    env: { ...process.env, FLEET_FILE: broken, DATA_DIR: join(work, 'broken-data'), PORT: '0' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  expect(code).toBe(2);
  expect(err).toContain(`hub: fleet: ${broken} is not valid JSON`);
});
