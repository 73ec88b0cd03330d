/**
 * @module hub/workbench/negotiation-record — what a negotiation keeps (every A2A turn, the vetoes,
 * the deal, how it ended) and reading the kept records back: a newest-first list and one by id.
 */

import type { Result } from '../../lib/errors/result.ts';
import type { Proposal, VetoCode } from '../../lib/domain/negotiation-terms.ts';
import { listIds, readRecord, type StoreError } from './negotiation-store.ts';

/** One A2A message of the negotiation and its answer. */
export interface NegotiationTurn {
  round: number;
  agent: 'advisor' | 'customer';
  node: string;
  skill: string;
  /** The data part's args exactly as sent. */
  args: Record<string, unknown>;
  at: string;
  ok: boolean;
  taskId?: string;
  traceId?: number;
  answer?: unknown;
  error?: { code: string; message: string };
}

export interface NegotiationVeto {
  round: number;
  code: VetoCode;
  reason: string;
  detail?: string;
  proposal: Proposal;
}

export interface Negotiation {
  id: string;
  /**
   * The owner key of the caller who started it (`tenant:<t>/…` in a tenant): only that caller
   * reads it back. A record without one (made before records were kept per caller) is read by
   * untenanted callers only.
   */
  owner?: string;
  /** Who took the agents' turns: their rules, or their models (each turn's answer says `decidedBy`). */
  agents: 'rules' | 'model';
  contextId: string;
  customer: string;
  customerName: string;
  advisor: string;
  customerAgent: string;
  startedAt: string;
  finishedAt: string;
  maxRounds: number;
  /** Proposals made. */
  rounds: number;
  outcome: 'deal' | 'no-deal';
  /** accepted: a deal; exhausted: the advisor had nothing left; max-rounds: the bound ran out; failed: a turn failed. */
  ended: 'accepted' | 'exhausted' | 'max-rounds' | 'failed';
  summary: string;
  deal?: { round: number; proposal: Proposal; reason: string; entity?: unknown };
  vetoes: NegotiationVeto[];
  transcript: NegotiationTurn[];
  error?: { code: string; message: string };
}

type NegotiationSummary = Pick<
  Negotiation,
  | 'id'
  | 'contextId'
  | 'customer'
  | 'customerName'
  | 'startedAt'
  | 'outcome'
  | 'ended'
  | 'rounds'
  | 'summary'
> & {
  vetoCodes: VetoCode[];
  deal?: { code: string; name: string };
};

/** Whether the caller of owner key `owner` may read record `n` (its own; an ownerless one untenanted). */
const readableBy = (n: Negotiation, owner: string): boolean =>
  n.owner === undefined ? !owner.startsWith('tenant:') : n.owner === owner;

/** The most records one list reads from disk to find the caller's own. */
const MAX_SCANNED = 1000;

/**
 * The caller's past negotiations (owner key `owner`), newest first (at most `limit`, default
 * 100); unreadable files and other callers' records are skipped.
 */
export async function listNegotiations(
  dir: string,
  owner: string,
  opts: { limit?: number } = {},
): Promise<NegotiationSummary[]> {
  const limit = Math.min(Math.max(Math.trunc(opts.limit ?? 100), 1), 1000);
  const out: NegotiationSummary[] = [];
  for (const id of await listIds(dir, MAX_SCANNED)) {
    if (out.length >= limit) break;
    const r = await readRecord<Negotiation>(dir, id);
    if (!r.ok || !readableBy(r.result, owner)) continue;
    const n = r.result;
    out.push({
      id: n.id,
      contextId: n.contextId,
      customer: n.customer,
      customerName: n.customerName,
      startedAt: n.startedAt,
      outcome: n.outcome,
      ended: n.ended,
      rounds: n.rounds,
      summary: n.summary,
      vetoCodes: (n.vetoes ?? []).map((v) => v.code),
      ...(n.deal ? { deal: { code: n.deal.proposal.code, name: n.deal.proposal.name } } : {}),
    });
  }
  return out;
}

/**
 * One of the caller's negotiations by id: NEGOTIATION_BAD_ID for anything not server-made,
 * NEGOTIATION_NOT_FOUND when there is none or it is another caller's (the same answer: no hint).
 */
export async function getNegotiation(
  dir: string,
  id: unknown,
  owner: string,
): Promise<Result<Negotiation, StoreError>> {
  const r = await readRecord<Negotiation>(dir, id);
  if (!r.ok || readableBy(r.result, owner)) return r;
  return {
    ok: false,
    error: { code: 'NEGOTIATION_NOT_FOUND', message: `no negotiation ${String(id)}` },
  };
}
