/**
 * @module hub/fleet/verify — `bun run fleet verify`: per node, that it is alive (`/healthz`) and ready
 * (`/readyz`), its card is valid, a signed call is accepted in the caller's configured mode (and a weaker mode and a wrong
 * signature are refused), its snapshot tools answer with real fields, nothing outside its catalog
 * dispatches, and the answer through the hub equals the node's own.
 * This file runs them in order (hub/fleet/verify-checks.ts; the calls, hub/fleet/verify-calls.ts)
 * and prints the table.
 */

import type { Fleet, FleetMember } from '../../lib/config/fleet-file.ts';
import type { PeerSigner } from '../../lib/peer/signer.ts';
import { probeHealth } from '../../lib/health.ts';
import { probeNode } from './view.ts';
import type { Probe } from './verify-calls.ts';
import {
  type CheckResult,
  cardCheck,
  catalogOnlyCheck,
  descriptorsOf,
  readiness,
  refusalsCheck,
  signedCheck,
  snapshotsCheck,
  viaHubCheck,
} from './verify-checks.ts';

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
  results: Record<Check, CheckResult>;
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

async function verifyNode(member: FleetMember, o: VerifyOptions): Promise<VerifyRow> {
  const p: Probe = {
    f: o.fetch ?? fetch,
    member,
    signer: o.signer,
    hubUrl: o.hubUrl,
    ...(o.token ? { token: o.token } : {}),
    timeoutMs: o.timeoutMs ?? 5000,
  };
  const results = Object.fromEntries(
    CHECKS.map((c) => [c, { ok: false, detail: 'not run' }]),
  ) as VerifyRow['results'];
  const set = (c: Check, r: CheckResult) => (results[c] = r);
  const alive = await probeHealth(`${member.url}/healthz`, { fetch: p.f, timeoutMs: p.timeoutMs });
  set('online', {
    ok: alive.ok,
    detail: alive.ok ? `${alive.latencyMs} ms` : `/healthz: ${alive.error}`,
  });
  if (!alive.ok) return { node: member.name, kind: 'unknown', results, ok: false };
  set('ready', await readiness(p));
  const status = await probeNode(member, p.f, p.timeoutMs);
  try {
    set('card', await cardCheck(p, status.kind));
    const descriptors = await descriptorsOf(p);
    const snapshots = descriptors.filter((d) => d.readOnly && Object.keys(d.args).length === 0);
    const probe = snapshots[0]?.id ?? descriptors[0]?.id ?? 'none.none';
    set('signed', await signedCheck(p, probe));
    set('refusals', await refusalsCheck(p, probe));
    set('snapshots', await snapshotsCheck(p, snapshots));
    set('catalogOnly', await catalogOnlyCheck(p));
    set('viaHub', await viaHubCheck(p, snapshots));
  } catch (e) {
    const first = CHECKS.find((c) => results[c].detail === 'not run');
    if (first) set(first, { ok: false, detail: `error: ${(e as Error).message}` });
  }
  return { node: member.name, kind: status.kind, results, ok: CHECKS.every((c) => results[c].ok) };
}

export async function verifyFleet(o: VerifyOptions): Promise<VerifyRow[]> {
  return Promise.all(o.fleet.nodes.map((m) => verifyNode(m, o)));
}

/** The rows as a fixed-width table; a check that was skipped is `skip`, and a note says why. */
export function verifyTable(rows: VerifyRow[]): string {
  const head = ['node', 'kind', ...CHECKS];
  const cell = (r: CheckResult) => (r.skipped ? 'skip' : r.ok ? 'ok' : 'FAIL');
  const lines = rows.map((r) => [r.node, r.kind, ...CHECKS.map((c) => cell(r.results[c]))]);
  const skipped = [
    ...new Set(
      rows.flatMap((r) =>
        CHECKS.filter((c) => r.results[c].skipped).map((c) => `${c}: ${r.results[c].detail}`),
      ),
    ),
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  const failures = rows.flatMap((r) =>
    CHECKS.filter((c) => !r.results[c].ok).map((c) => `  ${r.node} ${c}: ${r.results[c].detail}`),
  );
  return [
    fmt(head),
    ...lines.map(fmt),
    ...(skipped.length ? ['', 'skipped (not a failure):', ...skipped.map((s) => `  ${s}`)] : []),
    ...(failures.length ? ['', 'failures:', ...failures] : []),
  ].join('\n');
}
