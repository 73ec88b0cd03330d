/**
 * @module hub/workbench/negotiation — the hub runs a negotiation between two node agents: each turn is an
 * A2A `SendMessage` with a data part, sent through `fleet.message` (traced) in one `contextId`;
 * the advisor (scanner) proposes, the customer's agent (crm) accepts or vetoes with a code and a
 * reason, for a bounded number of rounds (hub/workbench/negotiation-rounds.ts). The record is
 * persisted and can be listed and read (hub/workbench/negotiation-record.ts).
 */

import type { Result } from '../../lib/errors/result.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { MAX_HISTORY } from '../../lib/domain/negotiation-terms.ts';
import type { Negotiation, NegotiationTurn } from './negotiation-record.ts';
import { fieldsOf, playRounds, type RoundsOutcome, type SendTurn } from './negotiation-rounds.ts';
import { newNegotiationId, type NegotiationRetention, saveRecord } from './negotiation-store.ts';

export { negotiationsDir } from './negotiation-store.ts';
export type { Negotiation } from './negotiation-record.ts';

interface NegotiationDeps {
  invoker: FleetInvoker;
  /** The negotiations folder (`negotiationsDir(DATA_DIR)`). */
  dir: string;
  /** Records kept and their age (default none: every record stays). */
  retention?: NegotiationRetention;
  now?: () => number;
  /** Proposals at most (1..12, default 6). */
  maxRounds?: number;
  /** Per message (default 10 000 ms). */
  timeoutMs?: number;
  /** Fleet node names of the two agents (defaults scanner and crm). */
  advisor?: string;
  customerAgent?: string;
}

const CUSTOMER = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** The record's one-sentence summary of how the rounds ended. */
function summaryOf(customerName: string, played: RoundsOutcome, maxRounds: number): string {
  const { deal, vetoes } = played;
  const codes = vetoes.map((v) => v.code).join(', ');
  const after = vetoes.length
    ? ` after ${vetoes.length} veto${vetoes.length > 1 ? 'es' : ''} (${codes})`
    : '';
  return deal
    ? `${customerName} accepts ${deal.proposal.name} (${deal.proposal.code}) in round ${deal.round}${after}.`
    : played.ended === 'exhausted'
      ? `No deal for ${customerName}${after}: ${played.advisorWhy || 'the advisor had nothing left to propose.'}`
      : played.error
        ? `No deal for ${customerName}${after}: the negotiation stopped, ${played.error.code}.`
        : `No deal for ${customerName} within ${maxRounds} rounds${after}.`;
}

/**
 * Runs one negotiation for a crm customer and persists it. Bad input, or an opening the customer's
 * agent refuses (unknown customer, no profile, node down), is a coded value and writes nothing;
 * after the opening every outcome, failures included, is recorded. Never throws for node faults.
 * @throws Error only when the negotiations folder cannot be written.
 */
export async function startNegotiation(
  deps: NegotiationDeps,
  input: { customer: string; model?: boolean; owner?: string },
): Promise<Result<Negotiation>> {
  const customer = input?.customer;
  if (typeof customer !== 'string' || !CUSTOMER.test(customer))
    return {
      ok: false,
      error: {
        code: 'NEGOTIATION_BAD_CUSTOMER',
        message: 'customer must be a crm customer id such as c-012',
      },
    };
  const now = deps.now ?? Date.now;
  const advisor = deps.advisor ?? 'scanner';
  const customerAgent = deps.customerAgent ?? 'crm';
  const maxRounds = Math.min(
    Math.max(Math.trunc(deps.maxRounds ?? 6), 1),
    Math.min(12, MAX_HISTORY),
  );
  const agents: Negotiation['agents'] = input.model === true ? 'model' : 'rules';
  // A model's turn takes longer than a rule's.
  const timeoutMs = deps.timeoutMs ?? (agents === 'model' ? 30_000 : 10_000);
  const asAgents = agents === 'model' ? { agent: 'model' } : {};
  const started = now();
  const id = newNegotiationId(started);
  const contextId = crypto.randomUUID();
  const transcript: NegotiationTurn[] = [];

  const send: SendTurn = async (round, agent, node, skill, args) => {
    const at = new Date(now()).toISOString();
    const r = await deps.invoker.message(node, skill, args, { contextId, timeoutMs });
    transcript.push({
      round,
      agent,
      node,
      skill,
      args,
      at,
      ok: r.ok,
      ...(r.ok
        ? { taskId: r.taskId, answer: r.result }
        : {
            error: { code: r.error.code, message: r.error.message },
            ...(r.error.taskId ? { taskId: r.error.taskId } : {}),
          }),
      ...(r.traceId !== undefined ? { traceId: r.traceId } : {}),
    });
    return r;
  };

  // Round 0: the customer's agent opens, which also tells whether it speaks for this customer.
  const open = await send(0, 'customer', customerAgent, 'negotiation.review', { customer });
  // A node's own code (UNKNOWN_CUSTOMER, NO_PROFILE) arrives as data in the failed task's status.
  if (!open.ok) return { ok: false, error: { code: open.error.code, message: open.error.message } };
  const customerName = String(fieldsOf(open.result).name ?? customer);

  const played = await playRounds({ customer, advisor, customerAgent, maxRounds, asAgents, send });
  const { deal, vetoes, rounds } = played;
  // An agent asked to use its model that has none refuses before any round: nothing happened to record.
  if (played.error?.code === 'NO_MODEL' && played.rounds === 0)
    return { ok: false, error: { code: 'NO_MODEL', message: played.error.message } };
  const negotiation: Negotiation = {
    id,
    ...(input.owner !== undefined ? { owner: input.owner } : {}),
    agents,
    contextId,
    customer,
    customerName,
    advisor,
    customerAgent,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(now()).toISOString(),
    maxRounds,
    rounds,
    outcome: deal ? 'deal' : 'no-deal',
    ended: played.ended,
    summary: summaryOf(customerName, played, maxRounds),
    ...(deal ? { deal } : {}),
    vetoes,
    transcript,
    ...(played.error ? { error: played.error } : {}),
  };
  await saveRecord(deps.dir, id, negotiation, deps.retention);
  return { ok: true, result: negotiation };
}
