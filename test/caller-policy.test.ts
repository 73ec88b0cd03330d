/**
 * One policy for one caller, whatever the path (the trust boundary, third pass, item 1): every
 * entry that runs a node's agent (`/a2a` JSON-RPC, HTTP+JSON, gRPC, a signed fleet call, the
 * node's mesh inbox) × every capability class (read-only, state-changing, exec.*) × every principal kind
 * (anonymous, a token, a fleet node), each answer compared with what `/a2a` gives that caller. A
 * mesh message runs as the principal the hub proved for its sender (the token's user), anonymous
 * when it showed none, and anonymous too when the hub is not the node's fleet hub.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, rmSync } from 'node:fs';
import type * as grpc from '@grpc/grpc-js';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { newSecret } from '../lib/auth/secret.ts';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient, type MeshClient } from '../lib/mesh/client.ts';
import { decodeText } from '../lib/mesh/payload.ts';
import type { MeshMessage } from '../lib/mesh/wire.ts';
import { createMeshInbox, engineTurns } from '../lib/node/mesh-inbox.ts';
import { A2A_SIGNED_SCOPE } from '../lib/node/node-auth.ts';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import { startExecutor, type ExecutorNode } from './support/executor.ts';
import { grpcAddressOf, rawClient, unary } from './support/grpc.ts';
import { startHub, type TestHub } from './support/mesh.ts';
import { msgV1 } from './support/node.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ALICE = newSecret();
const MESH = newSecret();
const JOB = `job-${'0'.repeat(32)}`;
/** One capability of each class on the resolve node. */
const CLASSES = {
  'read-only': ['resolve.nodes', {}],
  'state-changing': ['exec.cancel', { job_id: JOB }],
  'exec.*': ['exec.submit', { prompt: 'x', recipe: 'demo' }],
} as const;
type Outcome = 'ran' | 'refused';

let ex: ExecutorNode;
let rpcClient: grpc.Client;
const hubs: TestHub[] = [];
const clients: MeshClient[] = [];
beforeAll(async () => {
  ex = await startExecutor({ tokens: { alice: ALICE } });
  rpcClient = rawClient(grpcAddressOf(ex.node.node.card())!);
});
afterAll(async () => {
  rpcClient?.close();
  for (const c of clients) c.close();
  for (const h of hubs) await h.stop();
  await ex.stop();
  rmSync(ex.dataDir, { recursive: true, force: true });
});

const rpcBody = (skill: string, args: unknown) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { ...msgV1(''), parts: [{ data: { skill, args } }] } },
  });

/** What `/a2a` (JSON-RPC, then HTTP+JSON and gRPC) does for a caller: the answer, and that all agree. */
async function viaA2a(skill: string, args: unknown, headers: Record<string, string>) {
  const h = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers };
  const rpc = await fetch(`${ex.node.url}/a2a`, {
    method: 'POST',
    headers: h,
    body: rpcBody(skill, args),
  });
  const rest = await fetch(`${ex.node.url}/message:send`, {
    method: 'POST',
    headers: h,
    body: JSON.stringify({ message: { ...msgV1(''), parts: [{ data: { skill, args } }] } }),
  });
  const outcome = (s: number): Outcome => (s === 401 ? 'refused' : 'ran');
  const g = await unary(
    rpcClient,
    'SendMessage',
    encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', {
      message: {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        parts: [{ data: { skill, args } }],
      },
    }),
    {
      'a2a-version': '1.0',
      ...(headers.Authorization ? { authorization: headers.Authorization } : {}),
    },
  );
  await rpc.text();
  await rest.text();
  // gRPC's UNAUTHENTICATED is 16.
  expect([outcome(rest.status), g.code === 16 ? 'refused' : 'ran']).toEqual([
    outcome(rpc.status),
    outcome(rpc.status),
  ]);
  return outcome(rpc.status);
}

/** A signed fleet call (the hub `a2a`), JSON-RPC as fleet nodes send it. */
async function viaFleetNode(skill: string, args: unknown): Promise<Outcome> {
  const { signer } = await loadPeerIdentity(ex.dataDir, 'a2a');
  const body = new TextEncoder().encode(rpcBody(skill, args));
  const headers = {
    ...(await signer.sign({ to: 'resolve', route: '/a2a', scope: A2A_SIGNED_SCOPE }, body)),
    'content-type': 'application/json',
    'A2A-Version': '1.0',
  };
  const r = await fetch(`${ex.node.url}/a2a`, { method: 'POST', headers, body });
  await r.text();
  return r.status === 401 ? 'refused' : 'ran';
}

