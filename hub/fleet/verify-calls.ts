/**
 * @module hub/fleet/verify-calls — how `fleet verify` reaches a node: a peer call signed as the hub
 * (in a chosen mode, or with a tampered signature), and the same capability through the hub's
 * `/api/local-invoke`, each under a timeout.
 */

import type { FleetMember } from '../../lib/config/fleet-file.ts';
import type { PeerMode } from '../../lib/peer/signature.ts';
import type { PeerSigner } from '../../lib/peer/signer.ts';

/** One node under verification, and how to reach it and the hub. */
export interface Probe {
  f: typeof fetch;
  member: FleetMember;
  /** Signs as the hub (the verifier plays the hub's part). */
  signer: PeerSigner;
  hubUrl: string;
  token?: string;
  timeoutMs: number;
}

// biome-ignore lint/suspicious/noExplicitAny: a node under verification answers anything; each field is checked where it is read
export type Answer = { status: number; body: any };

/** A signed `/peer/invoke` of `capability` with no arguments. */
export async function signedInvoke(
  p: Probe,
  capability: string,
  opts: { mode?: PeerMode; tamper?: boolean } = {},
): Promise<Answer> {
  const { member } = p;
  const body = JSON.stringify({ capability, args: {} });
  const headers = await p.signer.sign(
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
  const res = await p.f(`${member.url}/peer/invoke`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(p.timeoutMs),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** The capability's result as the hub's `/api/local-invoke` answers it, or undefined. */
export async function throughHub(p: Probe, id: string): Promise<unknown> {
  const hub = await p.f(`${p.hubUrl}/api/local-invoke`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(p.token ? { authorization: `Bearer ${p.token}` } : {}),
    },
    body: JSON.stringify({ target: p.member.name, capability: id, args: {} }),
    signal: AbortSignal.timeout(p.timeoutMs),
  });
  const body = (await hub.json()) as { ok?: boolean; result?: unknown };
  return body.ok === true ? body.result : undefined;
}
