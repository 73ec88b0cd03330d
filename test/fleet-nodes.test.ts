/**
 * The fleet's nodes on real servers (port 0): the no-argument snapshot tools the fleet file's nodes
 * declare (read from the file, never counted here; the shipped ones kept), cards that list
 * exactly what dispatches, peer-only nodes without A2A, keyword picks and each capability's real
 * fields. lan and cicdkit answer from fixtures here; live sources are in fleet-nodes-sources.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { readAgentBacked } from '../lib/a2a/card/card.ts';
import { msgV1, rpc, tempDir } from './support/node.ts';
import { SETUP, fleetNodeFiles, startFleet, type RunningFleet } from './support/fleet-nodes.ts';
import { fixtureFleet } from './support/fleet.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const scratch = tempDir();
const nowhere = `${scratch}/absent`;
const execDir = tempDir();
let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet({
    lan: { procNetDev: nowhere, procArp: nowhere, resolvConf: nowhere },
    cicdkit: { repoDir: nowhere },
    resolve: { dataDir: execDir },
  });
  // exec.status and exec.cancel need a real job id: a finished fleet report.
  const job = await invoke('resolve', 'exec.submit', SAMPLE_ARGS['exec.submit']);
  SAMPLE_ARGS['exec.status'] = SAMPLE_ARGS['exec.cancel'] = { job_id: job.job_id };
  for (
    let i = 0;
    i < 200 &&
    (await invoke('resolve', 'exec.status', { job_id: job.job_id })).job.state === 'running';
    i++
  );
});
afterAll(async () => {
  await f.dispose();
  for (const dir of [scratch, execDir]) rmSync(dir, { recursive: true, force: true });
});

const A2A_NODES = ['crm', 'scanner', 'lan', 'talentlens', 'resolve'];
const PEER_NODES = ['tsm-hub', 'cicdkit'];
/** Valid arguments for capabilities that require some. */
const SAMPLE_ARGS: Record<string, Record<string, unknown>> = {
  'crm.industry': { industry: 'banking' },
  'crm.company': { uscc: '91440300482543082Q' },
  'stock.quote': { code: '600519' },
  'negotiation.propose': { customer: 'c-012' },
  'negotiation.review': { customer: 'c-012' },
  'talent.profile': { login: 'mia-zhao' },
  'resolve.capability': { id: 'crm.industry' },
  'resolve.search': { query: 'deploy' },
  'exec.submit': { prompt: 'fleet report', recipe: 'fleet-report' },
};
const invoke = async (node: string, capability: string, args: unknown = {}) => {
  const r = await f.hub.peerFetch(node, capability, args);
  if (!r.ok) throw new Error(`${node} ${capability}: ${r.error.code} ${r.error.message}`);
  return r.result as any;
};
const ask = async (node: string, parts: unknown[]) =>
  (await rpc(f.nodes[node]!.url, 'SendMessage', { message: { ...msgV1(''), parts } })).result.task;

/** The snapshot tools the shipped fleet has: a node added to the fleet file adds to them. */
const SNAPSHOT_TOOLS = [
  'cicd.activity',
  'cicd.commits',
  'cicd.deployments',
  'cicd.pipelines',
  'crm.industries',
  'crm.pipeline',
  'crm.stale',
  'crm.status',
  'lan.dns',
  'lan.hosts',
  'lan.status',
  'lan.traffic',
  'market.breadth',
  'resolve.catalog',
  'resolve.nodes',
  'resolve.tools',
  'scanner.status',
  'talent.languages',
  'talent.repos',
  'talent.signals',
  'talent.status',
  'tsm.health',
  'tsm.keys',
  'tsm.models',
  'tsm.usage',
];

/** The read-only, no-argument capabilities of the fleet file's default nodes. */
const snapshotTools = async () =>
  (await fleetNodeFiles())
    .flatMap(({ factory }) => factory(SETUP).catalog.capabilities)
    .filter((c) => c.readOnly && Object.keys(c.args).length === 0)
    .map((c) => c.id);

