/**
 * @module node/scanner/negotiation-advisor — the scanner-side agent of a negotiation: it proposes today's
 * biggest mover for a customer and learns from each veto code which stocks not to offer next.
 * It sees only the scanner's snapshot; the customer's profile and the entity index stay with crm.
 */

import type { Capability } from '../../lib/catalog/catalog.ts';
import { fail, ok, type Result } from '../../lib/errors/result.ts';
import { capability } from '../../lib/catalog/capability.ts';
import type { ModelEndpoint, ToolDefinition } from '../../lib/model/chat.ts';
import { decide } from '../../lib/model/decide.ts';
import {
  LIMIT_FLAGS,
  RISK_LEVELS,
  TODAY_DROP_PCT,
  parseHistory,
  withinBand,
  type HistoryEntry,
  type Proposal,
  type RiskLevel,
} from '../../lib/domain/negotiation-terms.ts';

/** The part of scanner's snapshot the advisor reads. */
interface AdvisorSnapshot {
  asOf: string;
  sectors: {
    id: string;
    stocks: { code: string; name: string; changePct: number; signals: string[] }[];
  }[];
}

/** What the advisor has learned from the vetoes so far. */
interface Learned {
  signalRequired: boolean;
  minChangePct: number | null;
  excludedSectors: string[];
  riskLevel: RiskLevel | null;
  vetoedStocks: string[];
}

type ProposeAnswer =
  | {
      asOf: string;
      customer: string;
      round: number;
      proposal: Proposal;
      why: string;
      learned: Learned;
    }
  | {
      asOf: string;
      customer: string;
      round: number;
      exhausted: true;
      why: string;
      learned: Learned;
    };

const CUSTOMER = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** Reads the history into constraints: each code narrows what the advisor may offer next. */
function learn(snap: AdvisorSnapshot, history: readonly HistoryEntry[]): Learned {
  const sectorOf = new Map(
    snap.sectors.flatMap((s) => s.stocks.map((st) => [st.code, s.id] as const)),
  );
  const learned: Learned = {
    signalRequired: false,
    minChangePct: null,
    excludedSectors: [],
    riskLevel: null,
    vetoedStocks: [],
  };
  for (const h of history) {
    if (!learned.vetoedStocks.includes(h.stock)) learned.vetoedStocks.push(h.stock);
    switch (h.veto) {
      case 'NO_SIGNAL':
        learned.signalRequired = true;
        break;
      case 'TODAY_DROP':
        learned.minChangePct = TODAY_DROP_PCT;
        break;
      case 'EXCLUDED_INDUSTRY': {
        // The veto names the industry; without it, the vetoed stock's own sector is the one refused.
        const sector = h.detail ?? sectorOf.get(h.stock);
        if (sector && !learned.excludedSectors.includes(sector))
          learned.excludedSectors.push(sector);
        break;
      }
      case 'RISK_LEVEL':
        // A band the advisor does not know leaves it at the strictest one.
        learned.riskLevel = RISK_LEVELS.find((r) => r === h.detail) ?? 'low';
        break;
      case 'UNALIGNED_ENTITY':
        // The entity index is crm's; the advisor can only drop the stock it was told about.
        break;
    }
  }
  return learned;
}

const signed = (n: number) => `${n > 0 ? '+' : ''}${n}%`;

