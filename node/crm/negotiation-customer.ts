/**
 * @module node/crm/negotiation-customer — the crm-side agent of a negotiation: it speaks for one customer,
 * holds that customer's profile (risk level, excluded industries) and crm's entity index, and
 * accepts a proposal or vetoes it with a code and a reason.
 */

import type { Capability } from '../../lib/catalog/catalog.ts';
import { capability } from '../../lib/catalog/capability.ts';
import { isValidUscc } from '../../lib/domain/uscc.ts';
import { fail, ok, type Result } from '../../lib/errors/result.ts';
import type { Book } from './queries.ts';
import {
  DETAIL,
  LIMIT_FLAGS,
  RISK_BANDS,
  RISK_LEVELS,
  TODAY_DROP_PCT,
  VETO_CODES,
  parseProposal,
  withinBand,
  type Proposal,
  type RiskLevel,
  type VetoCode,
} from '../../lib/domain/negotiation-terms.ts';
import type { ModelEndpoint, ToolDefinition } from '../../lib/model/chat.ts';
import { decide } from '../../lib/model/decide.ts';

/** A customer's negotiation profile, from the `profiles` section of crm's book. */
interface Profile {
  customer: string;
  riskLevel: RiskLevel;
  excludedIndustries: string[];
  note?: string;
}
export type BookWithProfiles = Book & { profiles?: unknown[] };

type ReviewAnswer =
  // An acceptance decided by the rules carries the confirmed entity.
  | {
      customer: string;
      stock: string;
      decision: 'accept';
      reason: string;
      entity?: { crmId: string; uscc: string; name: string };
    }
  | {
      customer: string;
      stock: string;
      decision: 'veto';
      code: VetoCode;
      reason: string;
      detail?: string;
    };

interface OpeningAnswer {
  customer: string;
  name: string;
  industry: string;
  /** The customer takes proposals; its constraints are disclosed one veto at a time. */
  accepting: true;
}

const CUSTOMER = /^[a-z0-9][a-z0-9-]{0,63}$/;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isRiskLevel = (v: unknown): v is RiskLevel => RISK_LEVELS.some((r) => r === v);
const isStringList = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((i) => typeof i === 'string');

/** The customer a negotiation speaks for: its record and its profile. */
interface Customer {
  company: Book['companies'][number];
  profile: Profile;
}

/** The customer's record and profile, or UNKNOWN_CUSTOMER, NO_PROFILE or BAD_PROFILE. */
function customerOf(book: BookWithProfiles, id: string): Result<Customer> {
  const company = book.companies.find((c) => c.id === id);
  if (!company) return fail('UNKNOWN_CUSTOMER', `crm has no customer ${id}`, 'customer');
  const raw = (book.profiles ?? []).filter(isRecord).find((p) => p.customer === id);
  if (!raw)
    return fail(
      'NO_PROFILE',
      `${company.name} (${id}) has no negotiation profile in crm`,
      'customer',
    );
  const { riskLevel, excludedIndustries, note } = raw;
  if (!isRiskLevel(riskLevel) || !isStringList(excludedIndustries))
    return fail(
      'BAD_PROFILE',
      `the profile of ${id} needs riskLevel (${RISK_LEVELS.join(', ')}) and excludedIndustries`,
    );
  return ok({
    company,
    profile: {
      customer: id,
      riskLevel,
      excludedIndustries,
      ...(typeof note === 'string' ? { note } : {}),
    },
  });
}

/** The one company with a valid USCC carrying a stock code, or why there is none. */
function alignedCompany(
  book: Book,
  code: string,
): { ok: true; company: Book['companies'][number] } | { ok: false; why: string } {
  const carriers = book.companies.filter((c) => c.stockCode === code);
  const valid = carriers.filter((c) => isValidUscc(c.uscc));
  if (valid.length === 1) return { ok: true, company: valid[0]! };
  if (valid.length > 1)
    return {
      ok: false,
      why: `${valid.length} companies carry it (${valid.map((c) => c.id).join(', ')})`,
    };
  if (carriers.length === 0)
    return { ok: false, why: 'no company in the customer book carries that code' };
  return {
    ok: false,
    why: `the company carrying it (${carriers.map((c) => c.id).join(', ')}) has ${carriers[0]!.uscc ? 'a USCC whose check character fails' : 'no USCC on record'}`,
  };
}

/** Accepts or vetoes one proposal for a customer crm knows; the first constraint that fails is the veto. */
function review(book: BookWithProfiles, customer: string, p: Proposal): Result<ReviewAnswer> {
  const found = customerOf(book, customer);
  return found.ok ? ok(reviewByRules(book, customer, found.result, p)) : found;
}

