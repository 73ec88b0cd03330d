/**
 * The queries beside each node file, called in-process on small hand-made snapshots (no server,
 * no port): what each capability computes, including the empty and edge cases.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import * as cicd from '../node/cicdkit/queries.ts';
import * as lan from '../node/lan/queries.ts';
import type { FleetNodeCatalog } from '../node/resolve/catalog.ts';
import * as resolve from '../node/resolve/queries.ts';
import * as scanner from '../node/scanner/queries.ts';
import * as talent from '../node/talentlens/queries.ts';
import * as tsm from '../node/tsm-hub/queries.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

describe('scanner', () => {
  const stock = (code: string, changePct: number, signals: string[] = []) => ({
    code,
    name: `S${code}`,
    changePct,
    signals,
  });
  const snap: scanner.Snapshot = {
    asOf: '2026-01-02',
    market: 'test',
    sectors: [
      {
        id: 'chips',
        name: 'Chips',
        stocks: [stock('000001', 3, ['new-high']), stock('000002', -1)],
      },
      {
        id: 'banks',
        name: 'Banks',
        stocks: [
          stock('000003', 0.5),
          stock('000004', 0),
          stock('000005', 0.2, ['volume-breakout']),
        ],
      },
    ],
  };

  test('movement ranks sectors by average change and counts advancers, decliners, signals', () => {
    expect(scanner.movement(snap)).toEqual({
      asOf: '2026-01-02',
      sectors: [
        {
          sector: 'chips',
          name: 'Chips',
          avgChangePct: 1,
          advancers: 1,
          decliners: 1,
          signaled: 1,
        },
        {
          sector: 'banks',
          name: 'Banks',
          avgChangePct: 0.23,
          advancers: 2,
          decliners: 0,
          signaled: 1,
        },
      ],
    });
    expect(scanner.movement(snap, 'banks').sectors.map((s) => s.sector)).toEqual(['banks']);
    expect(scanner.movement(snap, 'nowhere').sectors).toEqual([]);
  });

  test('signals and stocks carry the sector id; a sector narrows them', () => {
    expect(scanner.signals(snap).stocks.map((s) => [s.code, s.sector])).toEqual([
      ['000001', 'chips'],
      ['000005', 'banks'],
    ]);
    expect(scanner.signals(snap, 'chips').stocks.map((s) => s.code)).toEqual(['000001']);
    expect(scanner.stocks(snap, 'banks').stocks.map((s) => s.code)).toEqual([
      '000003',
      '000004',
      '000005',
    ]);
    expect(scanner.stocks(snap).stocks).toHaveLength(5);
  });

  test('quote finds a stock by code or says it is not there', () => {
    expect(scanner.quote(snap, '000002')).toEqual({
      asOf: '2026-01-02',
      found: true,
      stock: { ...stock('000002', -1), sector: 'chips' },
    });
    expect(scanner.quote(snap, '999999')).toEqual({ asOf: '2026-01-02', found: false });
  });

  test('breadth and status count every stock; an empty snapshot averages to 0', () => {
    expect(scanner.breadth(snap)).toEqual({
      asOf: '2026-01-02',
      stocks: 5,
      advancers: 3,
      decliners: 1,
      unchanged: 1,
      avgChangePct: 0.54,
      signaled: 2,
    });
    expect(scanner.status(snap)).toEqual({
      asOf: '2026-01-02',
      market: 'test',
      sectors: 2,
      stocks: 5,
    });
    expect(scanner.breadth({ ...snap, sectors: [] })).toMatchObject({ stocks: 0, avgChangePct: 0 });
  });
});

describe('tsm-hub', () => {
  const g: tsm.Gateway = {
    asOf: '2026-01-02T12:00:00Z',
    gateway: { name: 'gw', version: '1.2', startedAt: '2026-01-01T12:00:00Z', region: 'test' },
    upstreams: [
      { id: 'a', status: 'up', p50Ms: 100, p95Ms: 300, requests1h: 200, errors1h: 3 },
      { id: 'b', status: 'degraded', p50Ms: null, p95Ms: null, requests1h: 0, errors1h: 0 },
    ],
    models: [
      {
        id: 'small',
        upstream: 'a',
        requestsToday: 100,
        tokensIn: 10,
        tokensOut: 20,
        costCny: 1.004,
        errorsToday: 1,
      },
      {
        id: 'large',
        upstream: 'b',
        requestsToday: 300,
        tokensIn: 30,
        tokensOut: 40,
        costCny: 2.5,
        errorsToday: 3,
      },
    ],
    keys: [
      {
        label: 'ci',
        team: 'infra',
        upstream: 'a',
        status: 'active',
        last4: 'x1234',
        requestsToday: 50,
      },
      {
        label: 'app',
        team: 'web',
        upstream: 'b',
        status: 'revoked',
        last4: '9876',
        requestsToday: 70,
      },
    ],
    hourly: [
      { hour: '09', requests: 10 },
      { hour: '10', requests: 30 },
    ],
  };

  test('health: degraded unless every upstream is up, down only when all are; error rate per upstream', () => {
    const h = tsm.health(g);
    expect([h.status, h.gateway.uptimeHours, h.upstreams.map((u) => u.errorRatePct)]).toEqual([
      'degraded',
      24,
      [1.5, 0],
    ]);
    expect(h.upstreams[0]).not.toHaveProperty('errors1h');
    const down = tsm.health({
      ...g,
      upstreams: g.upstreams.map((u) => ({ ...u, status: 'down' as const })),
    });
    expect(down.status).toBe('down');
    expect(tsm.health({ ...g, upstreams: [g.upstreams[0]!] }).status).toBe('ok');
  });

  test('usage sums the models, ranks teams and finds the peak hour', () => {
    expect(tsm.usage(g)).toMatchObject({
      source: 'fixture',
      requests: 400,
      tokensIn: 40,
      tokensOut: 60,
      costCny: 3.5,
      errorRatePct: 1,
      byTeam: [
        { team: 'web', requests: 70 },
        { team: 'infra', requests: 50 },
      ],
      peakHour: '10',
    });
    expect(tsm.usage({ ...g, hourly: [] }).peakHour).toBeNull();
  });

  test('models by share of requests; keys leave only masked', () => {
    expect(tsm.models(g).models.map((m) => [m.id, m.sharePct, m.errorRatePct])).toEqual([
      ['large', 75, 1],
      ['small', 25, 1],
    ]);
    const k = tsm.keys(g);
    expect([k.total, k.byStatus, k.byUpstream]).toEqual([
      2,
      { active: 1, revoked: 1 },
      { a: 1, b: 1 },
    ]);
    expect(k.keys[0]).toEqual({
      label: 'ci',
      team: 'infra',
      upstream: 'a',
      status: 'active',
      masked: '…1234',
      requestsToday: 50,
    });
  });
});

describe('talentlens', () => {
  const dev = (
    login: string,
    score: number,
    languages: string[],
    starsDelta30d: number,
    signals: string[] = [],
  ) => ({
    login,
    name: login,
    location: 'x',
    languages,
    followers: 1,
    followersDelta30d: 0,
    stars: 1,
    starsDelta30d,
    contributions90d: 1,
    signals,
    score,
  });
  const s: talent.Signals = {
    asOf: '2026-01-02',
    scope: 'test',
    developers: [
      dev('ann', 50, ['rust'], 10, ['rising']),
      dev('bo', 90, ['go', 'rust'], 5, ['rising', 'new-repo']),
      ...['c', 'd', 'e', 'f'].map((l, i) => dev(l, i, ['go'], 1)),
    ],
    repos: [
      {
        fullName: 'a/one',
        language: 'rust',
        stars: 5,
        starsDelta7d: 1,
        contributors: 1,
        owner: 'ann',
      },
      {
        fullName: 'b/two',
        language: 'go',
        stars: 9,
        starsDelta7d: 7,
        contributors: 2,
        owner: 'bo',
      },
    ],
  };

  test('the top developers by score, at most TOP of them, without their follower counts', () => {
    const top = talent.topSignals(s).developers;
    expect(top.map((d) => d.login)).toEqual(['bo', 'ann', 'f', 'e', 'd']);
    expect(top).toHaveLength(talent.TOP);
    expect(top[0]).not.toHaveProperty('followers');
  });

  test('language momentum, trending repos and the signal counts', () => {
    expect(talent.languages(s).languages).toEqual([
      { language: 'rust', developers: 2, starsDelta30d: 15 },
      { language: 'go', developers: 5, starsDelta30d: 9 },
    ]);
    expect(talent.trendingRepos(s).repos.map((r) => r.fullName)).toEqual(['b/two', 'a/one']);
    expect(talent.status(s)).toEqual({
      source: 'fixture',
      asOf: '2026-01-02',
      scope: 'test',
      developers: 6,
      repos: 2,
      bySignal: { rising: 2, 'new-repo': 1 },
    });
  });

  test('a profile by login ignores case and spaces', () => {
    expect(talent.profile(s, '  ANN ')).toMatchObject({ found: true, developer: { login: 'ann' } });
    expect(talent.profile(s, 'nobody')).toEqual({
      source: 'fixture',
      asOf: '2026-01-02',
      found: false,
    });
  });
});

describe('cicdkit', () => {
  const run = (status: 'success' | 'failed') => ({
    id: 1,
    status,
    startedAt: '2026-01-02T00:00:00Z',
    durationSec: 60,
    trigger: 'push',
    commit: 'abc1234',
  });
  const snap: cicd.Snapshot = {
    asOf: '2026-01-02',
    pipelines: [
      { name: 'api', repo: 'r', branch: 'main', lastRun: run('failed'), runs30d: 3, success30d: 2 },
      {
        name: 'web',
        repo: 'r',
        branch: 'main',
        lastRun: run('success'),
        runs30d: 0,
        success30d: 0,
      },
    ],
    deployments: [
      {
        env: 'staging',
        service: 'api',
        version: '1',
        commit: 'c',
        deployedAt: '2026-01-01',
        status: 'healthy',
        strategy: 'rolling',
      },
      {
        env: 'prod',
        service: 'api',
        version: '2',
        commit: 'c',
        deployedAt: '2026-01-02',
        status: 'degraded',
        strategy: 'canary',
      },
    ],
    commits: [],
  };
  const commit = (date: string, author: string) => ({
    hash: 'abcdef1',
    date,
    author,
    subject: 's',
  });

  test('pipelines with their success rate (null before any run) and the failing ones', () => {
    const p = cicd.pipelines(snap);
    expect([p.pipelines.map((x) => x.successRate30d), p.failing]).toEqual([[66.7, null], ['api']]);
  });

  test('deployments newest first, with the unhealthy count', () => {
    const d = cicd.deployments(snap);
    expect([d.deployments.map((x) => x.env), d.unhealthy]).toEqual([['prod', 'staging'], 1]);
  });

  test('activity counts commits per day over the window ending on the newest commit', () => {
    const a = cicd.activity([
      commit('2026-01-20T10:00:00+08:00', 'ann'),
      commit('2026-01-20T01:00:00Z', 'bo'),
      commit('2026-01-07T00:00:00Z', 'ann'),
      commit('2026-01-06T23:00:00Z', 'cy'),
    ]);
    expect([a.windowDays, a.days.length, a.days[0]!.date, a.days.at(-1)]).toEqual([
      cicd.ACTIVITY_DAYS,
      cicd.ACTIVITY_DAYS,
      '2026-01-07',
      { date: '2026-01-20', commits: 2 },
    ]);
    // The commit of the 6th falls outside the window, and with it its author.
    expect([a.total, a.authors]).toEqual([3, 2]);
  });
});

describe('lan', () => {
  const iface = (name: string, rxBytes: number, txBytes: number) => ({
    name,
    rxBytes,
    rxPackets: 0,
    rxErrors: 0,
    rxDrops: 0,
    txBytes,
    txPackets: 0,
    txErrors: 0,
    txDrops: 0,
  });
  const live = <T>(value: T): lan.Sourced<T> => ({
    source: 'live',
    asOf: '2026-01-02T00:00:00.000Z',
    value,
  });
  const fixture = <T>(value: T): lan.Sourced<T> => ({
    source: 'fixture',
    asOf: '2026-01-01',
    value,
  });
  const hosts = [
    { ip: '10.0.0.1', mac: 'aa:bb:cc:xx:xx:xx', device: 'eth0', online: true },
    { ip: '10.0.0.2', mac: 'aa:bb:cc:xx:xx:xx', device: 'eth0', online: false },
  ];

  test('traffic: busiest interface first, with totals', () => {
    const t = lan.traffic(live([iface('lo', 5, 5), iface('eth0', 100, 50)]));
    expect([t.interfaces.map((i) => i.name), t.totals, t.counters]).toEqual([
      ['eth0', 'lo'],
      { rxBytes: 105, txBytes: 55 },
      'since-boot',
    ]);
  });

  test('hosts count the online ones; dns keeps the source beside the resolver', () => {
    expect(lan.hosts(live(hosts))).toMatchObject({ source: 'live', online: 1 });
    expect(lan.dns(fixture({ nameservers: ['1.1.1.1'], search: [] }))).toEqual({
      source: 'fixture',
      asOf: '2026-01-01',
      nameservers: ['1.1.1.1'],
      search: [],
    });
  });

  test('status says mixed when the parts came from different sources', () => {
    const dns = { nameservers: ['a', 'b'], search: [] };
    expect(lan.status(live([iface('eth0', 1, 1)]), live(hosts), live(dns))).toEqual({
      source: 'live',
      sources: { interfaces: 'live', hosts: 'live', dns: 'live' },
      interfaces: 1,
      hostsOnline: 1,
      nameservers: 2,
    });
    expect(lan.status(live([]), fixture(hosts), live(dns)).source).toBe('mixed');
  });
});

describe('resolve', () => {
  const cap = (
    id: string,
    readOnly: boolean,
    args: Record<string, { type: 'string'; description: string }> = {},
  ) => ({
    id,
    name: id.toUpperCase(),
    description: `does ${id}`,
    tags: ['t'],
    examples: [],
    keywords: [],
    readOnly,
    args,
  });
  const all: FleetNodeCatalog[] = [
    {
      node: 'a',
      role: 'r',
      transport: 'a2a+peer',
      agentBacked: false,
      capabilities: [
        cap('a.snap', true),
        cap('a.find', true, { q: { type: 'string', description: 'query' } }),
        cap('a.act', false),
      ],
    },
    {
      node: 'b',
      role: 'r',
      transport: 'peer',
      agentBacked: false,
      capabilities: [cap('b.snap', true), cap('a.snap', true)],
    },
    {
      node: 'c',
      role: 'r',
      transport: 'peer',
      agentBacked: false,
      capabilities: [],
      error: 'could not load node/c.ts',
    },
  ];

  test('nodes count capabilities, read-only ones and snapshot tools; a broken node keeps its error', () => {
    expect(
      resolve
        .nodes(all)
        .nodes.map((n) => [n.node, n.capabilities, n.readOnly, n.snapshotTools, n.error]),
    ).toEqual([
      ['a', 3, 2, 1, undefined],
      ['b', 2, 2, 2, undefined],
      ['c', 0, 0, 0, 'could not load node/c.ts'],
    ]);
    expect(resolve.catalog(all).total).toBe(5);
  });

  test('the agent surface is the read-only tools without arguments', () => {
    expect(resolve.tools(all).tools.map((t) => `${t.node}:${t.id}`)).toEqual([
      'a:a.snap',
      'b:b.snap',
      'b:a.snap',
    ]);
  });

  test('a capability id may be offered by several nodes; search needs every word', () => {
    expect(resolve.capability(all, 'a.snap').matches.map((m) => m.node)).toEqual(['a', 'b']);
    expect(resolve.capability(all, 'x.y')).toEqual({ found: false, matches: [] });
    expect(resolve.search(all, 'DOES find').matches.map((m) => m.id)).toEqual(['a.find']);
    expect(resolve.search(all, '   ').total).toBe(0);
  });
});
