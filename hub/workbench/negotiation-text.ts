/**
 * @module hub/workbench/negotiation-text — a negotiation record as lines for a terminal: one line
 * per turn (who, what, whether rules or a model decided), then the outcome. `bun run negotiate`
 * prints it.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import type { Negotiation } from './negotiation-record.ts';
import { isString } from './fleet-answers.ts';

const by = (answer: unknown) =>
  isPlainObject(answer) && isString(answer.decidedBy)
    ? ` [${answer.decidedBy}${isString(answer.modelNote) ? `: ${answer.modelNote}` : ''}]`
    : '';

/** What one turn said, in a line. */
function turnLine(t: Negotiation['transcript'][number]): string {
  const head = `round ${t.round} ${t.agent} (${t.node})`;
  if (!t.ok) return `${head}: failed ${t.error?.code}: ${t.error?.message}`;
  const a = isPlainObject(t.answer) ? t.answer : {};
  if (t.agent === 'customer' && a.accepting === true) return `${head}: opens for ${String(a.name)}`;
  if (t.agent === 'advisor') {
    if (a.exhausted === true) return `${head}: nothing left to propose: ${String(a.why)}${by(a)}`;
    const p = isPlainObject(a.proposal) ? a.proposal : {};
    return `${head}: proposes ${String(p.name)} (${String(p.code)}): ${String(a.why)}${by(a)}`;
  }
  return a.decision === 'accept'
    ? `${head}: accepts: ${String(a.reason)}${by(a)}`
    : `${head}: veto ${String(a.code)}: ${String(a.reason)}${by(a)}`;
}

export function negotiationLines(n: Negotiation, where: string): string[] {
  return [
    `negotiation ${n.id} for ${n.customerName} (${n.customer}), agents: ${n.agents ?? 'rules'}`,
    ...n.transcript.map(turnLine),
    `${n.outcome} (${n.ended}): ${n.summary}`,
    ...(n.error ? [`error ${n.error.code}: ${n.error.message}`] : []),
    `recorded: ${where}`,
  ];
}
