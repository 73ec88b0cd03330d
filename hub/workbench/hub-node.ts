/**
 * @module hub/hub-node — the hub as an A2A node named `a2a`: its card declares the fleet-level
 * capabilities, and each one answers by calling nodes through `fleet.invoke` only.
 */

import { Catalog, CapabilityError } from '../../lib/catalog/catalog.ts';
import type { Failure } from '../../lib/errors/result.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import type { NodeDefinition } from '../../lib/node/create-node.ts';
import type { AskAnswer } from './ask.ts';
import type { Delegator } from './delegate.ts';
import type { FleetSnapshot } from '../fleet/view.ts';
import { entityCoverage, resolveEntity } from './entities.ts';
import { hubAgent } from './hub-agent.ts';
import { listNegotiations, negotiationsDir, startNegotiation } from './negotiation.ts';

export interface HubNodeDeps {
  name: string;
  invoker: FleetInvoker;
  view: { snapshot(): Promise<FleetSnapshot> };
  delegator: Delegator;
  ask: (question: string) => Promise<AskAnswer>;
  /** True when a model plans Ask Agent questions; the card's agent-backed extension says so. */
  agentBacked: boolean;
  /** Negotiation records go to `<dataDir>/hub/negotiations/`. */
  dataDir: string;
}

/**
 * What a capability answers for a coded outcome: the success as it is, a failure raised the one
 * way a capability reports one (CapabilityError), its code unchanged. `what` names the node asked.
 */
function answerOf<R extends { ok: true } | { ok: false; error: Failure }>(r: R, what?: string): Extract<R, { ok: true }> {
  if (r.ok) return r as Extract<R, { ok: true }>;
  const e = (r as { error: Failure }).error;
  throw new CapabilityError(e.code, what ? `${what}: ${e.message}` : e.message);
}

interface CrmIndustry {
  industry: string;
  customers: number;
  followUp: Record<string, number>;
}

interface Movement {
  sector: string;
  name: string;
  avgChangePct: number;
  signaled: number;
}

