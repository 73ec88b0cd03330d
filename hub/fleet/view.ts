/**
 * @module hub/fleet/view — the hub's read side of the fleet: for every node, its card (or, for a
 * node that joins through the peer channel only, its capability list), online state, latency,
 * whether it is agent-backed (its card's agent-backed extension) and warnings. Nodes are asked in parallel with a timeout; a snapshot is reused
 * for a short time so a busy console does not multiply the requests.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import { readAgentBacked } from '../../lib/a2a/card/card.ts';
import { type TrustedCardKey, verifyCardSignature } from '../../lib/a2a/card/signature.ts';
import type { Fleet, FleetMember } from '../../lib/config/fleet-file.ts';

export interface NodeStatus {
  name: string;
  role: string;
  url: string;
  /** `a2a`: card and /a2a; `peer`: signed peer HTTP only; `unknown`: never reached. */
  kind: 'a2a' | 'peer' | 'unknown';
  online: boolean;
  latencyMs: number | null;
  agentBacked: boolean | null;
  warnings: string[];
  skills: { id: string; name: string }[];
  protocolVersions: string[];
  /**
   * Whether its card's signature verifies against the key the hub pinned for it: `verified`
   * (with the key id), `failed` (with the code; the node also carries a warning) or `unpinned`
   * (the hub holds no key for it). Absent until a card was read.
   */
  cardSignature?: { state: 'verified' | 'failed' | 'unpinned'; kid?: string; code?: string };
  error?: { code: string; message: string };
}

export interface FleetSnapshot {
  hub: string;
  checkedAt: string;
  online: number;
  nodes: NodeStatus[];
  /** Why the fleet file could not be read when it last changed: the view is the last good one. */
  fleetFileProblem?: string;
}

export interface FleetViewOptions {
  fleet: Fleet;
  /** Why the fleet file's last change could not be read, if it could not (the registry's `problem`). */
  problem?: () => string | undefined;
  fetch?: typeof fetch;
  /** Per node, for all its requests together. */
  timeoutMs?: number;
  /** How long a snapshot is served before nodes are asked again. */
  ttlMs?: number;
  now?: () => number;
  /** The public keys the hub pinned for a node (its key ring), which its card must be signed with. */
  pinnedKeys?: (node: string) => readonly TrustedCardKey[];
  /** Told once per node each time its card's signature starts failing (the hub logs it). */
  onUnverified?: (node: string, failure: { code: string; message: string }) => void;
}

type Json = Record<string, unknown>;

async function getJson(
  f: typeof fetch,
  url: string,
  signal: AbortSignal,
): Promise<{ status: number; body: Json | null }> {
  const res = await f(url, { signal, headers: { accept: 'application/json' } });
  const text = await res.text();
  try {
    const body = JSON.parse(text) as unknown;
    return {
      status: res.status,
      body: isPlainObject(body) ? (body as Json) : null,
    };
  } catch {
    return { status: res.status, body: null };
  }
}

