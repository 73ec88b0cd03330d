/**
 * @module node/crm/queries — crm's customer book (`fixtures/crm/companies.json`) and the views its
 * capabilities answer with; pure functions of the book.
 */

import { isValidUscc } from '../../lib/domain/uscc.ts';

export type FollowUp = 'new' | 'contacted' | 'in-follow-up' | 'won' | 'lost';
export interface Company {
  id: string;
  uscc: string;
  name: string;
  industry: string;
  stockCode?: string;
  city: string;
  followUp: FollowUp;
  owner: string;
  lastContact: string | null;
}
export interface Book {
  asOf: string;
  followUpStates: FollowUp[];
  industries: { id: string; name: string }[];
  companies: Company[];
}

export const OPEN: readonly FollowUp[] = ['new', 'contacted', 'in-follow-up'];
/** Open customers untouched this many days (or never) count as stale. */
export const STALE_DAYS = 30;
const DAY_MS = 86_400_000;
/** Open work first: the order a sales owner reads an industry's list in. */
const WORK_ORDER: readonly FollowUp[] = ['in-follow-up', 'contacted', 'new', 'won', 'lost'];

const countStates = (book: Book, rows: Company[]) =>
  Object.fromEntries(
    book.followUpStates.map((s) => [s, rows.filter((c) => c.followUp === s).length]),
  ) as Record<FollowUp, number>;
const daysSince = (asOf: string, day: string | null) =>
  day ? Math.round((Date.parse(asOf) - Date.parse(day)) / DAY_MS) : null;

/** A customer as the node shows it: the record plus whether its USCC checks out. */
export const companyView = (c: Company) => ({ ...c, usccValid: isValidUscc(c.uscc) });

export function industries(book: Book) {
  const rows = book.industries.map((i) => {
    const cs = book.companies.filter((c) => c.industry === i.id);
    return { industry: i.id, name: i.name, customers: cs.length, followUp: countStates(book, cs) };
  });
  return { asOf: book.asOf, industries: rows };
}

export function industry(book: Book, id: string) {
  const cs = book.companies
    .filter((c) => c.industry === id)
    .sort((a, b) => WORK_ORDER.indexOf(a.followUp) - WORK_ORDER.indexOf(b.followUp));
  return {
    asOf: book.asOf,
    industry: id,
    customers: cs.map(companyView),
    followUp: countStates(book, cs),
  };
}

export function company(book: Book, uscc: string) {
  const code = uscc.trim().toUpperCase();
  const hit = book.companies.find((c) => c.uscc === code);
  return hit
    ? { asOf: book.asOf, found: true, company: companyView(hit) }
    : { asOf: book.asOf, found: false, usccValid: isValidUscc(code) };
}

/** Every company (of one industry, or all) as the node shows it. */
export function companies(book: Book, industry?: string) {
  return {
    asOf: book.asOf,
    companies: book.companies.filter((c) => !industry || c.industry === industry).map(companyView),
  };
}

export function pipeline(book: Book) {
  const owners = [...new Set(book.companies.map((c) => c.owner))].sort();
  const byOwner = owners.map((owner) => ({
    owner,
    ...countStates(
      book,
      book.companies.filter((c) => c.owner === owner),
    ),
  }));
  return {
    asOf: book.asOf,
    total: book.companies.length,
    byState: countStates(book, book.companies),
    byOwner,
  };
}

export function stale(book: Book) {
  const customers = book.companies
    .filter((c) => OPEN.includes(c.followUp))
    .map((c) => ({
      id: c.id,
      name: c.name,
      industry: c.industry,
      followUp: c.followUp,
      owner: c.owner,
      lastContact: c.lastContact,
      daysSince: daysSince(book.asOf, c.lastContact),
    }))
    .filter((c) => c.daysSince === null || c.daysSince >= STALE_DAYS)
    .sort((a, b) => (b.daysSince ?? Infinity) - (a.daysSince ?? Infinity));
  return { asOf: book.asOf, thresholdDays: STALE_DAYS, customers };
}

export function status(book: Book) {
  const cs = book.companies;
  return {
    asOf: book.asOf,
    companies: cs.length,
    industries: book.industries.length,
    owners: new Set(cs.map((c) => c.owner)).size,
    listed: cs.filter((c) => c.stockCode).length,
    usccInvalid: cs.filter((c) => !isValidUscc(c.uscc)).length,
  };
}