export function hubNode(deps: HubNodeDeps): NodeDefinition {
  const { invoker } = deps;
  const catalog = new Catalog([
    {
      id: 'sector.movement',
      name: 'Sector movement',
      description: 'Sectors ranked by today\'s average change, from the scanner node.',
      tags: ['market', 'fleet'],
      keywords: ['sector', 'sectors', 'movement', 'moved', 'market'],
      readOnly: true,
      args: {},
      run: async () => answerOf(await invoker.invoke('scanner', 'sector.movement', {}), 'scanner').result,
      summarize: (r) => {
        const top = (r as { sectors?: Movement[] }).sectors?.[0];
        return top ? `${top.name} leads at ${top.avgChangePct}%` : 'No sector data';
      },
    },
    {
      id: 'customer.reach',
      name: 'Customer reach',
      description: 'Which industry\'s customers to contact today, and why: the scanner\'s sector movement joined with crm\'s customers in each industry.',
      tags: ['customers', 'fleet'],
      keywords: ['customer', 'customers', 'contact', 'reach', 'call', 'who'],
      readOnly: true,
      args: {},
      run: async () => {
        const movement = answerOf(await invoker.invoke('scanner', 'sector.movement', {}), 'scanner').result as { asOf: string; sectors: Movement[] };
        const industries = answerOf(await invoker.invoke('crm', 'crm.industries', {}), 'crm').result as { industries?: CrmIndustry[] };
        const byIndustry = new Map((industries.industries ?? []).map((i) => [i.industry, i]));
        // Rising sectors where crm has customers still open (not won or lost), strongest move first.
        const ranked = movement.sectors.flatMap((s) => {
          const crm = byIndustry.get(s.sector);
          if (!crm || s.avgChangePct <= 0) return [];
          const open = (crm.followUp.new ?? 0) + (crm.followUp.contacted ?? 0) + (crm.followUp['in-follow-up'] ?? 0);
          if (open === 0) return [];
          return [{
            industry: s.sector,
            name: s.name,
            avgChangePct: s.avgChangePct,
            signaledStocks: s.signaled,
            openCustomers: open,
            inFollowUp: crm.followUp['in-follow-up'] ?? 0,
            why: `${s.name} is up ${s.avgChangePct}% today with ${s.signaled} signaled stock(s); ${open} open customer(s) there, ${crm.followUp['in-follow-up'] ?? 0} in follow-up`,
          }];
        });
        return { asOf: movement.asOf, recommendations: ranked.map((r, i) => ({ rank: i + 1, ...r })) };
      },
      summarize: (r) => {
        const top = (r as { recommendations: { name: string; why: string }[] }).recommendations[0];
        return top ? `Contact ${top.name} customers today: ${top.why}` : 'No industry stands out today';
      },
    },
    {
      id: 'node.capabilities',
      name: 'Node capabilities',
      description: 'Every fleet node with its skills, online state and whether a model answers it.',
      tags: ['fleet'],
      keywords: ['capabilities', 'nodes', 'fleet', 'skills'],
      readOnly: true,
      args: {},
      run: async () => {
        const snap = await deps.view.snapshot();
        return { nodes: snap.nodes.map((n) => ({ name: n.name, kind: n.kind, online: n.online, agentBacked: n.agentBacked, skills: n.skills.map((s) => s.id) })) };
      },
      summarize: (r) => `${(r as { nodes: unknown[] }).nodes.length} nodes`,
    },
    {
      id: 'entity.resolve',
      name: 'Entity resolve',
      description: 'Finds the company behind a name, a USCC (unified social credit code) or a stock code across crm and scanner: matched, ambiguous or unmatched, with candidates.',
      tags: ['entities', 'fleet'],
      examples: ['{"skill":"entity.resolve","args":{"code":"688981"}}'],
      keywords: ['entity', 'uscc', 'align', 'resolve', 'company'],
      readOnly: true,
      args: {
        name: { type: 'string', description: 'Company name (or part of it)' },
        uscc: { type: 'string', description: '18-character unified social credit code' },
        code: { type: 'string', description: 'Six-digit stock code' },
      },
      run: async (args) => answerOf(await resolveEntity(invoker, args as { name?: string; uscc?: string; code?: string })),
      summarize: (r) => (r as { reason: string }).reason,
    },
    {
      id: 'entity.coverage',
      name: 'Entity coverage',
      description: 'How many crm customers and scanner stock codes are aligned by USCC, and the gaps: no USCC, bad check digit, a name matching several companies, a stock code with no company.',
      tags: ['entities', 'fleet'],
      keywords: ['coverage', 'gaps', 'aligned', 'alignment'],
      readOnly: true,
      args: {},
      run: async () => answerOf(await entityCoverage(invoker)),
      summarize: (r) => {
        const c = r as { gaps?: unknown[] };
        return `${c.gaps?.length ?? 0} alignment gaps`;
      },
    },
    {
      id: 'negotiation.start',
      name: 'Start a negotiation',
      description: 'The scanner\'s advisor proposes stocks for a crm customer and the customer\'s agent accepts or vetoes (each veto with a code and a reason), in A2A messages over bounded rounds; the transcript is kept.',
      tags: ['negotiation', 'fleet'],
      examples: ['{"skill":"negotiation.start","args":{"customer":"c-012"}}'],
      keywords: ['negotiate', 'negotiation', 'propose', 'deal'],
      readOnly: false,
      args: { customer: { type: 'string', description: 'crm customer id such as c-012', required: true } },
      run: async (args) => answerOf(await startNegotiation({ invoker, dir: negotiationsDir(deps.dataDir) }, { customer: args.customer as string })).result,
      summarize: (r) => (r as { summary?: string }).summary ?? 'negotiation ended',
    },
    {
      id: 'negotiation.list',
      name: 'Past negotiations',
      description: 'The negotiations the hub has run, newest first, with their outcomes.',
      tags: ['negotiation', 'fleet'],
      keywords: ['negotiations', 'past'],
      readOnly: true,
      args: { limit: { type: 'integer', description: 'At most this many (default 50)' } },
      run: async (args) => ({ negotiations: await listNegotiations(negotiationsDir(deps.dataDir), { limit: (args.limit as number | undefined) ?? 50 }) }),
      summarize: (r) => `${(r as { negotiations: unknown[] }).negotiations.length} negotiations`,
    },
    {
      id: 'task.delegate',
      name: 'Delegate a task',
      description: 'Hands a job to the executor node and tracks it until it settles.',
      tags: ['tasks', 'fleet'],
      keywords: ['delegate', 'run', 'execute', 'job'],
      readOnly: false,
      args: {
        prompt: { type: 'string', description: 'What the executor should do', required: true },
        recipe: { type: 'string', description: 'A recipe name from the executor\'s allow-list (optional)' },
      },
      // A delegation is a hub task that lives on; it needs an A2A message, not a one-shot peer call.
      run: () => {
        throw new CapabilityError('USE_A2A', 'task.delegate creates a hub task: send it as an A2A message with a data part {"skill":"task.delegate","args":{"prompt":…}}');
      },
    },
  ]);
  return {
    name: deps.name,
    description: 'The hub of the fleet: aggregates every node, traces every cross-node call, and answers fleet-level questions by asking the nodes over the signed peer channel. A text message is a question the hub plans across the fleet; a data part {"skill", "args"} calls one of these capabilities.',
    catalog,
    agent: hubAgent({ catalog, delegator: deps.delegator, ask: deps.ask }),
    agentBacked: deps.agentBacked,
  };
}
