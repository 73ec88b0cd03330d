/**
 * A seeded fuzz of every surface a request can reach: 2,000 hostile bodies each on a node's
 * `/a2a`, its HTTP+JSON routes and `/peer/*` (signed, so bodies get parsed), the hub's `/a2a`,
 * `/api/*`, `/mcp` (MCP's JSON-RPC with its headers and odd session ids) and mesh HTTP routes, and
 * 2,000 text and binary frames on the mesh socket. No answer
 * is a 5xx or an internal error, nothing is logged as an error, and a valid request of each kind
 * is answered correctly afterwards. `bun run fuzz --count N` runs the long version against real
 * processes.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Server } from 'bun';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import type { PeerSigner } from '../lib/peer/signer.ts';
import {
  a2aTarget,
  fuzzMeshSocket,
  fuzzTarget,
  hubApiTarget,
  mcpTarget,
  meshHttpTarget,
  signInTarget,
  peerTarget,
  restTarget,
  type Finding,
} from './support/fuzz.ts';
import { localInvoke, realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { rpc, TEST_AUTH } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const COUNT = 2000;
const SEED = Number(process.env.FUZZ_SEED ?? 20261130);
const SCANNER_SKILLS = [
  { skill: 'sector.movement', args: { sector: 'semiconductors' } },
  { skill: 'stock.quote', args: { code: '600519' } },
  { skill: 'scanner.status', args: {} },
];
const HUB_SKILLS = [
  { skill: 'node.capabilities', args: {} },
  { skill: 'entity.resolve', args: { query: 'Acme' } },
  { skill: 'negotiation.list', args: {} },
];

let fleet: RunningFleet;
let signer: PeerSigner;
let crmSigner: PeerSigner;
let scanner: (req: Request) => Promise<Response>;
let hubNode: (req: Request) => Promise<Response>;
let hubFetch: (req: Request) => Promise<Response>;

beforeAll(async () => {
  fleet = await startFleet(await realNodeDefs(['scanner', 'crm']));
  signer = (await loadPeerIdentity(fleet.dataDir, 'a2a')).signer;
  // The hub is called as crm: the hub relaying a request the hub itself signed would be a loop.
  crmSigner = (await loadPeerIdentity(fleet.dataDir, 'crm')).signer;
  const scannerApp = fleet.nodes.get('scanner')!.app;
  scanner = (req) => scannerApp.handle(req);
  hubNode = (req) => fleet.hub.node.app.handle(req);
  // The hub's HTTP routes in process; none of them but the socket upgrade touches the server.
  const server = {
    port: new URL(fleet.hubUrl).port,
    url: new URL(fleet.hubUrl),
    upgrade: () => false,
  } as unknown as Server<never>;
  hubFetch = (req) => fleet.hub.fetch(req, server as never);
});
afterAll(() => fleet.stop());

/** Errors the fleet logged while being fuzzed (a capability or route that threw). */
function loggedErrors(): string[] {
  return fleet.log.lines.filter((l) => l.startsWith('error '));
}

const expectClean = (findings: Finding[]) =>
  expect(findings.map((f) => `${f.kind}: ${f.what} <- ${f.sample}`)).toEqual([]);

test('a node: /a2a, the HTTP+JSON routes and /peer/* answer every hostile body with a 4xx or a coded error', async () => {
  const base = fleet.nodes.get('scanner')!.url;
  for (const [i, target] of [
    a2aTarget('scanner /a2a', SCANNER_SKILLS),
    restTarget('scanner REST', SCANNER_SKILLS),
    peerTarget('scanner /peer', signer, 'scanner', SCANNER_SKILLS, 'crm'),
  ].entries()) {
    const report = await fuzzTarget(target, base, scanner, COUNT, SEED + i);
    expect(report.sent).toBe(COUNT);
    expectClean(report.findings);
  }
  expect(loggedErrors()).toEqual([]);

  // Valid requests of each kind are answered correctly afterwards.
  const sent = await rpc(base, 'SendMessage', {
    message: {
      messageId: crypto.randomUUID(),
      role: 'ROLE_USER',
      parts: [{ data: { skill: 'scanner.status', args: {} } }],
    },
  });
  expect(sent.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  expect(
    (
      await fetch(`${base}/tasks/${sent.result.task.id}`, {
        headers: { 'A2A-Version': '1.0', ...TEST_AUTH },
      })
    ).status,
  ).toBe(200);
  const direct = await localInvoke(fleet.hubUrl, {
    target: 'scanner',
    capability: 'scanner.status',
    args: {},
  });
  expect([direct.status, direct.json.ok]).toEqual([200, true]);
}, 120_000);

test('the hub: /a2a, /api/*, /mcp and the mesh HTTP routes answer every hostile body with a 4xx or a coded error', async () => {
  for (const [i, [target, send]] of (
    [
      [a2aTarget('hub /a2a', HUB_SKILLS), hubNode],
      [hubApiTarget('hub /api'), hubFetch],
      [mcpTarget('hub /mcp', HUB_SKILLS), hubFetch],
      [meshHttpTarget('mesh HTTP'), hubFetch],
      [signInTarget('hub sign-in'), hubFetch],
      [peerTarget('hub /peer', crmSigner, 'a2a', HUB_SKILLS, 'scanner'), hubNode],
    ] as const
  ).entries()) {
    const report = await fuzzTarget(target, fleet.hubUrl, send, COUNT, SEED + 10 + i);
    expect(report.sent).toBe(COUNT);
    expectClean(report.findings);
  }
  expect(loggedErrors()).toEqual([]);

  const r = await localInvoke(fleet.hubUrl, {
    target: 'scanner',
    capability: 'sector.movement',
    args: {},
  });
  expect([r.status, r.json.ok]).toEqual([200, true]);
  const asked = await rpc(fleet.hubUrl, 'SendMessage', {
    message: {
      messageId: crypto.randomUUID(),
      role: 'ROLE_USER',
      parts: [{ data: { skill: 'node.capabilities', args: {} } }],
    },
  });
  expect(asked.result.task.status.state).toBe('TASK_STATE_COMPLETED');
}, 120_000);

test('the mesh socket: hostile text and binary frames get coded errors, and messages still flow', async () => {
  const created = await fetch(`${fleet.hubUrl}/api/projects.create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name":"fuzz"}',
  });
  expect((await created.json()).result.project.name).toBe('fuzz');
  const report = await fuzzMeshSocket(fleet.hubUrl, 'fuzz', COUNT, SEED + 20);
  expect(report.sent).toBe(COUNT);
  expectClean(report.findings);
  expect(report.statuses['error invalid_frame']).toBeGreaterThan(COUNT / 4);
  expect(loggedErrors()).toEqual([]);
}, 120_000);
