/**
 * @module hub/workbench/negotiation-rounds — the rounds of a negotiation: the advisor proposes, the
 * customer's agent accepts or vetoes with a code and a reason, until a deal, an advisor with nothing
 * left, a turn that breaks the protocol, or the bound. The hub holds both agents to the protocol.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import type { Failure } from '../../lib/errors/result.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import {
  DETAIL,
  VETO_CODES,
  encodeHistory,
  encodeProposal,
  type HistoryEntry,
  type Proposal,
  type VetoCode,
} from '../../lib/domain/negotiation-terms.ts';
import { isNumber, isString, isStringList, type Fields } from './fleet-answers.ts';
import type { Negotiation, NegotiationTurn, NegotiationVeto } from './negotiation-record.ts';

/** Sends one turn (an A2A message in the negotiation's context) and records it in the transcript. */
export type SendTurn = (
  round: number,
  agent: NegotiationTurn['agent'],
  node: string,
  skill: string,
  args: Record<string, unknown>,
) => ReturnType<FleetInvoker['message']>;

export interface RoundsInput {
  customer: string;
  advisor: string;
  customerAgent: string;
  maxRounds: number;
  /** Extra args of every turn: `{agent: 'model'}` lets each agent's model take it. */
  asAgents: Record<string, unknown>;
  send: SendTurn;
}

export interface RoundsOutcome {
  /** Proposals made. */
  rounds: number;
  vetoes: NegotiationVeto[];
  deal?: Negotiation['deal'];
  ended: Negotiation['ended'];
  /** Set when a turn failed or broke the protocol. */
  error?: Failure;
  /** The advisor's last reason (shown when it had nothing left). */
  advisorWhy: string;
}

const STOCK = /^\d{6}$/;

function asProposal(v: unknown): Proposal | undefined {
  if (!isPlainObject(v)) return undefined;
  const { code, name, sector, changePct, signals } = v;
  const ok =
    isString(code) &&
    STOCK.test(code) &&
    isString(name) &&
    isString(sector) &&
    isNumber(changePct) &&
    isStringList(signals);
  return ok ? { code, name, sector, changePct, signals } : undefined;
}

/** An agent's answer as fields to check one by one (an answer that is not an object has none). */
export const fieldsOf = (v: unknown): Fields => (isPlainObject(v) ? v : {});
const vetoCodeOf = (v: unknown): VetoCode | undefined => VETO_CODES.find((c) => c === v);

/** Plays the rounds after the opening. Never throws for node faults: a failed turn ends them with `error`. */
export async function playRounds(input: RoundsInput): Promise<RoundsOutcome> {
  const { customer, advisor, customerAgent, maxRounds, asAgents, send } = input;
  const vetoes: NegotiationVeto[] = [];
  const history: HistoryEntry[] = [];
  // How it ended; a failed turn sets `error` too.
  const end: { how: Negotiation['ended']; error?: Failure } = { how: 'max-rounds' };
  let deal: Negotiation['deal'];
  let advisorWhy = '';
  let rounds = 0;
  const fail = (code: string, message: string) => {
    end.how = 'failed';
    end.error = { code, message };
  };

  for (let round = 1; round <= maxRounds; round++) {
    const asked = await send(round, 'advisor', advisor, 'negotiation.propose', {
      customer,
      ...(history.length ? { history: encodeHistory(history) } : {}),
      ...asAgents,
    });
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
    const reviewed = await send(round, 'customer', customerAgent, 'negotiation.review', {
      customer,
      proposal: encodeProposal(proposal),
      ...asAgents,
    });
    if (!reviewed.ok) {
      fail(reviewed.error.code, `${customerAgent}: ${reviewed.error.message}`);
      break;
    }
    const answer = fieldsOf(reviewed.result);
    const reason = isString(answer.reason) ? answer.reason.trim() : '';
    if (answer.decision === 'accept' && reason) {
      deal = {
        round,
        proposal,
        reason,
        ...(answer.entity !== undefined ? { entity: answer.entity } : {}),
      };
      end.how = 'accepted';
      break;
    }
    // A veto without a known code and a reason is not a veto: the protocol's rule, enforced here too.
    const code = vetoCodeOf(answer.code);
    if (answer.decision !== 'veto' || !code || !reason) {
      fail(
        'NEGOTIATION_BAD_TURN',
        `${customerAgent} answered neither an acceptance nor a veto with a code and a reason`,
      );
      break;
    }
    const detail =
      typeof answer.detail === 'string' && DETAIL.test(answer.detail) ? answer.detail : undefined;
    vetoes.push({ round, code, reason, ...(detail ? { detail } : {}), proposal });
    history.push({ stock: proposal.code, veto: code, ...(detail ? { detail } : {}) });
  }
  return {
    rounds,
    vetoes,
    ...(deal ? { deal } : {}),
    ended: end.how,
    ...(end.error ? { error: end.error } : {}),
    advisorWhy,
  };
}
