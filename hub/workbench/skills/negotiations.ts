/**
 * @module hub/workbench/skills/negotiations — the hub's negotiation capabilities: run one between
 * the scanner's advisor and a crm customer's agent, and list the ones run so far.
 */

import { ownerKey } from '../../../lib/auth/principal.ts';
import { capability } from '../../../lib/catalog/capability.ts';
import type { FleetInvoker } from '../../../lib/fleet/invoke.ts';
import { listNegotiations } from '../negotiation-record.ts';
import type { NegotiationRetention } from '../negotiation-store.ts';
import { startNegotiation } from '../negotiation.ts';
import { answerOf } from './answer.ts';

/** `dir` is the negotiations folder (`negotiationsDir(DATA_DIR)`). */
export const negotiationStart = (
  invoker: FleetInvoker,
  dir: string,
  retention?: NegotiationRetention,
) =>
  capability({
    id: 'negotiation.start',
    name: 'Start a negotiation',
    description:
      "The scanner's advisor proposes stocks for a crm customer and the customer's agent accepts or vetoes (each veto with a code and a reason), in A2A messages over bounded rounds; the transcript is kept.",
    tags: ['negotiation', 'fleet'],
    examples: ['{"skill":"negotiation.start","args":{"customer":"c-012"}}'],
    keywords: ['negotiate', 'negotiation', 'propose', 'deal'],
    readOnly: false,
    args: {
      customer: { type: 'string', description: 'crm customer id such as c-012', required: true },
      model: {
        type: 'boolean',
        description: "Let each agent's model take its turns (the nodes need a model configured)",
      },
    },
    // Kept as the caller's (in its tenant): only that caller lists and reads it back.
    run: async (args, _signal, context) =>
      answerOf(
        await startNegotiation(
          { invoker, dir, ...(retention ? { retention } : {}) },
          {
            customer: args.customer,
            ...(args.model ? { model: true } : {}),
            ...(context ? { owner: ownerKey(context.caller) } : {}),
          },
        ),
      ),
    summarize: (r) => r.summary,
  });

export const negotiationList = (dir: string) =>
  capability({
    id: 'negotiation.list',
    name: 'Past negotiations',
    description: 'The negotiations the hub has run, newest first, with their outcomes.',
    tags: ['negotiation', 'fleet'],
    keywords: ['negotiations', 'past'],
    readOnly: true,
    args: { limit: { type: 'integer', description: 'At most this many (default 50)' } },
    run: async (args, _signal, context) => ({
      negotiations: await listNegotiations(dir, context ? ownerKey(context.caller) : 'anonymous', {
        limit: args.limit ?? 50,
      }),
    }),
    summarize: (r) => `${r.negotiations.length} negotiations`,
  });