/**
 * The node's mesh inbox on a hub (with a join token or open), and a sender that joins with the
 * token or without one: the answer the sender gets to a text naming the call.
 */
async function meshSender(token: string | undefined, trustHub = true) {
  const h = startHub(token ? { token } : {});
  hubs.push(h);
  await h.store.createProject({ name: 'main' });
  let presence!: MeshClient;
  const inbox = createMeshInbox({
    name: 'resolve',
    post: (req) => presence.send('resolve', req),
    log: memoryLog(),
  });
  inbox.attach(engineTurns(ex.node.node.engine, 'resolve', trustHub));
  presence = createMeshClient({
    hubUrl: h.url,
    log: memoryLog(),
    ...(token ? { token } : {}),
    onInbound: (m) => inbox.take(m),
  });
  const got: MeshMessage[] = [];
  let wake = () => {};
  const sender = createMeshClient({
    hubUrl: h.url,
    log: memoryLog(),
    ...(token ? { token } : {}),
    onInbound: (m) => {
      got.push(m.message);
      wake();
    },
  });
  clients.push(presence, sender);
  expect((await presence.connect('resolve', 'main')).state).toBe('connected');
  expect((await sender.connect('mallory', 'main')).state).toBe('connected');
  return async (skill: string, args: unknown): Promise<Outcome> => {
    const sent = await sender.send('mallory', {
      target: { type: 'agent', name: 'resolve' },
      text: JSON.stringify({ skill, args }),
    });
    if (!sent.ok) throw new Error(sent.error.message);
    const ref = sent.result.message.messageRef;
    while (!got.some((m) => m.replyTo === ref)) await new Promise<void>((r) => (wake = r));
    const answer = decodeText(got.find((m) => m.replyTo === ref)!.payload);
    return answer.includes('could not take this message: UNAUTHENTICATED') ? 'refused' : 'ran';
  };
}

test('every entry gives each caller exactly what /a2a gives it; a mesh sender acts as the principal its hub proved', async () => {
  const jobs = () => readdirSync(ex.jobsDir).length;
  const meshAnonymous = await meshSender(undefined);
  const meshToken = await meshSender(MESH);
  // A hub that is not the node's fleet hub: its word on a sender's principal is not taken.
  const meshOtherHub = await meshSender(MESH, false);
  const seen: Record<string, Record<string, Outcome>> = {};
  for (const [cls, [skill, args]] of Object.entries(CLASSES)) {
    const before = jobs();
    const a2a = {
      anonymous: await viaA2a(skill, args, {}),
      token: await viaA2a(skill, args, { Authorization: `Bearer ${ALICE}` }),
      'fleet node': await viaFleetNode(skill, args),
    };
    const ranJobs = jobs() - before;
    // Each binding ran the job once for each principal it allowed.
    expect(ranJobs).toBe(cls === 'exec.*' ? 4 : 0);
    const mesh = {
      anonymous: await meshAnonymous(skill, args),
      token: await meshToken(skill, args),
      'other hub': await meshOtherHub(skill, args),
    };
    // The mesh ran the job once, for the token holder; a refused call stores nothing.
    expect(jobs() - before).toBe(ranJobs + (cls === 'exec.*' ? 1 : 0));
    seen[cls] = {
      'a2a anonymous': a2a.anonymous,
      'a2a token': a2a.token,
      'a2a fleet node': a2a['fleet node'],
      'mesh anonymous': mesh.anonymous,
      'mesh token': mesh.token,
      'mesh token, other hub': mesh['other hub'],
    };
  }
  const row = (anonymous: Outcome): Record<string, Outcome> => ({
    'a2a anonymous': anonymous,
    'a2a token': 'ran',
    'a2a fleet node': 'ran',
    // Same as /a2a gives the sender: anonymous without a proven principal, the token's user with one.
    'mesh anonymous': anonymous,
    'mesh token': 'ran',
    'mesh token, other hub': anonymous,
  });
  expect(seen).toEqual({
    'read-only': row('ran'),
    'state-changing': row('refused'),
    'exec.*': row('refused'),
  });
});
