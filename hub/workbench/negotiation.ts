/**
 * @module hub/workbench/negotiation — the hub runs a negotiation between two node agents: each turn is an
 * A2A `SendMessage` with a data part, sent through `fleet.message` (traced) in one `contextId`;
 * the advisor (scanner) proposes, the customer's agent (crm) accepts or vetoes with a code and a
 * reason, for a bounded number of rounds. The record is persisted and can be listed and read.
 */

import type { Failure, Result } from '../../lib/errors/result.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import {
  MAX_HISTORY, VETO_CODES, encodeHistory, encodeProposal, type HistoryEntry, type Proposal, type VetoCode,
} from '../../lib/domain/negotiation-terms.ts';
import { isNumber, isObject, isString, isStringList, type Fields } from './fleet-answers.ts';
import { listIds, newNegotiationId, readRecord, saveRecord, type StoreError } from './negotiation-store.ts';

export { negotiationsDir } from './negotiation-store.ts';

interface NegotiationDeps {
  invoker: FleetInvoker;
  /** The negotiations folder (`negotiationsDir(DATA_DIR)`). */
  dir: string;
  now?: () => number;
  /** Proposals at most (1..12, default 6). */
  maxRounds?: number;
  /** Per message (default 10 000 ms). */
  timeoutMs?: number;
  /** Fleet node names of the two agents (defaults scanner and crm). */
  advisor?: string;
  customerAgent?: string;
}

