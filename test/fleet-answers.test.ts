/**
 * Another node's answer is untrusted input: impostor scanner, crm and resolve nodes on port 0
 * answer in the wrong shape, and the hub turns each answer into a coded failure (NODE_BAD_ANSWER)
 * instead of crashing, through its HTTP API and over A2A; the checks accept what the real nodes
 * answer and refuse broken variants of it.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { capability } from '../lib/catalog/capability.ts';
import { defineNode } from '../lib/node/define-node.ts';
import { loadCatalog } from '../hub/workbench/ask-catalog.ts';
import {
  isIndustriesAnswer,
  isJobStatus,
  isMovementAnswer,
  isWireDescriptor,
} from '../hub/workbench/fleet-answers.ts';
import crm from '../node/crm/index.ts';
import scanner from '../node/scanner/index.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { FIXTURES, msgV1, rpc } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

/** A node named like a fleet node whose capabilities answer `answers[id]`, whatever was asked. */
const anyText = { type: 'string', description: 'anything' } as const;
const impostor = (name: string, answers: Record<string, unknown>) =>
  defineNode(() => ({
    name,
    description: `An impostor ${name} that answers in the wrong shape.`,
    capabilities: Object.entries(answers).map(([id, answer]) =>
      capability({
        id,
        name: id,
        description: 'answers in the wrong shape',
        tags: ['test'],
        keywords: [],
        readOnly: true,
        args: { prompt: anyText, recipe: anyText },
        run: () => answer,
      }),
    ),
  }))();

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet([
    impostor('scanner', {
      'sector.movement': {
        asOf: '2025-06-03',
        sectors: [{ sector: 'banking', name: 'Banking', avgChangePct: 'up' }],
      },
    }),
    impostor('crm', { 'crm.industries': { industries: 'many' } }),
    impostor('resolve', { 'exec.submit': { job: 7 }, 'resolve.catalog': { nodes: 'all' } }),
  ]);
});
afterAll(() => f.stop());

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${f.hubUrl}${path}`, {
    method: 'POST',
    headers: { Origin: f.hubUrl, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};

describe('a malformed answer from another node', () => {
  test('is NODE_BAD_ANSWER (502) naming the node on the hub API, and the hub stays up', async () => {
    for (const skill of ['sector.movement', 'customer.reach']) {
      const r = await post('/api/hub', { skill });
      expect([skill, r.status, r.json.ok, r.json.error.code]).toEqual([
        skill,
        502,
        false,
        'NODE_BAD_ANSWER',
      ]);
      expect(r.json.error.message).toContain('scanner sector.movement');
    }
    expect((await fetch(`${f.hubUrl}/api/fleet`)).status).toBe(200);
  });

  test('leaves a delegation waiting for input with the code, and the catalog unavailable with it', async () => {
    const t = (
      await rpc(f.hubUrl, 'SendMessage', {
        message: {
          ...msgV1(''),
          parts: [{ data: { skill: 'task.delegate', args: { prompt: 'fleet report' } } }],
        },
      })
    ).result.task;
    expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(t.status.message.parts[0].text).toContain('NODE_BAD_ANSWER');
    expect(await loadCatalog(f.hub.invoker)).toEqual({
      error: 'the fleet catalog (resolve.catalog) is unavailable: NODE_BAD_ANSWER',
    });
  });
});

describe('the checks', () => {
  test('accept what the real nodes answer and refuse broken variants', () => {
    const scan = scanner({ fixturesDir: FIXTURES }).catalog;
    const book = crm({ fixturesDir: FIXTURES }).catalog;
    const movement = scan.find('sector.movement')!.run({});
    const industries = book.find('crm.industries')!.run({});
    expect([isMovementAnswer(movement), isIndustriesAnswer(industries)]).toEqual([true, true]);
    expect(scan.descriptors().every(isWireDescriptor)).toBe(true);
    const broken = [
      null,
      [],
      'text',
      {},
      { asOf: 1, sectors: [] },
      { asOf: 'd', sectors: [{ sector: 'x', name: 'X', avgChangePct: 1 }] },
    ];
    expect(broken.filter(isMovementAnswer)).toEqual([]);
    expect(
      [
        { industries: [{ industry: 'x', customers: 1, followUp: { new: '2' } }] },
        { industries: null },
      ].filter(isIndustriesAnswer),
    ).toEqual([]);
    expect(
      [
        { ...scan.descriptors()[0], readOnly: 'yes' },
        { ...scan.descriptors()[0], args: { x: { type: 'date', description: 'd' } } },
      ].filter(isWireDescriptor),
    ).toEqual([]);
    expect([{}, { job: { job_id: 'j1', state: 'running' } }].every(isJobStatus)).toBe(true);
    expect(
      [{ job: { job_id: 'j1', state: 'paused' } }, { job: { state: 'running' } }, null].filter(
        isJobStatus,
      ),
    ).toEqual([]);
  });
});
