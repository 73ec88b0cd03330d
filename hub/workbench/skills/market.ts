/**
 * @module hub/workbench/skills/market — the hub's market capabilities: the scanner's sector
 * movement as it is, and customer reach, which joins it with crm's customers per industry.
 */

import { capability } from '../../../lib/catalog/capability.ts';
import type { FleetInvoker } from '../../../lib/fleet/invoke.ts';
import {
  isIndustriesAnswer,
  isMovementAnswer,
  readFrom,
  type IndustriesAnswer,
  type MovementAnswer,
} from '../fleet-answers.ts';
import { answerOf, passedOn } from './answer.ts';
import { callsFor } from './in-tenant.ts';

interface Recommendation {
  rank: number;
  industry: string;
  name: string;
  avgChangePct: number;
  signaledStocks: number;
  openCustomers: number;
  inFollowUp: number;
  why: string;
}

/** Rising sectors where crm has customers still open (not won or lost), strongest move first. */
function rankReach(
  movement: MovementAnswer,
  crm: IndustriesAnswer,
): { asOf: string; recommendations: Recommendation[] } {
  const byIndustry = new Map(crm.industries.map((i) => [i.industry, i.followUp]));
  const ranked = movement.sectors.flatMap((s) => {
    const followUp = byIndustry.get(s.sector);
    if (!followUp || s.avgChangePct <= 0) return [];
    const inFollowUp = followUp['in-follow-up'] ?? 0;
    const open = (followUp.new ?? 0) + (followUp.contacted ?? 0) + inFollowUp;
    if (open === 0) return [];
    return [
      {
        industry: s.sector,
        name: s.name,
        avgChangePct: s.avgChangePct,
        signaledStocks: s.signaled,
        openCustomers: open,
        inFollowUp,
        why: `${s.name} is up ${s.avgChangePct}% today with ${s.signaled} signaled stock(s); ${open} open customer(s) there, ${inFollowUp} in follow-up`,
      },
    ];
  });
  return { asOf: movement.asOf, recommendations: ranked.map((r, i) => ({ rank: i + 1, ...r })) };
}

export const sectorMovement = (invoker: FleetInvoker) =>
  capability({
    id: 'sector.movement',
    name: 'Sector movement',
    description: "Sectors ranked by today's average change, from the scanner node.",
    tags: ['market', 'fleet'],
    keywords: ['sector', 'sectors', 'movement', 'moved', 'market'],
    readOnly: true,
    args: {},
    run: async (_args, _signal, context) =>
      answerOf(
        await readFrom(callsFor(invoker, context), 'scanner', 'sector.movement', isMovementAnswer),
        'scanner',
      ),
    summarize: ({ sectors: [top] }) =>
      top ? `${top.name} leads at ${top.avgChangePct}%` : 'No sector data',
  });

export const customerReach = (invoker: FleetInvoker) =>
  capability({
    id: 'customer.reach',
    name: 'Customer reach',
    description:
      "Which industry's customers to contact today, and why: the scanner's sector movement joined with crm's customers in each industry.",
    tags: ['customers', 'fleet'],
    keywords: [
      'contact',
      'reach',
      'call',
      'who',
      'which industry',
      'industry should',
      'should we contact',
      'contact today',
    ],
    readOnly: true,
    args: {},
    run: async (_args, _signal, context) => {
      const calls = callsFor(invoker, context);
      // One after the other, scanner first: the trace shows the join in the order it is made.
      const movement = await readFrom(calls, 'scanner', 'sector.movement', isMovementAnswer);
      if (!movement.ok) return passedOn(movement.error, 'scanner');
      const industries = await readFrom(calls, 'crm', 'crm.industries', isIndustriesAnswer);
      if (!industries.ok) return passedOn(industries.error, 'crm');
      return rankReach(movement.result, industries.result);
    },
    summarize: ({ recommendations: [top] }) =>
      top ? `Contact ${top.name} customers today: ${top.why}` : 'No industry stands out today',
  });
