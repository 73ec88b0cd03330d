/**
 * @module hub/fleet/verify — `bun run fleet verify`: per node, that it is alive (`/healthz`) and ready
 * (`/readyz`), its card is valid, a signed call is accepted in the caller's configured mode (and a weaker mode and a wrong
 * signature are refused), its snapshot tools answer with real fields, nothing outside its catalog
 * dispatches, and the answer through the hub equals the node's own.
 */

import { readAgentBacked } from '../../lib/a2a/card.ts';
import type { Fleet, FleetMember } from '../../lib/fleet/config.ts';
import { PEER_RANK, type PeerMode } from '../../lib/peer/signature.ts';
import type { PeerSigner } from '../../lib/peer/signer.ts';
import { probeHealth } from '../../lib/health.ts';
import { probeNode } from './view.ts';

export type Check =
  | 'online'
  | 'ready'
  | 'card'
  | 'signed'
  | 'refusals'
  | 'snapshots'
  | 'catalogOnly'
  | 'viaHub';
export const CHECKS: readonly Check[] = [
  'online',
  'ready',
  'card',
  'signed',
  'refusals',
  'snapshots',
  'catalogOnly',
  'viaHub',
];

export interface VerifyRow {
  node: string;
  kind: string;
  results: Record<Check, { ok: boolean; detail: string }>;
  ok: boolean;
}

