/**
 * @module tsm-hub — read-only snapshot of an LLM gateway: upstream health, usage, models and API
 * keys (counts and masked ids only; no key material is ever held or answered), read from
 * `fixtures/tsm-hub/gateway.json`. Joins through the signed peer channel only.
 */

import { Catalog } from '../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../lib/node/create-node.ts';
import { jsonFixture } from '../lib/node/fixture-file.ts';

interface Upstream { id: string; status: 'up' | 'degraded' | 'down'; p50Ms: number | null; p95Ms: number | null; requests1h: number; errors1h: number; lastError?: string }
interface Model { id: string; upstream: string; requestsToday: number; tokensIn: number; tokensOut: number; costCny: number; errorsToday: number }
interface Key { label: string; team: string; upstream: string; status: 'active' | 'expiring' | 'revoked'; last4: string; requestsToday: number }
interface Gateway {
  asOf: string;
  gateway: { name: string; version: string; startedAt: string; region: string };
  upstreams: Upstream[];
  models: Model[];
  keys: Key[];
  hourly: { hour: string; requests: number }[];
}

const pct = (part: number, whole: number) => (whole ? Math.round((part / whole) * 1000) / 10 : 0);
const sum = <T>(rows: T[], f: (r: T) => number) => rows.reduce((n, r) => n + f(r), 0);
const countBy = <T>(rows: T[], f: (r: T) => string) => rows.reduce<Record<string, number>>((m, r) => ((m[f(r)] = (m[f(r)] ?? 0) + 1), m), {});

export default function tsmHub(opts: { fixturesDir: string }): NodeDefinition {
  const load = jsonFixture<Gateway>(`${opts.fixturesDir}/tsm-hub/gateway.json`);
  // No gateway is reachable from the fleet: every answer comes from the snapshot file.
  const base = () => ({ source: 'fixture' as const, asOf: load().asOf });

  const catalog = new Catalog([
    {
      id: 'tsm.health',
      name: 'Gateway health',
      description: 'Overall gateway state, version and uptime, and each upstream provider: up/degraded/down, p50/p95 latency, error rate over the last hour.',
      tags: ['llm-gateway', 'health'],
      keywords: ['health', 'healthy', 'status', 'upstream', 'upstreams', 'latency', 'down'],
      readOnly: true,
      args: {},
      run: () => {
        const g = load();
        const up = g.upstreams.filter((u) => u.status === 'up').length;
        const status = up === g.upstreams.length ? 'ok' : g.upstreams.every((u) => u.status === 'down') ? 'down' : 'degraded';
        const uptimeHours = Math.round((Date.parse(g.asOf) - Date.parse(g.gateway.startedAt)) / 3_600_000);
        const upstreams = g.upstreams.map(({ requests1h, errors1h, ...u }) => ({ ...u, requests1h, errorRatePct: pct(errors1h, requests1h) }));
        return { ...base(), status, gateway: { version: g.gateway.version, region: g.gateway.region, uptimeHours }, upstreams };
      },
      summarize: (r) => {
        const h = r as { status: string; upstreams: Upstream[] };
        const bad = h.upstreams.filter((u) => u.status !== 'up').map((u) => `${u.id} ${u.status}`);
        return `Gateway ${h.status}${bad.length ? `: ${bad.join(', ')}` : ''}`;
      },
    },
    {
      id: 'tsm.usage',
      name: 'Gateway usage today',
      description: "Today's requests, tokens in and out, cost (CNY) and error rate, per team and per hour.",
      tags: ['llm-gateway', 'usage'],
      keywords: ['usage', 'requests', 'tokens', 'cost', 'spend', 'team', 'teams'],
      readOnly: true,
      args: {},
      run: () => {
        const g = load();
        const requests = sum(g.models, (m) => m.requestsToday);
        const teams = [...new Set(g.keys.map((k) => k.team))];
        const byTeam = teams.map((team) => ({ team, requests: sum(g.keys.filter((k) => k.team === team), (k) => k.requestsToday) })).sort((a, b) => b.requests - a.requests);
        const peak = [...g.hourly].sort((a, b) => b.requests - a.requests)[0];
        return {
          ...base(),
          requests,
          tokensIn: sum(g.models, (m) => m.tokensIn),
          tokensOut: sum(g.models, (m) => m.tokensOut),
          costCny: Math.round(sum(g.models, (m) => m.costCny) * 100) / 100,
          errorRatePct: pct(sum(g.models, (m) => m.errorsToday), requests),
          byTeam,
          hourly: g.hourly,
          peakHour: peak?.hour ?? null,
        };
      },
      summarize: (r) => {
        const u = r as { requests: number; costCny: number; errorRatePct: number };
        return `${u.requests} requests today, ¥${u.costCny}, ${u.errorRatePct}% errors`;
      },
    },
    {
      id: 'tsm.models',
      name: 'Models in use',
      description: "Each model behind the gateway with today's requests, share of traffic, tokens, cost and error rate, busiest first.",
      tags: ['llm-gateway', 'models'],
      keywords: ['model', 'models', 'share', 'busiest', 'llm'],
      readOnly: true,
      args: {},
      run: () => {
        const g = load();
        const total = sum(g.models, (m) => m.requestsToday);
        const models = [...g.models].sort((a, b) => b.requestsToday - a.requestsToday)
          .map(({ errorsToday, ...m }) => ({ ...m, sharePct: pct(m.requestsToday, total), errorRatePct: pct(errorsToday, m.requestsToday) }));
        return { ...base(), models };
      },
      summarize: (r) => {
        const { models } = r as { models: { id: string; sharePct: number }[] };
        return `${models.length} models; busiest ${models[0]?.id ?? 'none'} (${models[0]?.sharePct ?? 0}% of requests)`;
      },
    },
    {
      id: 'tsm.keys',
      name: 'API keys',
      description: 'API keys by status and upstream, each shown by label, team and a masked id (last four characters); never the key itself.',
      tags: ['llm-gateway', 'keys'],
      keywords: ['key', 'keys', 'api key', 'credentials', 'revoked', 'expiring'],
      readOnly: true,
      args: {},
      run: () => {
        const g = load();
        // Only these fields leave the node: a new fixture field cannot leak through a spread.
        const keys = g.keys.map((k) => ({ label: k.label, team: k.team, upstream: k.upstream, status: k.status, masked: `…${k.last4.slice(-4)}`, requestsToday: k.requestsToday }));
        return { ...base(), total: keys.length, byStatus: countBy(g.keys, (k) => k.status), byUpstream: countBy(g.keys, (k) => k.upstream), keys };
      },
      summarize: (r) => {
        const k = r as { total: number; byStatus: Record<string, number> };
        return `${k.total} keys: ${Object.entries(k.byStatus).map(([s, n]) => `${n} ${s}`).join(', ')}`;
      },
    },
  ]);

  return {
    name: 'tsm-hub',
    description: 'Read-only snapshot of the LLM gateway: upstream health, usage, models and API keys (counts and masked ids only). Joins through the signed peer channel (no A2A endpoint yet).',
    catalog,
    agentBacked: false,
    a2a: false,
  };
}
