/**
 * @module node/tsm-hub/queries — what the LLM gateway snapshot (`fixtures/tsm-hub/gateway.json`)
 * answers: health, usage, models and keys. Keys leave only as label, team and a masked id.
 */

interface Upstream {
  id: string;
  status: 'up' | 'degraded' | 'down';
  p50Ms: number | null;
  p95Ms: number | null;
  requests1h: number;
  errors1h: number;
  lastError?: string;
}
interface Model {
  id: string;
  upstream: string;
  requestsToday: number;
  tokensIn: number;
  tokensOut: number;
  costCny: number;
  errorsToday: number;
}
interface Key {
  label: string;
  team: string;
  upstream: string;
  status: 'active' | 'expiring' | 'revoked';
  last4: string;
  requestsToday: number;
}
export interface Gateway {
  asOf: string;
  gateway: { name: string; version: string; startedAt: string; region: string };
  upstreams: Upstream[];
  models: Model[];
  keys: Key[];
  hourly: { hour: string; requests: number }[];
}

const pct = (part: number, whole: number) => (whole ? Math.round((part / whole) * 1000) / 10 : 0);
const sum = <T>(rows: T[], f: (r: T) => number) => rows.reduce((n, r) => n + f(r), 0);
const countBy = <T>(rows: T[], f: (r: T) => string) =>
  rows.reduce<Record<string, number>>((m, r) => ((m[f(r)] = (m[f(r)] ?? 0) + 1), m), {});
// No gateway is reachable from the fleet: every answer comes from the snapshot file.
const base = (g: Gateway) => ({ source: 'fixture', asOf: g.asOf });

/** Overall state (ok when every upstream is up, down when none is), uptime and each upstream's error rate. */
export function health(g: Gateway) {
  const up = g.upstreams.filter((u) => u.status === 'up').length;
  const status =
    up === g.upstreams.length
      ? 'ok'
      : g.upstreams.every((u) => u.status === 'down')
        ? 'down'
        : 'degraded';
  const uptimeHours = Math.round(
    (Date.parse(g.asOf) - Date.parse(g.gateway.startedAt)) / 3_600_000,
  );
  const upstreams = g.upstreams.map(({ requests1h, errors1h, ...u }) => ({
    ...u,
    requests1h,
    errorRatePct: pct(errors1h, requests1h),
  }));
  return {
    ...base(g),
    status,
    gateway: { version: g.gateway.version, region: g.gateway.region, uptimeHours },
    upstreams,
  };
}

/** Today's requests, tokens, cost and error rate, per team and per hour. */
export function usage(g: Gateway) {
  const requests = sum(g.models, (m) => m.requestsToday);
  const teams = [...new Set(g.keys.map((k) => k.team))];
  const byTeam = teams
    .map((team) => ({
      team,
      requests: sum(
        g.keys.filter((k) => k.team === team),
        (k) => k.requestsToday,
      ),
    }))
    .sort((a, b) => b.requests - a.requests);
  const peak = [...g.hourly].sort((a, b) => b.requests - a.requests)[0];
  return {
    ...base(g),
    requests,
    tokensIn: sum(g.models, (m) => m.tokensIn),
    tokensOut: sum(g.models, (m) => m.tokensOut),
    costCny: Math.round(sum(g.models, (m) => m.costCny) * 100) / 100,
    errorRatePct: pct(
      sum(g.models, (m) => m.errorsToday),
      requests,
    ),
    byTeam,
    hourly: g.hourly,
    peakHour: peak?.hour ?? null,
  };
}

/** Each model with its share of today's requests, busiest first. */
export function models(g: Gateway) {
  const total = sum(g.models, (m) => m.requestsToday);
  const rows = [...g.models]
    .sort((a, b) => b.requestsToday - a.requestsToday)
    .map(({ errorsToday, ...m }) => ({
      ...m,
      sharePct: pct(m.requestsToday, total),
      errorRatePct: pct(errorsToday, m.requestsToday),
    }));
  return { ...base(g), models: rows };
}

/** Keys by status and upstream; each key only by label, team, upstream, status and a masked id. */
export function keys(g: Gateway) {
  // Only these fields leave the node: a new fixture field cannot leak through a spread.
  const rows = g.keys.map((k) => ({
    label: k.label,
    team: k.team,
    upstream: k.upstream,
    status: k.status,
    masked: `…${k.last4.slice(-4)}`,
    requestsToday: k.requestsToday,
  }));
  return {
    ...base(g),
    total: rows.length,
    byStatus: countBy(g.keys, (k) => k.status),
    byUpstream: countBy(g.keys, (k) => k.upstream),
    keys: rows,
  };
}
