/**
 * The negotiation with models on both sides: scanner's advisor and crm's customer agent each ask
 * an OpenAI-compatible model server (port 0, real HTTP, tool calls) for their turns, speaking the
 * same A2A turns and veto codes. One customer reaches a deal, the other ends without one with
 * valid codes; a model's veto without a known code or a reason is refused; a model that fails
 * leaves the turn to the rules, visibly; `bun run negotiate <customer> --model` runs one from the
 * command line and the console's list shows it.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadNode } from '../lib/node/load-node.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { startModelServer, type ChatBody, type ModelServer } from './support/model-server.ts';
import { FIXTURES, tempDir, TEST_AUTH, TEST_TOKEN } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');
/** How the customer's model behaves in the current test. */
let customerModel: 'reasoned' | 'bad-code' | 'no-reason' | 'accept-all' = 'reasoned';

/**
 * The stand-in models. The advisor takes the first candidate it is offered; the customer reads the
 * profile, the proposal and the entity verdict it is given and decides as a careful agent would.
 */
function script(b: ChatBody) {
  const tool = b.tools?.[0]?.function.name;
  const input = JSON.parse(b.messages.find((m) => m.role === 'user')!.content!);
  if (tool === 'propose') {
    const pick = input.candidates[0];
    return {
      calls: [
        {
          name: 'propose',
          args: {
            code: pick.code,
            why: `${pick.name} leads the candidates left after ${input.vetoesSoFar.length} veto(es).`,
          },
        },
      ],
    };
  }
  const { profile, proposal: p, entity, riskBands } = input;
  const veto = (code: string, reason: string) => ({
    calls: [{ name: 'decide', args: { decision: 'veto', code, reason } }],
  });
  if (customerModel === 'bad-code') return veto('TOO_RISKY', 'I do not like it.');
  if (customerModel === 'no-reason') return veto('NO_SIGNAL', '  ');
  if (customerModel === 'accept-all')
    return { calls: [{ name: 'decide', args: { decision: 'accept', reason: 'Looks fine.' } }] };
  if (p.signals.length === 0) return veto('NO_SIGNAL', `${p.name} has no signal to justify it.`);
  if (!entity.confirmed)
    return veto('UNALIGNED_ENTITY', `${p.name} is not confirmed: ${entity.why}.`);
  if (p.changePct < -5) return veto('TODAY_DROP', `${p.name} fell too much today.`);
  if (profile.excludedIndustries.includes(p.sector))
    return {
      calls: [
        {
          name: 'decide',
          args: {
            decision: 'veto',
            code: 'EXCLUDED_INDUSTRY',
            reason: `We hold enough ${p.sector}.`,
            detail: p.sector,
          },
        },
      ],
    };
  const band = riskBands[profile.riskLevel];
  const limit = p.signals.some((s: string) => s === 'limit_up' || s === 'limit_down_risk');
  if (
    (band.maxAbsChangePct !== null && Math.abs(p.changePct) > band.maxAbsChangePct) ||
    (!band.limitFlags && limit)
  )
    return veto('RISK_LEVEL', `${p.name} moves too much for a ${profile.riskLevel}-risk customer.`);
  return {
    calls: [
      { name: 'decide', args: { decision: 'accept', reason: `${p.name} fits the profile.` } },
    ],
  };
}

