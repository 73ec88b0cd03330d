/**
 * @module node/crm/index — the customer-operations node: companies (keyed by USCC), their industry, owner
 * and follow-up state, read from `fixtures/crm/companies.json`.
 */

import { capability } from '../../lib/catalog/capability.ts';
import * as book from './queries.ts';
import { USCC_PATTERN } from '../../lib/domain/uscc.ts';
import { defineNode, type NodeSetup } from '../../lib/node/define-node.ts';
import { jsonFixture } from '../../lib/node/fixture-file.ts';
import { reviewCapability, type BookWithProfiles } from './negotiation-customer.ts';

// long: the node's catalog, one capability per entry: a table, read top to bottom
export default defineNode((opts: Pick<NodeSetup, 'fixturesDir' | 'model'>) => {
  const load = jsonFixture<BookWithProfiles>(`${opts.fixturesDir}/crm/companies.json`);
  const industryIds = load().industries.map((i) => i.id);

  return {
    name: 'crm',
    dataPaths: [`${opts.fixturesDir}/crm/companies.json`],
    description:
      'Customer operations: companies keyed by USCC, their industry, owner and follow-up state. Read-only; a text question picks a tool by keyword, a data part {"skill", "args"} calls that capability.',
    capabilities: [
      capability({
        id: 'crm.industries',
        name: 'Customers by industry',
        description:
          'Every industry with its number of customers in each follow-up state (new, contacted, in-follow-up, won, lost).',
        tags: ['customers', 'industries'],
        examples: ['How many customers per industry are in follow-up?'],
        keywords: ['industries', 'per industry', 'by industry', 'follow-up', 'customers'],
        readOnly: true,
        args: {},
        run: () => book.industries(load()),
        summarize: ({ industries }) => {
          const top = [...industries].sort(
            (a, b) => b.followUp['in-follow-up'] - a.followUp['in-follow-up'],
          )[0];
          return `${industries.length} industries; most in follow-up: ${top?.name ?? 'none'} (${top?.followUp['in-follow-up'] ?? 0})`;
        },
      }),
      capability({
        id: 'crm.industry',
        name: 'Customers of one industry',
        description:
          "One industry's customers with their follow-up state, owner and last contact, open ones first.",
        tags: ['customers', 'industries'],
        examples: [
          'Which banking customers are we following up?',
          '{"skill":"crm.industry","args":{"industry":"pharma"}}',
        ],
        keywords: ['customers', 'clients', ...industryIds],
        readOnly: true,
        args: {
          industry: {
            type: 'string',
            description: 'Industry id (the scanner sector ids)',
            required: true,
            enum: industryIds,
          },
        },
        run: (args) => book.industry(load(), args.industry),
        summarize: (r) =>
          `${r.industry}: ${r.customers.length} customers, ${r.customers.filter((c) => book.OPEN.includes(c.followUp)).length} open`,
      }),
      capability({
        id: 'crm.company',
        name: 'Company by USCC',
        description:
          'One company by its Unified Social Credit Code (18 characters); found:false when crm does not know it.',
        tags: ['customers', 'entities'],
        examples: [
          'Which company has the credit code 91440300482543082Q?',
          '{"skill":"crm.company","args":{"uscc":"91440300482543082Q"}}',
        ],
        keywords: ['uscc', 'credit code', 'company'],
        readOnly: true,
        args: {
          uscc: {
            type: 'string',
            description: 'Unified Social Credit Code (GB 32100-2015)',
            required: true,
            pattern: USCC_PATTERN,
          },
        },
        run: (args) => book.company(load(), args.uscc),
        summarize: (r) =>
          r.found && r.company
            ? `${r.company.name}: ${r.company.industry}, ${r.company.followUp} (${r.company.owner})`
            : 'No company with that USCC',
      }),
      capability({
        id: 'crm.companies',
        name: 'Companies',
        description:
          "Every company of the book, or one industry's: id, unified social credit code and whether its check character holds, name, industry, stock code, follow-up state.",
        tags: ['customers', 'entities'],
        examples: [
          '{"skill":"crm.companies","args":{}}',
          '{"skill":"crm.companies","args":{"industry":"steel"}}',
        ],
        keywords: ['companies', 'all companies', 'entity index'],
        readOnly: true,
        // The optional argument keeps it off the no-argument snapshot surface (a bulk read for entity alignment).
        args: {
          industry: {
            type: 'string',
            description: 'Industry id; all industries when absent',
            enum: industryIds,
          },
        },
        run: (args) => book.companies(load(), args.industry),
        summarize: (r) => `${r.companies.length} companies`,
      }),
      capability({
        id: 'crm.pipeline',
        name: 'Follow-up pipeline',
        description: 'Customers in each follow-up state overall and per account owner.',
        tags: ['customers', 'pipeline'],
        keywords: ['pipeline', 'funnel', 'owner', 'owners', 'won', 'lost'],
        readOnly: true,
        args: {},
        run: () => book.pipeline(load()),
        summarize: (r) =>
          `${r.total} customers: ${Object.entries(r.byState)
            .map(([s, n]) => `${n} ${s}`)
            .join(', ')}`,
      }),
      capability({
        id: 'crm.stale',
        name: 'Stale customers',
        description: `Open customers (new, contacted, in-follow-up) not contacted for ${book.STALE_DAYS} days or more, or never; longest first.`,
        tags: ['customers', 'follow-up'],
        keywords: ['stale', 'overdue', 'not contacted', 'neglected', 'contact today'],
        readOnly: true,
        args: {},
        run: () => book.stale(load()),
        summarize: (r) =>
          `${r.customers.length} open customers not contacted for ${book.STALE_DAYS}+ days`,
      }),
      capability({
        id: 'crm.status',
        name: 'CRM status',
        description:
          'What the customer book holds: date, companies, industries, owners, listed companies and USCC codes that fail their check.',
        tags: ['status'],
        keywords: ['status', 'health', 'crm'],
        readOnly: true,
        args: {},
        run: () => book.status(load()),
        summarize: (s) =>
          `Customer book ${s.asOf}: ${s.companies} companies in ${s.industries} industries`,
      }),
      reviewCapability(load, opts.model),
    ],
  };
});