/** One A2A message of the negotiation and its answer. */
interface Turn {
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

interface NegotiationVeto {
  round: number;
  code: VetoCode;
  reason: string;
  detail?: string;
  proposal: Proposal;
}

export interface Negotiation {
  id: string;
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
  transcript: Turn[];
  error?: { code: string; message: string };
}

type NegotiationSummary = Pick<Negotiation, 'id' | 'contextId' | 'customer' | 'customerName' | 'startedAt' | 'outcome' | 'ended' | 'rounds' | 'summary'> & {
  vetoCodes: VetoCode[];
  deal?: { code: string; name: string };
};

type NegotiationError = Failure;

const CUSTOMER = /^[a-z0-9][a-z0-9-]{0,63}$/;
const STOCK = /^\d{6}$/;

function asProposal(v: unknown): Proposal | undefined {
  if (!isObject(v)) return undefined;
  const { code, name, sector, changePct, signals } = v;
  const ok = isString(code) && STOCK.test(code) && isString(name) && isString(sector) && isNumber(changePct) && isStringList(signals);
  return ok ? { code, name, sector, changePct, signals } : undefined;
}

/** An agent's answer as fields to check one by one (an answer that is not an object has none). */
const fieldsOf = (v: unknown): Fields => (isObject(v) ? v : {});
const vetoCodeOf = (v: unknown): VetoCode | undefined => VETO_CODES.find((c) => c === v);

/**
 * Runs one negotiation for a crm customer and persists it. Bad input, or an opening the customer's
 * agent refuses (unknown customer, no profile, node down), is a coded value and writes nothing;
 * after the opening every outcome, failures included, is recorded. Never throws for node faults.
 * @throws Error only when the negotiations folder cannot be written.
 */
export async function startNegotiation(deps: NegotiationDeps, input: { customer: string; model?: boolean }): Promise<Result<Negotiation>> {
  const customer = input?.customer;
  if (typeof customer !== 'string' || !CUSTOMER.test(customer))
    return { ok: false, error: { code: 'NEGOTIATION_BAD_CUSTOMER', message: 'customer must be a crm customer id such as c-012' } };
  const now = deps.now ?? Date.now;
  const advisor = deps.advisor ?? 'scanner';
  const customerAgent = deps.customerAgent ?? 'crm';
  const maxRounds = Math.min(Math.max(Math.trunc(deps.maxRounds ?? 6), 1), Math.min(12, MAX_HISTORY));
  const agents: Negotiation['agents'] = input.model === true ? 'model' : 'rules';
  // A model's turn takes longer than a rule's.
  const timeoutMs = deps.timeoutMs ?? (agents === 'model' ? 30_000 : 10_000);
  const asAgents = agents === 'model' ? { agent: 'model' } : {};
  const started = now();
  const id = newNegotiationId(started);
  const contextId = crypto.randomUUID();
  const transcript: Turn[] = [];

  const send = async (round: number, agent: Turn['agent'], node: string, skill: string, args: Record<string, unknown>) => {
    const at = new Date(now()).toISOString();
    const r = await deps.invoker.message(node, skill, args, { contextId, timeoutMs });
    transcript.push({
      round, agent, node, skill, args, at, ok: r.ok,
      ...(r.ok ? { taskId: r.taskId, answer: r.result } : { error: { code: r.error.code, message: r.error.message }, ...(r.error.taskId ? { taskId: r.error.taskId } : {}) }),
      ...(r.traceId !== undefined ? { traceId: r.traceId } : {}),
    });
    return r;
  };

  // Round 0: the customer's agent opens, which also tells whether it speaks for this customer.
  const open = await send(0, 'customer', customerAgent, 'negotiation.review', { customer });
  // A node's own code (UNKNOWN_CUSTOMER, NO_PROFILE) arrives as data in the failed task's status.
  if (!open.ok) return { ok: false, error: { code: open.error.code, message: open.error.message } };
  const customerName = String(fieldsOf(open.result).name ?? customer);

  const vetoes: NegotiationVeto[] = [];
  const history: HistoryEntry[] = [];
  // How it ended; a failed turn sets `error` too.
  const end: { how: Negotiation['ended']; error?: NegotiationError } = { how: 'max-rounds' };
  let deal: Negotiation['deal'];
  let advisorWhy = '';
  let rounds = 0;
  const fail = (code: string, message: string) => {
    end.how = 'failed';
    end.error = { code, message };
  };

  for (let round = 1; round <= maxRounds; round++) {
    const asked = await send(round, 'advisor', advisor, 'negotiation.propose', { customer, ...(history.length ? { history: encodeHistory(history) } : {}), ...asAgents });
    if (!asked.ok) {
      fail(asked.error.code, `${advisor}: ${asked.error.message}`);
      break;
    }
    const offer = fieldsOf(asked.result);
    advisorWhy = isString(offer.why) ? offer.why : '';
    if (offer.exhausted === true) {
      end.how = 'exhausted';
      break;
    }
    const proposal = asProposal(offer.proposal);
    if (!proposal) {
      fail('NEGOTIATION_BAD_TURN', `${advisor} answered without a well-formed proposal`);
      break;
    }
    // The hub holds both agents to the protocol: a vetoed stock is never offered twice.
    if (history.some((h) => h.stock === proposal.code)) {
      fail('NEGOTIATION_BAD_TURN', `${advisor} proposed ${proposal.code} again after its veto`);
      break;
    }
    rounds = round;
    const reviewed = await send(round, 'customer', customerAgent, 'negotiation.review', { customer, proposal: encodeProposal(proposal), ...asAgents });
    if (!reviewed.ok) {
      fail(reviewed.error.code, `${customerAgent}: ${reviewed.error.message}`);
      break;
    }
    const answer = fieldsOf(reviewed.result);
    const reason = isString(answer.reason) ? answer.reason.trim() : '';
    if (answer.decision === 'accept' && reason) {
      deal = { round, proposal, reason, ...(answer.entity !== undefined ? { entity: answer.entity } : {}) };
      end.how = 'accepted';
      break;
    }
    // A veto without a known code and a reason is not a veto: the seed's rule, enforced here too.
    const code = vetoCodeOf(answer.code);
    if (answer.decision !== 'veto' || !code || !reason) {
      fail('NEGOTIATION_BAD_TURN', `${customerAgent} answered neither an acceptance nor a veto with a code and a reason`);
      break;
    }
    const detail = typeof answer.detail === 'string' && /^[a-z][a-z0-9-]{0,31}$/.test(answer.detail) ? answer.detail : undefined;
    vetoes.push({ round, code, reason, ...(detail ? { detail } : {}), proposal });
    history.push({ stock: proposal.code, veto: code, ...(detail ? { detail } : {}) });
  }

  const codes = vetoes.map((v) => v.code).join(', ');
  const after = vetoes.length ? ` after ${vetoes.length} veto${vetoes.length > 1 ? 'es' : ''} (${codes})` : '';
  const summary = deal
    ? `${customerName} accepts ${deal.proposal.name} (${deal.proposal.code}) in round ${deal.round}${after}.`
    : end.how === 'exhausted'
      ? `No deal for ${customerName}${after}: ${advisorWhy || 'the advisor had nothing left to propose.'}`
      : end.error
        ? `No deal for ${customerName}${after}: the negotiation stopped, ${end.error.code}.`
        : `No deal for ${customerName} within ${maxRounds} rounds${after}.`;
  const negotiation: Negotiation = {
    id, agents, contextId, customer, customerName, advisor, customerAgent,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(now()).toISOString(),
    maxRounds, rounds,
    outcome: deal ? 'deal' : 'no-deal',
    ended: end.how, summary,
    ...(deal ? { deal } : {}),
    vetoes, transcript,
    ...(end.error ? { error: end.error } : {}),
  };
  await saveRecord(deps.dir, id, negotiation);
  return { ok: true, result: negotiation };
}

/** Past negotiations, newest first (at most `limit`, default 100); unreadable files are skipped. */
export async function listNegotiations(dir: string, opts: { limit?: number } = {}): Promise<NegotiationSummary[]> {
  const limit = Math.min(Math.max(Math.trunc(opts.limit ?? 100), 1), 1000);
  const out: NegotiationSummary[] = [];
  for (const id of await listIds(dir, limit)) {
    const r = await readRecord<Negotiation>(dir, id);
    if (!r.ok) continue;
    const n = r.result;
    out.push({
      id: n.id, contextId: n.contextId, customer: n.customer, customerName: n.customerName, startedAt: n.startedAt,
      outcome: n.outcome, ended: n.ended, rounds: n.rounds, summary: n.summary,
      vetoCodes: (n.vetoes ?? []).map((v) => v.code),
      ...(n.deal ? { deal: { code: n.deal.proposal.code, name: n.deal.proposal.name } } : {}),
    });
  }
  return out;
}

/** One negotiation by id: NEGOTIATION_BAD_ID for anything not server-made, NEGOTIATION_NOT_FOUND otherwise. */
export function getNegotiation(dir: string, id: unknown): Promise<Result<Negotiation, StoreError>> {
  return readRecord<Negotiation>(dir, id);
}