describe('the agent surface', () => {
  test("resolve serves as its agent surface exactly the snapshot tools the fleet file's nodes declare", async () => {
    const files = await fleetNodeFiles();
    expect(files.map((x) => x.name)).toEqual((await fixtureFleet()).defaults);
    const tools = (await snapshotTools()).sort();
    expect(tools).toEqual(expect.arrayContaining(SNAPSHOT_TOOLS));
    const surface = await invoke('resolve', 'resolve.tools');
    expect([surface.total, surface.tools.map((t: any) => t.id).sort()]).toEqual([
      tools.length,
      tools,
    ]);
  });

  test('snapshot tools refuse arguments and answer without credentials', async () => {
    const nodeOf = new Map(
      Object.entries(f.nodes).flatMap(([name, n]) =>
        n.def.catalog.capabilities.map((c) => [c.id, name] as const),
      ),
    );
    const banned = /^(key|apikey|api_key|secret|password|token|authorization|last4|email)$/i;
    const keysOf = (v: unknown): string[] =>
      Array.isArray(v)
        ? v.flatMap(keysOf)
        : v && typeof v === 'object'
          ? Object.entries(v).flatMap(([k, x]) => [k, ...keysOf(x)])
          : [];
    for (const id of await snapshotTools()) {
      const node = nodeOf.get(id)!;
      const out = await invoke(node, id);
      expect([id, keysOf(out).filter((k) => banned.test(k))]).toEqual([id, []]);
      const withArg = await f.hub.peerFetch(node, id, { q: 'x' });
      expect([id, withArg.ok || withArg.error.code]).toEqual([id, 'BAD_ARGS']);
    }
  });
});

describe('cards and dispatch come from one catalog', () => {
  test('each A2A node: card skills == /capabilities == catalog ids, agent-backed false', async () => {
    for (const name of A2A_NODES) {
      const { url, def } = f.nodes[name]!;
      const card = await (await fetch(`${url}/.well-known/agent-card.json`)).json();
      const caps = await (await fetch(`${url}/capabilities`)).json();
      const ids = def.catalog.capabilities.map((c) => c.id);
      expect([
        name,
        card.skills.map((s: any) => s.id),
        caps.capabilities.map((c: any) => c.id),
      ]).toEqual([name, ids, ids]);
      expect([name, readAgentBacked(card)]).toEqual([name, false]);
    }
  });

  test('every skill on every card dispatches over A2A; an unknown skill is rejected', async () => {
    for (const name of A2A_NODES) {
      const card = await (await fetch(`${f.nodes[name]!.url}/.well-known/agent-card.json`)).json();
      for (const { id } of card.skills) {
        const t = await ask(name, [{ data: { skill: id, args: SAMPLE_ARGS[id] ?? {} } }]);
        expect([name, id, t.status.state, t.artifacts?.[0]?.name]).toEqual([
          name,
          id,
          'TASK_STATE_COMPLETED',
          id,
        ]);
      }
      const unknown = await ask(name, [{ data: { skill: 'orders.place', args: {} } }]);
      expect([name, unknown.status.state]).toEqual([name, 'TASK_STATE_REJECTED']);
    }
  });

  test('every capability of every node dispatches over the signed channel; others are refused', async () => {
    for (const name of [...A2A_NODES, ...PEER_NODES]) {
      const caps = (await (await fetch(`${f.nodes[name]!.url}/capabilities`)).json()).capabilities;
      for (const { id } of caps)
        expect([name, id, (await f.hub.peerFetch(name, id, SAMPLE_ARGS[id] ?? {})).ok]).toEqual([
          name,
          id,
          true,
        ]);
      expect(await f.hub.peerFetch(name, 'orders.place', {})).toMatchObject({
        ok: false,
        error: { code: 'UNKNOWN_CAPABILITY' },
      });
    }
  });

  test('peer-only nodes have no card and no /a2a, but answer /health, /capabilities and signed calls only', async () => {
    for (const name of PEER_NODES) {
      const { url, def } = f.nodes[name]!;
      expect(def.a2a).toBe(false);
      for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json'])
        expect([name, path, (await fetch(url + path)).status]).toEqual([name, path, 404]);
      const a2a = await fetch(`${url}/a2a`, { method: 'POST', body: '{}' });
      expect([name, a2a.status]).toEqual([name, 404]);
      expect(await (await fetch(`${url}/health`)).json()).toMatchObject({
        ok: true,
        name,
        a2a: false,
      });
      const unsigned = await fetch(`${url}/peer/invoke`, {
        method: 'POST',
        body: JSON.stringify({ capability: def.catalog.capabilities[0]!.id, args: {} }),
      });
      expect([name, unsigned.status, (await unsigned.json()).error.code]).toEqual([
        name,
        401,
        'PEER_UNSIGNED',
      ]);
    }
  });
});