export interface VerifyOptions {
  fleet: Fleet;
  /** Signs as the hub (the verifier plays the hub's part). */
  signer: PeerSigner;
  hubUrl: string;
  /** A bearer token for the hub's API (`/api/local-invoke` needs a principal); LUME_TOKEN in the CLI. */
  token?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

interface Descriptor {
  id: string;
  readOnly: boolean;
  args: Record<string, { required?: boolean }>;
}

// biome-ignore lint/suspicious/noExplicitAny: a node under verification answers anything; each field is checked where it is read
type Answer = { status: number; body: any };

async function signedInvoke(
  f: typeof fetch,
  member: FleetMember,
  signer: PeerSigner,
  capability: string,
  args: unknown,
  opts: { mode?: PeerMode; tamper?: boolean; timeoutMs: number },
): Promise<Answer> {
  const body = JSON.stringify({ capability, args });
  const headers = await signer.sign(
    { to: member.name, route: '/peer/invoke', scope: capability },
    new TextEncoder().encode(body),
    opts.mode ? { mode: opts.mode } : {},
  );
  if (opts.tamper) {
    // Flip the signature's first character: a valid encoding that must not verify.
    const h = headers['x-peer-signature']!;
    const at = h.indexOf(' sig=') + 5;
    headers['x-peer-signature'] = h.slice(0, at) + (h[at] === 'A' ? 'B' : 'A') + h.slice(at + 1);
  }
  const res = await f(`${member.url}/peer/invoke`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(opts.timeoutMs),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

// biome-ignore lint/suspicious/noExplicitAny: the card under verification is checked field by field below
function validCard(card: any, member: FleetMember): string | null {
  if (!card || typeof card !== 'object') return 'no card';
  for (const k of [
    'name',
    'description',
    'version',
    'url',
    'protocolVersion',
    'capabilities',
    'defaultInputModes',
    'defaultOutputModes',
    'skills',
  ])
    if (card[k] === undefined) return `missing ${k}`;
  if (card.name !== member.name) return `card names itself ${card.name}`;
  const versions = (card.supportedInterfaces ?? []).map(
    (i: { protocolVersion?: unknown }) => i.protocolVersion,
  );
  if (!versions.includes('1.0') || !versions.includes('0.3'))
    return 'supportedInterfaces lacks 1.0 or 0.3';
  if (
    !Array.isArray(card.skills) ||
    !card.skills.length ||
    card.skills.some((s: { id?: unknown; tags?: unknown[] }) => !s.id || !s.tags?.length)
  )
    return 'skills need ids and tags';
  if (readAgentBacked(card) === null)
    return 'capabilities.extensions lacks the agent-backed extension';
  return null;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export async function verifyNode(member: FleetMember, o: VerifyOptions): Promise<VerifyRow> {
  const f = o.fetch ?? fetch;
  const timeoutMs = o.timeoutMs ?? 5000;
  const results = Object.fromEntries(
    CHECKS.map((c) => [c, { ok: false, detail: 'not run' }]),
  ) as VerifyRow['results'];
  const set = (c: Check, ok: boolean, detail: string) => (results[c] = { ok, detail });
  const alive = await probeHealth(`${member.url}/healthz`, { fetch: f, timeoutMs });
  set('online', alive.ok, alive.ok ? `${alive.latencyMs} ms` : `/healthz: ${alive.error}`);
  if (!alive.ok) return { node: member.name, kind: 'unknown', results, ok: false };
  const ready = await probeHealth(`${member.url}/readyz`, { fetch: f, timeoutMs });
  const checks =
    (ready.body as { checks?: Record<string, { ok: boolean; detail?: string }> } | undefined)
      ?.checks ?? {};
  const failing = Object.entries(checks)
    .filter(([, c]) => !c.ok)
    .map(([name, c]) => `${name}: ${c.detail ?? 'failed'}`);
  set('ready', ready.ok, ready.ok ? 'ready' : failing.join('; ') || `/readyz: ${ready.error}`);
  const status = await probeNode(member, f, timeoutMs);

  try {
    if (status.kind === 'a2a') {
      const why = validCard(
        await (await f(`${member.url}/.well-known/agent-card.json`)).json(),
        member,
      );
      set('card', why === null, why ?? 'valid for 1.0 and 0.3');
    } else
      set(
        'card',
        status.kind === 'peer',
        status.kind === 'peer' ? 'peer-only node (no card by design)' : 'no card',
      );

    const descriptors = ((await (await f(`${member.url}/capabilities`)).json()).capabilities ??
      []) as Descriptor[];
    const snapshots = descriptors.filter((d) => d.readOnly && Object.keys(d.args).length === 0);
    const probe = snapshots[0]?.id ?? descriptors[0]?.id ?? 'none.none';

    const signed = await signedInvoke(f, member, o.signer, probe, {}, { timeoutMs });
    set(
      'signed',
      signed.status === 200 && signed.body?.ok === true,
      `${modeOf(o.signer)} → HTTP ${signed.status}`,
    );

    const weaker = o.signer.modes.filter((m) => PEER_RANK[m] < PEER_RANK[o.signer.modes[0]!]);
    const refusals: string[] = [];
    const bad = await signedInvoke(f, member, o.signer, probe, {}, { tamper: true, timeoutMs });
    refusals.push(`tampered → ${bad.body?.error?.code}`);
    let refusedAll = bad.status === 401 && bad.body?.error?.code === 'PEER_BAD_SIGNATURE';
    for (const mode of weaker) {
      const r = await signedInvoke(f, member, o.signer, probe, {}, { mode, timeoutMs });
      refusals.push(`${mode} → ${r.body?.error?.code}`);
      refusedAll &&= r.status === 401 && r.body?.error?.code === 'PEER_DOWNGRADE';
    }
    set('refusals', refusedAll, refusals.join(', '));

    const failures: string[] = [];
    for (const d of snapshots) {
      const r = await signedInvoke(f, member, o.signer, d.id, {}, { timeoutMs });
      const result = r.body?.result;
      if (
        !(
          r.body?.ok === true &&
          result &&
          typeof result === 'object' &&
          Object.keys(result).length > 0
        )
      )
        failures.push(d.id);
    }
    set(
      'snapshots',
      snapshots.length > 0 && failures.length === 0,
      failures.length
        ? `no real fields: ${failures.join(', ')}`
        : `${snapshots.length} tools answer`,
    );

    const stray = await signedInvoke(
      f,
      member,
      o.signer,
      'verify.not-in-catalog',
      {},
      { timeoutMs },
    );
    set(
      'catalogOnly',
      stray.body?.error?.code === 'UNKNOWN_CAPABILITY',
      `unknown capability → ${stray.body?.error?.code}`,
    );

    // A tool whose answer is stable (two direct calls agree) must come back the same through the hub.
    let compared = 'no stable snapshot tool';
    let viaHubOk = false;
    const direct = async (id: string) =>
      (await signedInvoke(f, member, o.signer, id, {}, { timeoutMs })).body?.result;
    const throughHub = async (id: string) => {
      const hub = await f(`${o.hubUrl}/api/local-invoke`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        },
        body: JSON.stringify({ target: member.name, capability: id, args: {} }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const body = (await hub.json()) as { ok?: boolean; result?: unknown };
      return body.ok === true ? body.result : undefined;
    };
    for (const d of snapshots) {
      const before = await direct(d.id);
      if (!same(before, await direct(d.id))) continue;
      // Compared against the direct answers just before and just after, twice at most, so a
      // live reading that ticks over between the calls does not count as a difference.
      for (let attempt = 0; attempt < 2 && !viaHubOk; attempt++) {
        const first = attempt === 0 ? before : await direct(d.id);
        const hubAnswer = await throughHub(d.id);
        viaHubOk =
          hubAnswer !== undefined &&
          (same(hubAnswer, first) || same(hubAnswer, await direct(d.id)));
      }
      compared = `${d.id} ${viaHubOk ? 'equal' : 'differs'}`;
      break;
    }
    set(
      'viaHub',
      viaHubOk,
      o.token
        ? compared
        : 'the hub calls nodes only for a principal: set LUME_TOKEN to a token from `bun run keys token add <name>`',
    );
  } catch (e) {
    const first = CHECKS.find((c) => results[c].detail === 'not run');
    if (first) set(first, false, `error: ${(e as Error).message}`);
  }
  return { node: member.name, kind: status.kind, results, ok: CHECKS.every((c) => results[c].ok) };
}

const modeOf = (s: PeerSigner) => s.modes[0] ?? 'none';

export async function verifyFleet(o: VerifyOptions): Promise<VerifyRow[]> {
  return Promise.all(o.fleet.nodes.map((m) => verifyNode(m, o)));
}

/** The rows as a fixed-width table. */
export function verifyTable(rows: VerifyRow[]): string {
  const head = ['node', 'kind', ...CHECKS];
  const lines = rows.map((r) => [
    r.node,
    r.kind,
    ...CHECKS.map((c) => (r.results[c].ok ? 'ok' : 'FAIL')),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  const failures = rows.flatMap((r) =>
    CHECKS.filter((c) => !r.results[c].ok).map((c) => `  ${r.node} ${c}: ${r.results[c].detail}`),
  );
  return [
    fmt(head),
    ...lines.map(fmt),
    ...(failures.length ? ['', 'failures:', ...failures] : []),
  ].join('\n');
}