/** Asks one node: /health for liveness and latency, then its card or, failing that, /capabilities. */
export async function probeNode(
  member: FleetMember,
  f: typeof fetch,
  timeoutMs: number,
  pinned: readonly TrustedCardKey[] = [],
): Promise<NodeStatus> {
  const status: NodeStatus = {
    name: member.name,
    role: member.role,
    url: member.url,
    kind: 'unknown',
    online: false,
    latencyMs: null,
    agentBacked: null,
    warnings: [],
    skills: [],
    protocolVersions: [],
  };
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const t0 = performance.now();
    const health = await getJson(f, `${member.url}/health`, signal);
    status.latencyMs = Math.round((performance.now() - t0) * 100) / 100;
    if (health.status !== 200 || health.body?.ok !== true) {
      status.error = { code: 'NODE_UNHEALTHY', message: `/health answered HTTP ${health.status}` };
      return status;
    }
    status.online = true;
    const card = await getJson(f, `${member.url}/.well-known/agent-card.json`, signal);
    if (card.status === 200 && card.body) {
      const c = card.body;
      status.kind = 'a2a';
      status.agentBacked = readAgentBacked(c);
      status.warnings = Array.isArray(c.warnings)
        ? c.warnings.filter((w): w is string => typeof w === 'string')
        : [];
      status.skills = Array.isArray(c.skills)
        ? c.skills.map((s: Json) => ({ id: String(s.id), name: String(s.name) }))
        : [];
      // A version served over two bindings (JSON-RPC and HTTP+JSON 1.0) is listed once.
      status.protocolVersions = Array.isArray(c.supportedInterfaces)
        ? [...new Set(c.supportedInterfaces.map((i: Json) => String(i.protocolVersion)))]
        : [];
      if (c.name !== member.name)
        status.warnings.push(
          `card names itself ${JSON.stringify(c.name)}, the fleet calls it ${member.name}`,
        );
      status.cardSignature = checkSignature(c, pinned);
      if (status.cardSignature.state === 'failed')
        status.warnings.push(
          `card signature does not verify against the key pinned for ${member.name} (${status.cardSignature.code})`,
        );
      return status;
    }
    const caps = await getJson(f, `${member.url}/capabilities`, signal);
    if (caps.status === 200 && Array.isArray(caps.body?.capabilities)) {
      status.kind = 'peer';
      status.agentBacked = false;
      status.skills = (caps.body!.capabilities as Json[]).map((s) => ({
        id: String(s.id),
        name: String(s.name),
      }));
      return status;
    }
    status.error = { code: 'NO_CARD', message: 'neither an agent card nor a capability list' };
  } catch (e) {
    const timeout = (e as Error).name === 'TimeoutError';
    status.online = status.online && !timeout;
    status.error = timeout
      ? { code: 'NODE_TIMEOUT', message: `no answer within ${timeoutMs} ms` }
      : { code: 'NODE_UNREACHABLE', message: 'connection failed' };
  }
  return status;
}

/** A card's signature against the pinned keys: no pinned key means nothing to check it with. */
function checkSignature(
  card: Json,
  pinned: readonly TrustedCardKey[],
): NodeStatus['cardSignature'] & {} {
  if (!pinned.length) return { state: 'unpinned' };
  const r = verifyCardSignature(card, pinned);
  return r.ok ? { state: 'verified', kid: r.result.kid } : { state: 'failed', code: r.error.code };
}

export function createFleetView(opts: FleetViewOptions): {
  snapshot(): Promise<FleetSnapshot>;
  /** Drops the cached snapshot: the next read collects afresh (the fleet changed). */
  invalidate(): void;
} {
  const f = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 1500;
  const ttlMs = opts.ttlMs ?? 1000;
  const now = opts.now ?? Date.now;
  let cached: { at: number; snap: Promise<FleetSnapshot> } | undefined;
  const failing = new Set<string>();

  async function collect(): Promise<FleetSnapshot> {
    const probed = await Promise.all(
      opts.fleet.nodes.map(async (m) => ({
        m,
        status: await probeNode(m, f, timeoutMs, opts.pinnedKeys?.(m.name) ?? []),
      })),
    );
    for (const { m, status } of probed) {
      const sig = status.cardSignature;
      if (sig?.state === 'failed' && !failing.has(m.name)) {
        failing.add(m.name);
        opts.onUnverified?.(m.name, {
          code: sig.code ?? '',
          message: status.warnings.at(-1) ?? '',
        });
      } else if (sig && sig.state !== 'failed') failing.delete(m.name);
    }
    // Opt-in members (the conformance agent) count only while someone runs them.
    const nodes = probed
      .filter(({ m, status }) => m.default || status.online)
      .map(({ status }) => status);
    const problem = opts.problem?.();
    return {
      hub: opts.fleet.hub.name,
      checkedAt: new Date(now()).toISOString(),
      online: nodes.filter((n) => n.online).length,
      nodes,
      ...(problem ? { fleetFileProblem: problem } : {}),
    };
  }

  return {
    snapshot() {
      // Concurrent readers share one round of requests.
      if (!cached || now() - cached.at > ttlMs) cached = { at: now(), snap: collect() };
      return cached.snap;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
