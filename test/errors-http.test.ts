/**
 * One way to fail, through real servers on port 0 (hub, crm, scanner and a node whose capability
 * crashes): an unexpected error answers 500 with a generic message and leaves a log line; a
 * caller's mistake answers its 4xx code; a node's own code crosses A2A as data, never as text.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Catalog } from '../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../lib/node/node-types.ts';
import crm from '../node/crm/index.ts';
import scanner from '../node/scanner/index.ts';
import { localInvoke, startFleet, type RunningFleet } from './support/fleet.ts';
import { FIXTURES, msgV1, rpc, TEST_AUTH } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const SECRET = 'detail-only-the-server-knows';
const crashy: NodeDefinition = {
  name: 'crashy',
  description: 'A node whose one capability has a bug.',
  catalog: new Catalog([
    {
      id: 'crashy.boom',
      name: 'Boom',
      description: 'Throws a plain error.',
      tags: ['test'],
      keywords: ['boom'],
      readOnly: true,
      args: {},
      run: () => {
        throw new TypeError(`cannot read ${SECRET}`);
      },
    },
  ]),
};

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet([
    crm({ fixturesDir: FIXTURES }),
    scanner({ fixturesDir: FIXTURES }),
    crashy,
  ]);
});
afterAll(() => f.stop());

/** POST /api/hub as the console would. */
async function hubCall(
  skill: string,
  args: unknown,
): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(`${f.hubUrl}/api/hub`, {
    method: 'POST',
    headers: { Origin: f.hubUrl, 'Content-Type': 'application/json', ...TEST_AUTH },
    body: JSON.stringify({ skill, args }),
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text), text };
}
async function get(path: string): Promise<{ status: number; json: any }> {
  const res = await fetch(f.hubUrl + path);
  return { status: res.status, json: await res.json() };
}
const nodeUrl = (name: string) => f.nodes.get(name)!.url;

describe('an unexpected error', () => {
  test('in a hub capability answers 500 INTERNAL with a generic message and logs a line', async () => {
    // The negotiations folder cannot be made: a file sits where it should be.
    mkdirSync(join(f.dataDir, 'hub'), { recursive: true });
    writeFileSync(join(f.dataDir, 'hub', 'negotiations'), 'not a folder');
    const lines = f.log.lines.length;
    const r = await hubCall('negotiation.start', { customer: 'c-012' });
    expect([r.status, r.json]).toEqual([
      500,
      { ok: false, error: { code: 'INTERNAL', message: 'Internal error' } },
    ]);
    expect([
      r.text.includes(f.dataDir),
      r.text.includes('negotiations'),
      /ENOTDIR|EEXIST|at \//.test(r.text),
    ]).toEqual([false, false, false]);
    expect(
      f.log.lines.slice(lines).filter((l) => l.startsWith('error hub api request failed')),
    ).toEqual(['error hub api request failed {"path":"/api/hub","error":"Error"}']);
  });

  test('in a node capability: the peer call answers 500 without the cause, the hub 502, and the node logs it', async () => {
    const lines = f.log.lines.length;
    const r = await localInvoke(f.hubUrl, { target: 'crashy', capability: 'crashy.boom' });
    expect([r.status, r.json]).toEqual([
      502,
      { ok: false, error: { code: 'PEER_FAILED', message: 'capability failed' } },
    ]);
    expect(JSON.stringify(r.json).includes(SECRET)).toBe(false);
    expect(
      f.log.lines.slice(lines).filter((l) => l.startsWith('error peer invoke crashed')),
    ).toEqual(['error peer invoke crashed {"error":"TypeError"}']);
  });

  test('in a node capability called over A2A: the task fails with a generic note, and the engine logs it', async () => {
    const t = (
      await rpc(nodeUrl('crashy'), 'SendMessage', {
        message: { ...msgV1(''), parts: [{ data: { skill: 'crashy.boom', args: {} } }] },
      })
    ).result.task;
    expect([t.status.state, t.status.message.parts]).toEqual([
      'TASK_STATE_FAILED',
      [{ text: 'The agent failed while handling the message' }],
    ]);
    expect(
      f.log.lines.some((l) => l.startsWith('error agent turn failed') && l.includes(t.id)),
    ).toBe(true);
  });
});

describe("a caller's mistake answers its 4xx code", () => {
  test("on the hub's API, whichever layer found it", async () => {
    const cases: [() => Promise<{ status: number; json: any }>, number, string][] = [
      [() => hubCall('negotiation.start', {}), 400, 'BAD_ARGS'],
      [() => hubCall('no.such-skill', {}), 404, 'UNKNOWN_CAPABILITY'],
      // crm's own code, carried back over A2A as data.
      [() => hubCall('negotiation.start', { customer: 'c-999' }), 400, 'UNKNOWN_CUSTOMER'],
      [() => hubCall('negotiation.start', { customer: 'c-001' }), 400, 'NO_PROFILE'],
      [() => hubCall('entity.resolve', {}), 400, 'ENTITY_BAD_QUERY'],
      [
        () => localInvoke(f.hubUrl, { target: 'crm', capability: 'crm.nothing' }),
        404,
        'UNKNOWN_CAPABILITY',
      ],
      [
        () =>
          localInvoke(f.hubUrl, {
            target: 'scanner',
            capability: 'sector.movement',
            args: { extra: 1 },
          }),
        400,
        'BAD_ARGS',
      ],
      [() => get('/api/negotiations/neg-1'), 404, 'NEGOTIATION_BAD_ID'],
      [() => get('/api/trace?limit=zero'), 400, 'BAD_QUERY'],
    ];
    const seen: unknown[] = [];
    for (const [call, , code] of cases) {
      const r = await call();
      seen.push([code, r.status, r.json.ok, r.json.error?.code]);
    }
    expect(seen).toEqual(cases.map(([, status, code]) => [code, status, false, code]));
  });
});

describe('codes cross A2A as data', () => {
  test('crm fails a task with its code and the argument at fault in a data part; the text is for people only', async () => {
    const t = (
      await rpc(nodeUrl('crm'), 'SendMessage', {
        message: {
          ...msgV1(''),
          parts: [{ data: { skill: 'negotiation.review', args: { customer: 'c-999' } } }],
        },
      })
    ).result.task;
    expect([t.status.state, t.status.message.parts]).toEqual([
      'TASK_STATE_FAILED',
      [
        { text: 'crm has no customer c-999' },
        {
          data: {
            error: {
              code: 'UNKNOWN_CUSTOMER',
              message: 'crm has no customer c-999',
              field: 'customer',
            },
          },
          mediaType: 'application/json',
        },
      ],
    ]);
  });

  test("a negotiation's veto code arrives as data in crm's answer", async () => {
    const proposal = JSON.stringify({
      code: '688981',
      name: 'SMIC',
      sector: 'semiconductors',
      changePct: -6.5,
      signals: ['limit_down_risk'],
    });
    const t = (
      await rpc(nodeUrl('crm'), 'SendMessage', {
        message: {
          ...msgV1(''),
          parts: [{ data: { skill: 'negotiation.review', args: { customer: 'c-014', proposal } } }],
        },
      })
    ).result.task;
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    expect(t.artifacts[0].parts[0]).toEqual({
      data: {
        customer: 'c-014',
        stock: '688981',
        decision: 'veto',
        code: 'TODAY_DROP',
        reason: 'SMIC fell -6.5% today, more than 5%; not a recommendation to open with.',
      },
      mediaType: 'application/json',
    });
  });
});