function describe(l: Learned): string {
  const parts = [
    l.signalRequired && 'signaled stocks only',
    l.minChangePct !== null && `nothing down more than ${-l.minChangePct}%`,
    l.excludedSectors.length > 0 && `not ${l.excludedSectors.join(', ')}`,
    l.riskLevel && `within the ${l.riskLevel} risk band`,
    l.vetoedStocks.length > 0 && `not ${l.vetoedStocks.join(', ')} again`,
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : 'no veto yet';
}

/** The stocks the vetoes so far still allow, best first, and what the advisor learned. */
function candidates(snap: AdvisorSnapshot, history: readonly HistoryEntry[]) {
  const learned = learn(snap, history);
  const fits = snap.sectors
    .flatMap((s) => s.stocks.map((st) => ({ ...st, sector: s.id })))
    .filter((st) => !learned.vetoedStocks.includes(st.code))
    .filter((st) => !learned.signalRequired || st.signals.length > 0)
    .filter((st) => learned.minChangePct === null || st.changePct >= learned.minChangePct)
    .filter((st) => !learned.excludedSectors.includes(st.sector))
    .filter((st) => !learned.riskLevel || withinBand(learned.riskLevel, st))
    // Biggest move first (what the scan is for), then more signals, then the code for a stable order.
    .sort(
      (a, b) =>
        Math.abs(b.changePct) - Math.abs(a.changePct) ||
        b.signals.length - a.signals.length ||
        a.code.localeCompare(b.code),
    );
  return { learned, fits };
}

/** The next proposal for a customer after the given vetoes, or `exhausted` when nothing fits. */
export function propose(
  snap: AdvisorSnapshot,
  customer: string,
  history: readonly HistoryEntry[],
): ProposeAnswer {
  const { learned, fits } = candidates(snap, history);
  const round = history.length + 1;
  const best = fits[0];
  if (!best)
    return {
      asOf: snap.asOf,
      customer,
      round,
      exhausted: true,
      why: `No stock in today's scan is left under these terms: ${describe(learned)}.`,
      learned,
    };
  const flags = best.signals.length ? `with ${best.signals.join(', ')}` : 'without a signal';
  const limit = best.signals.some((s) => LIMIT_FLAGS.includes(s)) ? ' (at its price limit)' : '';
  return {
    asOf: snap.asOf,
    customer,
    round,
    proposal: {
      code: best.code,
      name: best.name,
      sector: best.sector,
      changePct: best.changePct,
      signals: best.signals,
    },
    why: `${best.name} (${best.code}, ${best.sector}) moved ${signed(best.changePct)} today ${flags}${limit}: the biggest mover left (${describe(learned)}).`,
    learned,
  };
}

const PROPOSE_TOOL: ToolDefinition = {
  name: 'propose',
  description:
    'Propose one stock from the candidates to the customer, or declare that nothing is worth proposing.',
  parameters: {
    type: 'object',
    properties: {
      code: { type: 'string', description: 'The six-digit code of one candidate' },
      why: { type: 'string', description: 'One or two sentences for the customer: why this stock' },
      exhausted: { type: 'boolean', description: 'True when no candidate is worth proposing' },
    },
    required: ['why'],
    additionalProperties: false,
  },
};
const SHORTLIST = 8;

/**
 * The model's proposal: it picks from the stocks the vetoes still allow (the rules' shortlist) and
 * says why. A code outside the shortlist or no reason is refused (MODEL_BAD_TURN); a model that
 * does not answer leaves the turn to the rules, and the answer says so.
 */
async function proposeByModel(
  endpoint: ModelEndpoint,
  snap: AdvisorSnapshot,
  customer: string,
  history: readonly HistoryEntry[],
  f?: typeof fetch,
): Promise<Result<ProposeAnswer & Decided>> {
  const rules = propose(snap, customer, history);
  const { learned, fits } = candidates(snap, history);
  if (!fits.length) return ok({ ...rules, decidedBy: 'rules' });
  const shortlist = fits.slice(0, SHORTLIST);
  const r = await decide(endpoint, {
    system:
      "You are a stock advisor negotiating with a customer's agent. Each veto tells you a constraint of the customer. Propose the candidate most likely to be accepted and useful to the customer, by calling propose.",
    user: JSON.stringify({
      customer,
      round: history.length + 1,
      vetoesSoFar: history,
      learned: describe(learned),
      candidates: shortlist,
    }),
    tool: PROPOSE_TOOL,
    ...(f ? { fetch: f } : {}),
  });
  if (!r.ok)
    return ok({ ...rules, decidedBy: 'rules', modelNote: `${r.error.code}: ${r.error.message}` });
  const why = typeof r.result.why === 'string' ? r.result.why.trim().slice(0, 500) : '';
  if (!why) return fail('MODEL_BAD_TURN', 'the model proposed without saying why');
  if (r.result.exhausted === true)
    return ok({
      asOf: snap.asOf,
      customer,
      round: history.length + 1,
      exhausted: true,
      why,
      learned,
      decidedBy: 'model',
    });
  const pick = shortlist.find((c) => c.code === r.result.code);
  if (!pick)
    return fail(
      'MODEL_BAD_TURN',
      `the model proposed ${JSON.stringify(String(r.result.code ?? '').slice(0, 16))}, which is not among the ${shortlist.length} stocks the vetoes still allow`,
    );
  return ok({
    asOf: snap.asOf,
    customer,
    round: history.length + 1,
    learned,
    why,
    decidedBy: 'model',
    proposal: {
      code: pick.code,
      name: pick.name,
      sector: pick.sector,
      changePct: pick.changePct,
      signals: pick.signals,
    },
  });
}

/** Who took a turn: the rules, or the model (and, when the model was asked and failed, why). */
type Decided = { decidedBy: 'rules' | 'model'; modelNote?: string };

/** scanner's `negotiation.propose` capability; with `model`, `agent: "model"` lets the model propose. */
export function proposeCapability(
  load: () => AdvisorSnapshot,
  model?: ModelEndpoint,
  f?: typeof fetch,
): Capability {
  return capability({
    id: 'negotiation.propose',
    name: 'Negotiation: propose',
    description:
      "The advisor's next candidate stock for a customer, given the vetoes so far (each veto code narrows the next proposal); exhausted when nothing fits.",
    tags: ['negotiation', 'market'],
    examples: [
      '{"skill":"negotiation.propose","args":{"customer":"c-012","history":"[{\\"stock\\":\\"002747\\",\\"veto\\":\\"UNALIGNED_ENTITY\\"}]"}}',
    ],
    keywords: [],
    readOnly: false,
    args: {
      customer: { type: 'string', description: 'crm customer id, e.g. c-012', required: true },
      history: {
        type: 'string',
        description: 'JSON list of earlier vetoes: [{"stock","veto","detail"?}]',
      },
      agent: {
        type: 'string',
        description:
          "Who proposes: rules (default) or model (the node's model, NO_MODEL without one)",
        enum: ['rules', 'model'],
      },
    },
    run: async ({
      customer,
      history,
      agent,
    }): Promise<Result<ProposeAnswer | (ProposeAnswer & Decided)>> => {
      if (!CUSTOMER.test(customer))
        return fail('BAD_ARGS', 'customer must be a crm customer id such as c-012', 'customer');
      // The rules' answer as it always was; only a turn the model was asked for says who decided.
      if (agent !== 'model') {
        const snap = load();
        const vetoes = parseHistory(history);
        return vetoes.ok ? ok(propose(snap, customer, vetoes.result)) : vetoes;
      }
      if (!model)
        return fail(
          'NO_MODEL',
          'scanner has no model configured (models.scanner or MODEL_BASE_URL)',
          'agent',
        );
      const snap = load();
      const vetoes = parseHistory(history);
      return vetoes.ok ? proposeByModel(model, snap, customer, vetoes.result, f) : vetoes;
    },
    summarize: (a) =>
      'proposal' in a
        ? `Round ${a.round}: propose ${a.proposal.name} (${a.proposal.code})`
        : `Round ${a.round}: nothing left to propose`,
  });
}