/** The rules' decision on one proposal: the first constraint that fails is the veto. */
function reviewByRules(
  book: BookWithProfiles,
  customer: string,
  { company, profile }: Customer,
  p: Proposal,
): ReviewAnswer {
  const veto = (code: VetoCode, reason: string, detail?: string): ReviewAnswer => ({
    customer,
    stock: p.code,
    decision: 'veto',
    code,
    reason,
    ...(detail ? { detail } : {}),
  });
  const who = company.name;
  if (p.signals.length === 0)
    // The name is not last: a company name ending in "Ltd." would end the sentence in "..".
    return veto(
      'NO_SIGNAL',
      `Nothing grounds a recommendation to ${who}: ${p.name} (${p.code}) carries no scan signal today.`,
    );
  const aligned = alignedCompany(book, p.code);
  if (!aligned.ok)
    return veto(
      'UNALIGNED_ENTITY',
      `${p.name} (${p.code}) is not confirmed in the entity index: ${aligned.why}; we cannot tell which registered company it is.`,
    );
  if (p.changePct < TODAY_DROP_PCT)
    return veto(
      'TODAY_DROP',
      `${p.name} fell ${p.changePct}% today, more than ${-TODAY_DROP_PCT}%; not a recommendation to open with.`,
    );
  if (profile.excludedIndustries.includes(p.sector)) {
    const industry = book.industries.find((i) => i.id === p.sector)?.name ?? p.sector;
    return veto(
      'EXCLUDED_INDUSTRY',
      `${who}'s profile excludes ${industry}, and ${p.name} is in it.`,
      p.sector,
    );
  }
  if (!withinBand(profile.riskLevel, p)) {
    const band = RISK_BANDS[profile.riskLevel];
    const limits = p.signals.filter((s) => LIMIT_FLAGS.includes(s));
    const moved = `${p.name} moved ${p.changePct}% today${limits.length ? ` and carries ${limits.join(', ')}` : ''}`;
    const allows =
      band.maxAbsChangePct === null
        ? 'any move'
        : `moves up to ${band.maxAbsChangePct}% either way${band.limitFlags ? '' : ' and no price-limit flag'}`;
    return veto(
      'RISK_LEVEL',
      `${who} is a ${profile.riskLevel}-risk customer (${allows}); ${moved}.`,
      profile.riskLevel,
    );
  }
  const c = aligned.company;
  return {
    customer,
    stock: p.code,
    decision: 'accept',
    reason: `${p.name} fits ${who}: signaled (${p.signals.join(', ')}), confirmed as ${c.name} (${c.uscc}), ${p.changePct}% today, ${p.sector} not excluded, within the ${profile.riskLevel} risk band.`,
    entity: { crmId: c.id, uscc: c.uscc, name: c.name },
  };
}

/** The customer's opening: who it is, without disclosing its constraints. */
function opening(book: BookWithProfiles, customer: string): Result<OpeningAnswer> {
  const found = customerOf(book, customer);
  if (!found.ok) return found;
  const { company } = found.result;
  return ok({ customer, name: company.name, industry: company.industry, accepting: true });
}

const DECIDE_TOOL: ToolDefinition = {
  name: 'decide',
  description: 'Accept the proposed stock, or veto it with one veto code and a reason.',
  parameters: {
    type: 'object',
    properties: {
      decision: { type: 'string', enum: ['accept', 'veto'] },
      code: {
        type: 'string',
        enum: [...VETO_CODES],
        description: 'For a veto: the constraint it breaks',
      },
      reason: { type: 'string', description: 'One sentence the advisor and the customer read' },
      detail: {
        type: 'string',
        description: "EXCLUDED_INDUSTRY: the industry id; RISK_LEVEL: the customer's risk level",
      },
    },
    required: ['decision', 'reason'],
    additionalProperties: false,
  },
};

/** Who took a turn: the rules, or the model (and, when the model was asked and failed, why). */
type Decided = { decidedBy: 'rules' | 'model'; modelNote?: string };

/**
 * The model's review: it reads the customer's profile, the proposal and the entity index's verdict,
 * and accepts or vetoes. A veto without a known code and a reason, or an answer that is neither,
 * is refused (MODEL_BAD_TURN); an acceptance the customer's rules veto is that veto (the model
 * cannot waive the customer's constraints); a model that does not answer leaves the turn to the
 * rules, visibly.
 */