let model: ModelServer;
let f: RunningFleet;
const dataDir = tempDir('lume-a2a-node-');
beforeAll(async () => {
  model = startModelServer(script);
  const fleetFile = join(FIXTURES, 'fleet.json');
  const setup = {
    fixturesDir: FIXTURES,
    fleetFile,
    dataDir,
    model: { baseUrl: model.baseUrl, model: 'negotiator', apiKey: 'sk-negotiation-secret' },
  };
  f = await startFleet([
    await loadNode('node/scanner/index.ts', setup),
    await loadNode('node/crm/index.ts', setup),
  ]);
});
afterAll(async () => {
  await f.stop();
  model.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** negotiation.start through the hub's API, as the console does. */
async function negotiate(customer: string, withModel = true): Promise<any> {
  const res = await fetch(`${f.hubUrl}/api/hub`, {
    method: 'POST',
    headers: { Origin: f.hubUrl, 'Content-Type': 'application/json', ...TEST_AUTH },
    body: JSON.stringify({
      skill: 'negotiation.start',
      args: { customer, ...(withModel ? { model: true } : {}) },
    }),
  });
  return res.json();
}
const turnsBy = (n: any, agent: string) =>
  n.transcript.filter((t: any) => t.agent === agent && t.round > 0);

describe('both agents model-backed', () => {
  test('c-012 reaches a deal: every turn decided by a model, vetoes with valid codes and reasons', async () => {
    customerModel = 'reasoned';
    const n = (await negotiate('c-012')).result;
    expect([n.agents, n.outcome, n.ended]).toEqual(['model', 'deal', 'accepted']);
    expect(turnsBy(n, 'advisor').every((t: any) => t.answer.decidedBy === 'model')).toBe(true);
    expect(turnsBy(n, 'customer').every((t: any) => t.answer.decidedBy === 'model')).toBe(true);
    expect(n.vetoes.length).toBeGreaterThan(0);
    for (const v of n.vetoes)
      expect([
        'NO_SIGNAL',
        'UNALIGNED_ENTITY',
        'TODAY_DROP',
        'EXCLUDED_INDUSTRY',
        'RISK_LEVEL',
      ]).toContain(v.code);
    expect(n.deal.reason).toBe(`${n.deal.proposal.name} fits the profile.`);
    expect(n.deal.entity.crmId).toMatch(/^c-\d{3}$/);
    // The models were asked over HTTP with their tools, and the key went only into the header.
    const asked = model.requests.filter((r) => r.body.tools);
    expect(new Set(asked.map((r) => r.body.tools![0]!.function.name))).toEqual(
      new Set(['propose', 'decide']),
    );
    expect(asked.every((r) => r.auth === 'Bearer sk-negotiation-secret')).toBe(true);
    expect(JSON.stringify(n)).not.toContain('sk-negotiation-secret');
  });

  test('c-014 ends without a deal, every veto with a valid code and a reason', async () => {
    customerModel = 'reasoned';
    const n = (await negotiate('c-014')).result;
    expect([n.agents, n.outcome]).toEqual(['model', 'no-deal']);
    expect(['max-rounds', 'exhausted']).toContain(n.ended);
    expect(n.vetoes.length).toBe(n.rounds);
    for (const v of n.vetoes) {
      expect([
        'NO_SIGNAL',
        'UNALIGNED_ENTITY',
        'TODAY_DROP',
        'EXCLUDED_INDUSTRY',
        'RISK_LEVEL',
      ]).toContain(v.code);
      expect(v.reason.length).toBeGreaterThan(0);
    }
  });

  test('a model veto with an unknown code, or without a reason, is refused: the negotiation stops with the code', async () => {
    customerModel = 'bad-code';
    const bad = (await negotiate('c-012')).result;
    expect([bad.outcome, bad.ended, bad.error.code]).toEqual([
      'no-deal',
      'failed',
      'MODEL_BAD_TURN',
    ]);
    expect(bad.vetoes).toEqual([]);
    const refused = turnsBy(bad, 'customer')[0];
    expect([refused.ok, refused.error.code]).toEqual([false, 'MODEL_BAD_TURN']);
    expect(refused.error.message).toContain('TOO_RISKY');
    customerModel = 'no-reason';
    const mute = (await negotiate('c-012')).result;
    expect([mute.ended, mute.error.code]).toEqual(['failed', 'MODEL_BAD_TURN']);
    customerModel = 'reasoned';
  });

  test("a model's acceptance is checked against the customer's rules: what they veto stays vetoed, and the turn says so", async () => {
    customerModel = 'accept-all';
    try {
      const n = (await negotiate('c-014')).result;
      expect([n.outcome, n.deal]).toEqual(['no-deal', undefined]);
      expect(n.vetoes.length).toBe(n.rounds);
      const overruled = turnsBy(n, 'customer');
      expect(overruled.length).toBeGreaterThan(0);
      for (const t of overruled)
        expect([t.answer.decision, t.answer.decidedBy, t.answer.modelNote]).toEqual([
          'veto',
          'rules',
          `the model accepted ${t.answer.stock}; the customer's rules veto it (${t.answer.code})`,
        ]);
      // Where the rules find nothing to veto, the model's acceptance stands, in its words.
      const deal = (await negotiate('c-012')).result;
      expect([deal.outcome, deal.deal.proposal.code, deal.deal.reason]).toEqual([
        'deal',
        '002371',
        'Looks fine.',
      ]);
    } finally {
      customerModel = 'reasoned';
    }
  });

  test('a model that does not answer leaves each turn to the rules, and the turn says so', async () => {
    model.down();
    try {
      const n = (await negotiate('c-012')).result;
      expect([n.agents, n.outcome, n.deal.proposal.code]).toEqual(['model', 'deal', '002371']);
      const turns = [...turnsBy(n, 'advisor'), ...turnsBy(n, 'customer')];
      expect(
        turns.every(
          (t: any) =>
            t.answer.decidedBy === 'rules' &&
            t.answer.modelNote === 'MODEL_HTTP: the model endpoint answered HTTP 503',
        ),
      ).toBe(true);
    } finally {
      model.up();
    }
  });

  test('without --model the rules negotiate, as before', async () => {
    const before = model.requests.length;
    const n = (await negotiate('c-012', false)).result;
    expect([n.agents, n.outcome, n.deal.round]).toEqual(['rules', 'deal', 4]);
    expect(model.requests.length).toBe(before);
  });
});

test('without a model, a model negotiation is refused with NO_MODEL and nothing is recorded, from the API and from bun run negotiate', async () => {
  const setup = { fixturesDir: FIXTURES, fleetFile: join(FIXTURES, 'fleet.json'), dataDir };
  const g = await startFleet([
    await loadNode('node/scanner/index.ts', setup),
    await loadNode('node/crm/index.ts', setup),
  ]);
  try {
    const answer = await (
      await fetch(`${g.hubUrl}/api/hub`, {
        method: 'POST',
        headers: { Origin: g.hubUrl, 'Content-Type': 'application/json', ...TEST_AUTH },
        body: JSON.stringify({
          skill: 'negotiation.start',
          args: { customer: 'c-012', model: true },
        }),
      })
    ).json();
    expect([answer.ok, answer.error.code]).toEqual([false, 'NO_MODEL']);
    const proc = Bun.spawn({
      cmd: [
        process.execPath,
        join(ROOT, 'hub/cli/negotiate.ts'),
        'c-012',
        '--model',
        '--hub',
        g.hubUrl,
      ],
      cwd: ROOT,
      env: { ...process.env, LUME_TOKEN: TEST_TOKEN },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [out, err] = [
      await new Response(proc.stdout).text(),
      await new Response(proc.stderr).text(),
    ];
    expect(await proc.exited).toBe(1);
    expect(out).toBe('');
    expect(err.trim()).toMatch(/^negotiate: NO_MODEL: scanner: /);
    const listed = await (
      await fetch(`${g.hubUrl}/api/negotiations`, { headers: TEST_AUTH })
    ).json();
    expect(listed.negotiations ?? listed).toEqual([]);
  } finally {
    await g.stop();
  }
});

test('bun run negotiate <customer> --model runs one from the command line and the console lists it', async () => {
  customerModel = 'reasoned';
  // The command line sends the token in LUME_TOKEN: a negotiation needs a principal.
  const proc = Bun.spawn({
    cmd: [
      process.execPath,
      join(ROOT, 'hub/cli/negotiate.ts'),
      'c-012',
      '--model',
      '--hub',
      f.hubUrl,
    ],
    cwd: ROOT,
    env: { ...process.env, LUME_TOKEN: TEST_TOKEN },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const out = await new Response(proc.stdout).text();
  expect(await proc.exited).toBe(0);
  const lines = out.trim().split('\n');
  const id = /^negotiation (neg-\S+) for .+ \(c-012\), agents: model$/.exec(lines[0]!)![1]!;
  expect(lines[1]).toMatch(/^round 0 customer \(crm\): opens for /);
  expect(lines.some((l) => /^round 1 advisor \(scanner\): proposes .+ \[model\]$/.test(l))).toBe(
    true,
  );
  expect(
    lines.some((l) =>
      /^round \d customer \(crm\): veto (NO_SIGNAL|UNALIGNED_ENTITY|TODAY_DROP|EXCLUDED_INDUSTRY|RISK_LEVEL): .+ \[model\]$/.test(
        l,
      ),
    ),
  ).toBe(true);
  expect(lines.at(-2)).toMatch(/^deal \(accepted\): /);
  expect(lines.at(-1)).toBe(
    `recorded: ${f.hubUrl}/api/negotiations/${id} (console: ${f.hubUrl}/#/negotiation)`,
  );
  // The record is where the console's list reads it.
  expect(readdirSync(join(f.dataDir, 'hub', 'negotiations'))).toContain(`${id}.json`);
  // Listed for the caller who ran it (the token the command used), as the console lists it.
  const listed = (
    await (await fetch(`${f.hubUrl}/api/negotiations`, { headers: TEST_AUTH })).json()
  ).negotiations;
  expect(listed.some((x: any) => x.id === id)).toBe(true);
  // A customer crm does not know: a coded message and exit 1.
  const bad = Bun.spawn({
    cmd: [process.execPath, join(ROOT, 'hub/cli/negotiate.ts'), 'c-999', '--hub', f.hubUrl],
    cwd: ROOT,
    env: { ...process.env, LUME_TOKEN: TEST_TOKEN },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  expect(await bad.exited).toBe(1);
  expect(await new Response(bad.stderr).text()).toStartWith('negotiate: UNKNOWN_CUSTOMER: ');
});
