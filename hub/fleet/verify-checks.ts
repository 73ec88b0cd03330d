/**
 * @module hub/fleet/verify-checks — the checks `fleet verify` runs on one node, each answering
 * `{ok, detail}`: readiness, the card (valid for 1.0 and 0.3), a signed call in the configured
 * mode, the refusal of a tampered signature and of weaker modes, snapshot tools with real
 * fields, nothing outside the catalog, and the same answer through the hub.
 */

import { readAgentBacked } from '../../lib/a2a/card/card.ts';
import { isLoopbackHost } from '../../lib/auth/access.ts';
import type { FleetMember } from '../../lib/config/fleet-file.ts';
import { probeHealth } from '../../lib/health.ts';
import { PEER_RANK } from '../../lib/peer/signature.ts';
import type { PeerSigner } from '../../lib/peer/signer.ts';
import { type Probe, signedInvoke, throughHub } from './verify-calls.ts';

export interface CheckResult {
  ok: boolean;
  detail: string;
  /** Not run, and no failure: what it needs was not given (the table shows `skip`). */
  skipped?: boolean;
}

/** What the comparison through the hub needs, said where it is skipped or refused. */
const HUB_TOKEN_HINT =
  'set LUME_TOKEN to a token from `bun run keys token add <name>` to compare the answers through the hub';

export interface Descriptor {
  id: string;
  readOnly: boolean;
  args: Record<string, { required?: boolean }>;
}

const result = (ok: boolean, detail: string): CheckResult => ({ ok, detail });
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const modeOf = (s: PeerSigner) => s.modes[0] ?? 'none';

/** `/readyz`: ready, or the checks that fail. */
export async function readiness(p: Probe): Promise<CheckResult> {
  const ready = await probeHealth(`${p.member.url}/readyz`, { fetch: p.f, timeoutMs: p.timeoutMs });
  const checks =
    (ready.body as { checks?: Record<string, { ok: boolean; detail?: string }> } | undefined)
      ?.checks ?? {};
  const failing = Object.entries(checks)
    .filter(([, c]) => !c.ok)
    .map(([name, c]) => `${name}: ${c.detail ?? 'failed'}`);
  return result(ready.ok, ready.ok ? 'ready' : failing.join('; ') || `/readyz: ${ready.error}`);
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

/** The card of an A2A node; a peer-only node has none by design. */
export async function cardCheck(p: Probe, kind: string): Promise<CheckResult> {
  if (kind === 'a2a') {
    const why = validCard(
      await (await p.f(`${p.member.url}/.well-known/agent-card.json`)).json(),
      p.member,
    );
    return result(why === null, why ?? 'valid for 1.0 and 0.3');
  }
  return result(
    kind === 'peer',
    kind === 'peer' ? 'peer-only node (no card by design)' : 'no card',
  );
}

/** The node's catalog as its `/capabilities` lists it. */
export async function descriptorsOf(p: Probe): Promise<Descriptor[]> {
  return ((await (await p.f(`${p.member.url}/capabilities`)).json()).capabilities ??
    []) as Descriptor[];
}

/** A call signed in the caller's strongest mode is accepted. */
export async function signedCheck(p: Probe, probe: string): Promise<CheckResult> {
  const signed = await signedInvoke(p, probe);
  return result(
    signed.status === 200 && signed.body?.ok === true,
    `${modeOf(p.signer)} → HTTP ${signed.status}`,
  );
}

/** A tampered signature and every weaker mode the caller has are refused. */
export async function refusalsCheck(p: Probe, probe: string): Promise<CheckResult> {
  const { signer } = p;
  const weaker = signer.modes.filter((m) => PEER_RANK[m] < PEER_RANK[signer.modes[0]!]);
  const refusals: string[] = [];
  const bad = await signedInvoke(p, probe, { tamper: true });
  refusals.push(`tampered → ${bad.body?.error?.code}`);
  let refusedAll = bad.status === 401 && bad.body?.error?.code === 'PEER_BAD_SIGNATURE';
  for (const mode of weaker) {
    const r = await signedInvoke(p, probe, { mode });
    refusals.push(`${mode} → ${r.body?.error?.code}`);
    refusedAll &&= r.status === 401 && r.body?.error?.code === 'PEER_DOWNGRADE';
  }
  return result(refusedAll, refusals.join(', '));
}

/** What the checks that call a node's tools blind say of a node that has none to call so. */
const NO_SNAPSHOT_TOOL: CheckResult = {
  ok: true,
  skipped: true,
  detail: 'skipped: no read-only capability without arguments to call (its own declarations)',
};

/** Every snapshot tool (read-only, no arguments) answers with real fields. */
export async function snapshotsCheck(p: Probe, snapshots: Descriptor[]): Promise<CheckResult> {
  // A member with only capabilities that take arguments has nothing to call blind: not a failure.
  if (!snapshots.length) return NO_SNAPSHOT_TOOL;
  const failures: string[] = [];
  for (const d of snapshots) {
    const r = await signedInvoke(p, d.id);
    const answer = r.body?.result;
    if (
      !(
        r.body?.ok === true &&
        answer &&
        typeof answer === 'object' &&
        Object.keys(answer).length > 0
      )
    )
      failures.push(d.id);
  }
  return result(
    snapshots.length > 0 && failures.length === 0,
    failures.length ? `no real fields: ${failures.join(', ')}` : `${snapshots.length} tools answer`,
  );
}

/** A capability outside the catalog does not dispatch. */
export async function catalogOnlyCheck(p: Probe): Promise<CheckResult> {
  const stray = await signedInvoke(p, 'verify.not-in-catalog');
  return result(
    stray.body?.error?.code === 'UNKNOWN_CAPABILITY',
    `unknown capability → ${stray.body?.error?.code}`,
  );
}

/**
 * A tool whose answer is stable (two direct calls agree) must come back the same through the hub.
 * The hub calls a node only for a principal: without a token the check is skipped where the hub
 * is on loopback (everything else verify reads is public there), and fails beyond it.
 */
export async function viaHubCheck(p: Probe, snapshots: Descriptor[]): Promise<CheckResult> {
  if (!snapshots.length) return NO_SNAPSHOT_TOOL;
  if (!p.token && isLoopbackHost(new URL(p.hubUrl).hostname))
    return { ok: true, skipped: true, detail: `skipped: no LUME_TOKEN; ${HUB_TOKEN_HINT}` };
  let compared = 'no stable snapshot tool';
  let viaHubOk = false;
  const direct = async (id: string) => (await signedInvoke(p, id)).body?.result;
  for (const d of snapshots) {
    const before = await direct(d.id);
    if (!same(before, await direct(d.id))) continue;
    // Compared against the direct answers just before and just after, twice at most, so a
    // live reading that ticks over between the calls does not count as a difference.
    for (let attempt = 0; attempt < 2 && !viaHubOk; attempt++) {
      const first = attempt === 0 ? before : await direct(d.id);
      const hubAnswer = await throughHub(p, d.id);
      viaHubOk =
        hubAnswer !== undefined && (same(hubAnswer, first) || same(hubAnswer, await direct(d.id)));
    }
    compared = `${d.id} ${viaHubOk ? 'equal' : 'differs'}`;
    break;
  }
  return result(
    viaHubOk,
    p.token ? compared : `the hub calls nodes only for a principal: ${HUB_TOKEN_HINT}`,
  );
}
