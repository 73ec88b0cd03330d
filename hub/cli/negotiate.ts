/**
 * @module hub/cli/negotiate — `bun run negotiate <customer> [--model] [--hub URL]`: asks the
 * running hub to run one negotiation (an A2A message to the hub, `negotiation.start`), prints the
 * transcript and where the record is; the hub writes it where the console's A2A Negotiation page
 * lists it. With `--model` each agent's model takes its turns. A negotiation changes state, so the
 * hub runs it only for a principal: the token in LUME_TOKEN (`bun run keys token add <name>`).
 */

import { parseArgs } from 'node:util';
import { codedFailureOf } from '../../lib/errors/as-data.ts';
import { negotiationLines } from '../workbench/negotiation-text.ts';
import type { Negotiation } from '../workbench/negotiation.ts';
import { fleetOrExit, settingsOrExit } from './settings.ts';

const USAGE = 'usage: bun run negotiate <customer id, e.g. c-012> [--model] [--hub URL]';
const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: {
    model: { type: 'boolean' },
    hub: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
  allowPositionals: true,
  strict: false,
});
if (values.help || positionals.length !== 1) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}
const settings = settingsOrExit('negotiate');
const token = settings.token;
let hubUrl = typeof values.hub === 'string' ? values.hub : undefined;
hubUrl ??= (await fleetOrExit('negotiate', settings)).hub.url;

const customer = positionals[0]!;
const body = {
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: {
    message: {
      messageId: crypto.randomUUID(),
      role: 'ROLE_USER',
      parts: [
        {
          data: {
            skill: 'negotiation.start',
            args: { customer, ...(values.model ? { model: true } : {}) },
          },
        },
      ],
    },
  },
};
let answer: {
  result?: {
    task?: {
      status: { state: string; message?: { parts: unknown[] } };
      artifacts?: { parts: { data?: unknown }[] }[];
    };
  };
  error?: { message: string };
};
try {
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const res = await fetch(`${hubUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...auth },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10 * 60_000),
  });
  answer = await res.json();
} catch {
  console.error(
    `negotiate: the hub at ${hubUrl} did not answer; start the fleet with bun run start`,
  );
  process.exit(1);
}
const task = answer.result?.task;
const record = task?.artifacts?.[0]?.parts.find((p) => p.data !== undefined)?.data as
  | Negotiation
  | undefined;
if (task?.status.state !== 'TASK_STATE_COMPLETED' || !record) {
  const failure = task?.status.message ? codedFailureOf(task.status.message.parts) : undefined;
  console.error(
    `negotiate: ${failure ? `${failure.code}: ${failure.message}` : (answer.error?.message ?? `the hub answered ${task?.status.state ?? 'no task'}`)}`,
  );
  process.exit(1);
}
for (const line of negotiationLines(
  record,
  `${hubUrl}/api/negotiations/${record.id} (console: ${hubUrl}/#/negotiation)`,
))
  console.log(line);