describe('a text message picks a tool by keyword', () => {
  const PICKS: [node: string, text: string, id: string, args: Record<string, unknown>][] = [
    ['crm', 'How many customers per industry are in follow-up?', 'crm.industries', {}],
    [
      'crm',
      'Which banking customers are we working with?',
      'crm.industry',
      { industry: 'banking' },
    ],
    ['crm', 'Show the pipeline per owner', 'crm.pipeline', {}],
    ['crm', 'Any stale or overdue customers?', 'crm.stale', {}],
    ['scanner', 'How is market breadth today, advancers vs decliners?', 'market.breadth', {}],
    ['lan', 'Which hosts are online?', 'lan.hosts', {}],
    ['lan', 'How much traffic per interface?', 'lan.traffic', {}],
    ['lan', 'Which DNS nameservers do we use?', 'lan.dns', {}],
    ['talentlens', 'Who are the rising developers with strong signals?', 'talent.signals', {}],
    ['talentlens', 'Which languages have momentum?', 'talent.languages', {}],
    ['talentlens', 'Trending repos by stars', 'talent.repos', {}],
    ['resolve', 'Which tools are on the agent surface?', 'resolve.tools', {}],
    ['resolve', 'List the capabilities catalog', 'resolve.catalog', {}],
    ['resolve', 'Which nodes are in the fleet?', 'resolve.nodes', {}],
    ['tsm-hub', 'Is the gateway healthy, any upstream down?', 'tsm.health', {}],
    ['tsm-hub', 'Token usage and cost per team today', 'tsm.usage', {}],
    ['tsm-hub', 'Which models are busiest?', 'tsm.models', {}],
    ['tsm-hub', 'How many API keys are revoked or expiring?', 'tsm.keys', {}],
    ['cicdkit', 'Which pipelines are failing?', 'cicd.pipelines', {}],
    ['cicdkit', 'What is deployed to production?', 'cicd.deployments', {}],
    ['cicdkit', 'Latest commits in git history', 'cicd.commits', {}],
    ['cicdkit', 'Commit activity per day', 'cicd.activity', {}],
  ];
  test('each node picks the expected capability and fills enum arguments', () => {
    for (const [node, text, id, args] of PICKS) {
      const pick = f.nodes[node]!.def.catalog.pickByText(text);
      expect([node, text, pick?.cap.id, pick?.args]).toEqual([node, text, id, args]);
    }
  });

  test('over A2A the pick answers with a one-line summary', async () => {
    const t = await ask('crm', [{ text: 'Which banking customers are we working with?' }]);
    expect(t.artifacts[0].name).toBe('crm.industry');
    expect(t.artifacts[0].parts[1].text).toBe('banking: 4 customers, 3 open');
    const vague = await ask('talentlens', [{ text: 'hello there' }]);
    expect(vague.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });
});

describe('real fields', () => {
  test('crm: industries per follow-up state, one industry, USCC lookup, pipeline, stale, status', async () => {
    const ind = await invoke('crm', 'crm.industries');
    expect(ind.industries.map((i: any) => i.industry)).toEqual([
      'semiconductors',
      'new-energy',
      'banking',
      'pharma',
      'software',
      'consumer',
      'steel',
      'robotics',
    ]);
    expect(ind.industries[2]).toEqual({
      industry: 'banking',
      name: 'Banking',
      customers: 4,
      followUp: { new: 0, contacted: 1, 'in-follow-up': 2, won: 1, lost: 0 },
    });
    const banking = await invoke('crm', 'crm.industry', { industry: 'banking' });
    expect(banking.customers.map((c: any) => [c.name, c.followUp, c.usccValid])).toEqual([
      ['Industrial and Commercial Bank of China Ltd.', 'in-follow-up', true],
      ['Jiangsu Huirong Rural Commercial Bank Co., Ltd.', 'in-follow-up', true],
      ['Ping An Bank Co., Ltd.', 'contacted', true],
      ['China Merchants Bank Co., Ltd.', 'won', true],
    ]);
    expect(await f.hub.peerFetch('crm', 'crm.industry', { industry: 'aerospace' })).toMatchObject({
      ok: false,
      error: { code: 'BAD_ARGS' },
    });
    expect(await f.hub.peerFetch('crm', 'crm.industry', {})).toMatchObject({
      ok: false,
      error: { code: 'BAD_ARGS' },
    });
    const cmb = await invoke('crm', 'crm.company', { uscc: ' 91440300482543082q ' });
    expect([cmb.found, cmb.company.name, cmb.company.stockCode, cmb.company.usccValid]).toEqual([
      true,
      'China Merchants Bank Co., Ltd.',
      '600036',
      true,
    ]);
    expect(await invoke('crm', 'crm.company', { uscc: '914403001922038216' })).toEqual({
      asOf: '2026-11-27',
      found: false,
      usccValid: true,
    });
    expect(await invoke('crm', 'crm.company', { uscc: 'nonsense' })).toEqual({
      asOf: '2026-11-27',
      found: false,
      usccValid: false,
    });
    const pipeline = await invoke('crm', 'crm.pipeline');
    expect([pipeline.total, pipeline.byState]).toEqual([
      31,
      { new: 6, contacted: 8, 'in-follow-up': 10, won: 4, lost: 3 },
    ]);
    const stale = await invoke('crm', 'crm.stale');
    expect(stale.customers.every((c: any) => c.daysSince === null || c.daysSince >= 30)).toBe(true);
    expect(stale.customers.map((c: any) => c.id)).toContain('c-014');
    expect(await invoke('crm', 'crm.status')).toEqual({
      asOf: '2026-11-27',
      companies: 31,
      industries: 8,
      owners: 5,
      listed: 22,
      usccInvalid: 2,
    });
  });

  test('scanner: market breadth over every stock', async () => {
    expect(await invoke('scanner', 'market.breadth')).toEqual({
      asOf: '2026-11-27',
      stocks: 24,
      advancers: 15,
      decliners: 9,
      unchanged: 0,
      avgChangePct: 1.28,
      signaled: 11,
    });
  });

  test('tsm-hub: health, usage, models, keys (masked, never the key)', async () => {
    const health = await invoke('tsm-hub', 'tsm.health');
    expect([
      health.source,
      health.status,
      health.upstreams.map((u: any) => `${u.id}:${u.status}`),
    ]).toEqual([
      'fixture',
      'degraded',
      ['deepseek:up', 'qwen:up', 'openai:degraded', 'moonshot:up', 'local-vllm:down'],
    ]);
    const usage = await invoke('tsm-hub', 'tsm.usage');
    expect([usage.requests, usage.byTeam[0], usage.peakHour]).toEqual([
      48770,
      { team: 'research', requests: 16852 },
      '09',
    ]);
    const models = await invoke('tsm-hub', 'tsm.models');
    expect(models.models[0]).toMatchObject({ id: 'deepseek-chat', sharePct: 37.8 });
    const keys = await invoke('tsm-hub', 'tsm.keys');
    expect([keys.total, keys.byStatus]).toEqual([9, { active: 7, expiring: 1, revoked: 1 }]);
    expect(
      keys.keys.every(
        (k: any) => /^…[A-Za-z0-9]{4}$/.test(k.masked) && Object.keys(k).length === 6,
      ),
    ).toBe(true);
  });

  test('cicdkit (fixture): pipelines, deployments, commits, activity', async () => {
    const p = await invoke('cicdkit', 'cicd.pipelines');
    expect([p.source, p.failing]).toEqual([
      'fixture',
      ['payments / build-test', 'search-indexer / nightly'],
    ]);
    const d = await invoke('cicdkit', 'cicd.deployments');
    expect([d.deployments.length, d.unhealthy, d.deployments[0].version]).toEqual([
      6,
      2,
      '3.15.0-rc.1',
    ]);
    const c = await invoke('cicdkit', 'cicd.commits');
    expect([c.source, c.head, c.commits.length]).toEqual(['fixture', '9f3c2a1', 20]);
    const a = await invoke('cicdkit', 'cicd.activity');
    expect([a.source, a.total, a.authors, a.days.at(-1)]).toEqual([
      'fixture',
      20,
      5,
      { date: '2026-11-27', commits: 1 },
    ]);
  });

  test('lan (fixture): hosts, traffic, dns, status', async () => {
    const h = await invoke('lan', 'lan.hosts');
    expect([h.source, h.online, h.hosts.length]).toEqual(['fixture', 6, 8]);
    const t = await invoke('lan', 'lan.traffic');
    expect([t.interfaces[0].name, t.totals]).toEqual([
      'eth0',
      { rxBytes: 95605329284, txBytes: 14953546185 },
    ]);
    const dns = await invoke('lan', 'lan.dns');
    expect([dns.nameservers, dns.topDomains[0]]).toEqual([
      ['192.168.31.21', '223.5.5.5'],
      { domain: 'api.github.com', queries: 5120 },
    ]);
    expect(await invoke('lan', 'lan.status')).toEqual({
      source: 'fixture',
      sources: { interfaces: 'fixture', hosts: 'fixture', dns: 'fixture' },
      interfaces: 4,
      hostsOnline: 6,
      nameservers: 2,
    });
  });

  test('talentlens: signals, languages, repos, status, profile', async () => {
    const s = await invoke('talentlens', 'talent.signals');
    expect(s.developers.map((d: any) => d.login)).toEqual([
      'chenhaoran-ai',
      'wlin-dev',
      'mia-zhao',
      'duanxin',
      'lily-h',
    ]);
    const l = await invoke('talentlens', 'talent.languages');
    expect(l.languages[0]).toEqual({ language: 'Python', developers: 2, starsDelta30d: 4670 });
    const r = await invoke('talentlens', 'talent.repos');
    expect(r.repos[0].fullName).toBe('chenhaoran-ai/tiny-infer');
    expect(await invoke('talentlens', 'talent.status')).toMatchObject({ developers: 10, repos: 7 });
    expect(
      (await invoke('talentlens', 'talent.profile', { login: 'Mia-Zhao' })).developer.login,
    ).toBe('mia-zhao');
    expect(await invoke('talentlens', 'talent.profile', { login: 'nobody' })).toEqual({
      source: 'fixture',
      asOf: '2026-11-27',
      found: false,
    });
  });

  test('resolve: nodes with transports, the full catalog, lookups and search', async () => {
    const n = await invoke('resolve', 'resolve.nodes');
    // Every node of the fleet file, in its order; the shipped ones as they are.
    expect(n.nodes.map((x: any) => x.node)).toEqual((await fleetNodeFiles()).map((x) => x.name));
    const shipped = ['crm', 'scanner', 'tsm-hub', 'cicdkit', 'lan', 'talentlens', 'resolve'];
    expect(
      n.nodes
        .filter((x: any) => shipped.includes(x.node))
        .map((x: any) => [x.node, x.transport, x.snapshotTools]),
    ).toEqual([
      ['crm', 'a2a+peer', 4],
      ['scanner', 'a2a+peer', 2],
      ['tsm-hub', 'peer', 4],
      ['cicdkit', 'peer', 4],
      ['lan', 'a2a+peer', 4],
      ['talentlens', 'a2a+peer', 4],
      ['resolve', 'a2a+peer', 3],
    ]);
    const cat = await invoke('resolve', 'resolve.catalog');
    for (const node of cat.nodes)
      expect([node.node, node.capabilities.map((c: any) => c.id)]).toEqual([
        node.node,
        f.nodes[node.node]!.def.catalog.capabilities.map((c) => c.id),
      ]);
    const where = await invoke('resolve', 'resolve.capability', { id: 'tsm.keys' });
    expect([where.found, where.matches.map((m: any) => m.node)]).toEqual([true, ['tsm-hub']]);
    const exec = await invoke('resolve', 'resolve.capability', { id: 'exec.submit' });
    expect([exec.found, exec.matches.map((m: any) => [m.node, m.readOnly])]).toEqual([
      true,
      [['resolve', false]],
    ]);
    expect(
      (await invoke('resolve', 'resolve.search', { query: 'USCC' })).matches.map((m: any) => m.id),
    ).toEqual(['crm.company', 'crm.status']);
  });
});
