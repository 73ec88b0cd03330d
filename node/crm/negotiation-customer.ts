/**
 * @module negotiation-customer — the crm-side agent of a negotiation: it speaks for one customer,
 * holds that customer's profile (risk level, excluded industries) and crm's entity index, and
 * accepts a proposal or vetoes it with a code and a reason.
 */

import { CapabilityError, type Capability } from '../../lib/catalog/catalog.ts';
import { capability } from '../../lib/catalog/capability.ts';
import { isValidUscc } from '../../lib/domain/uscc.ts';
import type { Book } from '../../lib/domain/customer-book.ts';
import {
  LIMIT_FLAGS, RISK_BANDS, RISK_LEVELS, TODAY_DROP_PCT, parseProposal, withinBand, type Proposal, type RiskLevel, type VetoCode,
} from '../../lib/domain/negotiation-terms.ts';

/** A customer's negotiation profile, from the `profiles` section of crm's book. */
interface Profile {
  customer: string;
  riskLevel: RiskLevel;
  excludedIndustries: string[];
  note?: string;
}
export type BookWithProfiles = Book & { profiles?: unknown[] };

type ReviewAnswer =
  | { customer: string; stock: string; decision: 'accept'; reason: string; entity: { crmId: string; uscc: string; name: string } }
  | { customer: string; stock: string; decision: 'veto'; code: VetoCode; reason: string; detail?: string };

interface OpeningAnswer {
  customer: string;
  name: string;
  industry: string;
  /** The customer takes proposals; its constraints are disclosed one veto at a time. */
  accepting: true;
}

const CUSTOMER = /^[a-z0-9][a-z0-9-]{0,63}$/;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRiskLevel = (v: unknown): v is RiskLevel => RISK_LEVELS.some((r) => r === v);
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((i) => typeof i === 'string');

/** The customer's record and profile. @throws CapabilityError UNKNOWN_CUSTOMER, NO_PROFILE or BAD_PROFILE. */
function customerOf(book: BookWithProfiles, id: string): { company: Book['companies'][number]; profile: Profile } {
  const company = book.companies.find((c) => c.id === id);
  if (!company) throw new CapabilityError('UNKNOWN_CUSTOMER', `crm has no customer ${id}`);
  const raw = (book.profiles ?? []).filter(isRecord).find((p) => p.customer === id);
  if (!raw) throw new CapabilityError('NO_PROFILE', `${company.name} (${id}) has no negotiation profile in crm`);
  const { riskLevel, excludedIndustries, note } = raw;
  if (!isRiskLevel(riskLevel) || !isStringList(excludedIndustries))
    throw new CapabilityError('BAD_PROFILE', `the profile of ${id} needs riskLevel (${RISK_LEVELS.join(', ')}) and excludedIndustries`);
  return { company, profile: { customer: id, riskLevel, excludedIndustries, ...(typeof note === 'string' ? { note } : {}) } };
}

/** The one company with a valid USCC carrying a stock code, or why there is none. */
function alignedCompany(book: Book, code: string): { ok: true; company: Book['companies'][number] } | { ok: false; why: string } {
  const carriers = book.companies.filter((c) => c.stockCode === code);
  const valid = carriers.filter((c) => isValidUscc(c.uscc));
  if (valid.length === 1) return { ok: true, company: valid[0]! };
  if (valid.length > 1) return { ok: false, why: `${valid.length} companies carry it (${valid.map((c) => c.id).join(', ')})` };
  if (carriers.length === 0) return { ok: false, why: 'no company in the customer book carries that code' };
  return { ok: false, why: `the company carrying it (${carriers.map((c) => c.id).join(', ')}) has ${carriers[0]!.uscc ? 'a USCC whose check character fails' : 'no USCC on record'}` };
}

/** Accepts or vetoes one proposal; the first constraint that fails is the veto. */
function review(book: BookWithProfiles, customer: string, p: Proposal): ReviewAnswer {
  const { company, profile } = customerOf(book, customer);
  const veto = (code: VetoCode, reason: string, detail?: string): ReviewAnswer =>
    ({ customer, stock: p.code, decision: 'veto', code, reason, ...(detail ? { detail } : {}) });
  const who = company.name;
  if (p.signals.length === 0)
    // The name is not last: a company name ending in "Ltd." would end the sentence in "..".
    return veto('NO_SIGNAL', `Nothing grounds a recommendation to ${who}: ${p.name} (${p.code}) carries no scan signal today.`);
  const aligned = alignedCompany(book, p.code);
  if (!aligned.ok)
    return veto('UNALIGNED_ENTITY', `${p.name} (${p.code}) is not confirmed in the entity index: ${aligned.why}; we cannot tell which registered company it is.`);
  if (p.changePct < TODAY_DROP_PCT)
    return veto('TODAY_DROP', `${p.name} fell ${p.changePct}% today, more than ${-TODAY_DROP_PCT}%; not a recommendation to open with.`);
  if (profile.excludedIndustries.includes(p.sector)) {
    const industry = book.industries.find((i) => i.id === p.sector)?.name ?? p.sector;
    return veto('EXCLUDED_INDUSTRY', `${who}'s profile excludes ${industry}, and ${p.name} is in it.`, p.sector);
  }
  if (!withinBand(profile.riskLevel, p)) {
    const band = RISK_BANDS[profile.riskLevel];
    const limits = p.signals.filter((s) => LIMIT_FLAGS.includes(s));
    const moved = `${p.name} moved ${p.changePct}% today${limits.length ? ` and carries ${limits.join(', ')}` : ''}`;
    const allows = band.maxAbsChangePct === null ? 'any move' : `moves up to ${band.maxAbsChangePct}% either way${band.limitFlags ? '' : ' and no price-limit flag'}`;
    return veto('RISK_LEVEL', `${who} is a ${profile.riskLevel}-risk customer (${allows}); ${moved}.`, profile.riskLevel);
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
function opening(book: BookWithProfiles, customer: string): OpeningAnswer {
  const { company } = customerOf(book, customer);
  return { customer, name: company.name, industry: company.industry, accepting: true };
}

/** crm's `negotiation.review` capability: the opening without a proposal, a decision with one. */
export function reviewCapability(load: () => BookWithProfiles): Capability {
  return capability({
    id: 'negotiation.review',
    name: 'Negotiation: review',
    description: "The customer's agent: accepts a proposed stock or vetoes it with a code (NO_SIGNAL, UNALIGNED_ENTITY, TODAY_DROP, EXCLUDED_INDUSTRY, RISK_LEVEL) and a reason; without a proposal it opens the negotiation.",
    tags: ['negotiation', 'customers'],
    examples: ['{"skill":"negotiation.review","args":{"customer":"c-012"}}'],
    keywords: [],
    readOnly: false,
    args: {
      customer: { type: 'string', description: 'crm customer id, e.g. c-012', required: true },
      proposal: { type: 'string', description: 'JSON proposal {code, name, sector, changePct, signals}' },
    },
    run: ({ customer, proposal }): ReviewAnswer | OpeningAnswer => {
      if (!CUSTOMER.test(customer)) throw new CapabilityError('BAD_ARGS', 'customer must be a crm customer id such as c-012');
      const book = load();
      return proposal === undefined ? opening(book, customer) : review(book, customer, parseProposal(proposal));
    },
    summarize: (a) => {
      if ('accepting' in a) return `${a.name} opens the negotiation`;
      return a.decision === 'accept' ? `Accepted ${a.stock}` : `Veto ${a.stock}: ${a.code}`;
    },
  });
}