async function reviewByModel(
  endpoint: ModelEndpoint,
  book: BookWithProfiles,
  customer: string,
  p: Proposal,
  f?: typeof fetch,
): Promise<Result<ReviewAnswer & Decided>> {
  const found = customerOf(book, customer);
  if (!found.ok) return found;
  const { company, profile } = found.result;
  const aligned = alignedCompany(book, p.code);
  const r = await decide(endpoint, {
    system: `You are the agent of the customer ${company.name}. Accept a proposed stock only if it fits the customer's profile; otherwise veto it with exactly one code: ${VETO_CODES.join(', ')} (NO_SIGNAL: no scan signal; UNALIGNED_ENTITY: the company behind the stock is not confirmed; TODAY_DROP: fell more than ${-TODAY_DROP_PCT}% today; EXCLUDED_INDUSTRY: the profile excludes its industry; RISK_LEVEL: outside the customer's risk band). Call decide.`,
    user: JSON.stringify({
      profile,
      riskBands: RISK_BANDS,
      proposal: p,
      entity: aligned.ok
        ? { confirmed: true, crmId: aligned.company.id, name: aligned.company.name }
        : { confirmed: false, why: aligned.why },
    }),
    tool: DECIDE_TOOL,
    ...(f ? { fetch: f } : {}),
  });
  if (!r.ok)
    return ok({
      ...reviewByRules(book, customer, found.result, p),
      decidedBy: 'rules',
      modelNote: `${r.error.code}: ${r.error.message}`,
    });
  const reason = typeof r.result.reason === 'string' ? r.result.reason.trim().slice(0, 500) : '';
  if (r.result.decision === 'accept' && reason) {
    const rules = reviewByRules(book, customer, found.result, p);
    if (rules.decision === 'veto')
      return ok({
        ...rules,
        decidedBy: 'rules',
        modelNote: `the model accepted ${p.code}; the customer's rules veto it (${rules.code})`,
      });
    const entity = aligned.ok
      ? {
          entity: {
            crmId: aligned.company.id,
            uscc: aligned.company.uscc,
            name: aligned.company.name,
          },
        }
      : {};
    return ok({
      customer,
      stock: p.code,
      decision: 'accept',
      reason,
      ...entity,
      decidedBy: 'model',
    });
  }
  const code = VETO_CODES.find((c) => c === r.result.code);
  if (r.result.decision !== 'veto' || !code || !reason)
    return fail(
      'MODEL_BAD_TURN',
      `the model answered ${JSON.stringify({ decision: r.result.decision, code: r.result.code }).slice(0, 120)}: a veto needs one of ${VETO_CODES.join(', ')} and a reason`,
    );
  const given =
    typeof r.result.detail === 'string' && DETAIL.test(r.result.detail)
      ? r.result.detail
      : undefined;
  const detail =
    code === 'EXCLUDED_INDUSTRY'
      ? (given ?? p.sector)
      : code === 'RISK_LEVEL'
        ? profile.riskLevel
        : given;
  return ok({
    customer,
    stock: p.code,
    decision: 'veto',
    code,
    reason,
    ...(detail ? { detail } : {}),
    decidedBy: 'model',
  });
}

/** crm's `negotiation.review` capability: the opening without a proposal, a decision with one; with `model`, `agent: "model"` lets the model decide. */
export function reviewCapability(
  load: () => BookWithProfiles,
  model?: ModelEndpoint,
  f?: typeof fetch,
): Capability {
  return capability({
    id: 'negotiation.review',
    name: 'Negotiation: review',
    description:
      "The customer's agent: accepts a proposed stock or vetoes it with a code (NO_SIGNAL, UNALIGNED_ENTITY, TODAY_DROP, EXCLUDED_INDUSTRY, RISK_LEVEL) and a reason; without a proposal it opens the negotiation.",
    tags: ['negotiation', 'customers'],
    examples: ['{"skill":"negotiation.review","args":{"customer":"c-012"}}'],
    keywords: [],
    readOnly: false,
    args: {
      customer: { type: 'string', description: 'crm customer id, e.g. c-012', required: true },
      proposal: {
        type: 'string',
        description: 'JSON proposal {code, name, sector, changePct, signals}',
      },
      agent: {
        type: 'string',
        description:
          "Who decides: rules (default) or model (the node's model, NO_MODEL without one)",
        enum: ['rules', 'model'],
      },
    },
    run: async ({
      customer,
      proposal,
      agent,
    }): Promise<Result<ReviewAnswer | (ReviewAnswer & Decided) | OpeningAnswer>> => {
      if (!CUSTOMER.test(customer))
        return fail('BAD_ARGS', 'customer must be a crm customer id such as c-012', 'customer');
      const book = load();
      if (proposal === undefined) return opening(book, customer);
      // The rules' answer as it always was; only a turn the model was asked for says who decided.
      if (agent !== 'model') {
        const parsed = parseProposal(proposal);
        return parsed.ok ? review(book, customer, parsed.result) : parsed;
      }
      if (!model)
        return fail(
          'NO_MODEL',
          'crm has no model configured (models.crm or MODEL_BASE_URL)',
          'agent',
        );
      const parsed = parseProposal(proposal);
      return parsed.ok ? reviewByModel(model, book, customer, parsed.result, f) : parsed;
    },
    summarize: (a) => {
      if ('accepting' in a) return `${a.name} opens the negotiation`;
      return a.decision === 'accept' ? `Accepted ${a.stock}` : `Veto ${a.stock}: ${a.code}`;
    },
  });
}
