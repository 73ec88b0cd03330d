/**
 * @module hub/workbench/skills/entities — the hub's entity capabilities: one company resolved
 * across crm and scanner by name, USCC or stock code, and how well the two are aligned.
 */

import { capability } from '../../../lib/catalog/capability.ts';
import { USCC_PATTERN } from '../../../lib/domain/uscc.ts';
import type { FleetInvoker } from '../../../lib/fleet/invoke.ts';
import { entityCoverage as coverageAcross, resolveEntity } from '../entities.ts';
import { unlessFailed } from './answer.ts';
import { callsFor } from './in-tenant.ts';

export const entityResolve = (invoker: FleetInvoker) =>
  capability({
    id: 'entity.resolve',
    name: 'Entity resolve',
    description:
      'Finds the company behind a name, a USCC (unified social credit code) or a stock code across crm and scanner: matched, ambiguous or unmatched, with candidates.',
    tags: ['entities', 'fleet'],
    examples: [
      'Resolve the entity behind stock 688981',
      '{"skill":"entity.resolve","args":{"code":"688981"}}',
    ],
    keywords: ['entity', 'uscc', 'align', 'resolve', 'company'],
    readOnly: true,
    args: {
      name: { type: 'string', description: 'Company name (or part of it)' },
      uscc: {
        type: 'string',
        description: '18-character unified social credit code',
        pattern: USCC_PATTERN,
      },
      code: { type: 'string', description: 'Six-digit stock code', pattern: '\\d{6}' },
    },
    run: async (args, _signal, context) =>
      unlessFailed(await resolveEntity(callsFor(invoker, context), args)),
    summarize: (r) => r.reason,
  });

export const entityCoverage = (invoker: FleetInvoker) =>
  capability({
    id: 'entity.coverage',
    name: 'Entity coverage',
    description:
      'How many crm customers and scanner stock codes are aligned by USCC, and the gaps: no USCC, bad check digit, a name matching several companies, a stock code with no company.',
    tags: ['entities', 'fleet'],
    keywords: ['coverage', 'gaps', 'aligned', 'alignment'],
    readOnly: true,
    args: {},
    run: async (_args, _signal, context) =>
      unlessFailed(await coverageAcross(callsFor(invoker, context))),
    summarize: (r) => `${r.gaps.length} alignment gaps`,
  });
