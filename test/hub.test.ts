/**
 * The hub's read side against a real fleet on port 0: aggregation in /api/fleet, fleet.invoke's
 * trace (paged, filtered, live over SSE), /api/local-invoke and its refusals, the hub's own card
 * and A2A answers, and a node killed mid-test showing offline and as failed calls.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Catalog } from '../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../lib/node/node-types.ts';
import scanner from '../node/scanner/index.ts';
import { localInvoke, startFleet, type RunningFleet } from './support/fleet.ts';
import { FIXTURES, msgV1, rpc, sseFrames } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const peerOnly: NodeDefinition = {
  name: 'gauge',
  description: 'A peer-only test node',
  a2a: false,
  catalog: new Catalog([
    {
      id: 'gauge.read',
      name: 'Read',
      description: 'A reading',
      tags: ['test'],
      keywords: ['gauge'],
      readOnly: true,
      args: {},
      run: () => ({ value: 42 }),
    },
    {
      id: 'gauge.empty',
      name: 'Empty',
      description: 'Nothing',
      tags: ['test'],
      keywords: [],
      readOnly: true,
      args: {},
      run: () => ({ items: [] }),
    },
  ]),
};
const doomed: NodeDefinition = {
  name: 'doomed',
  description: 'A node the test stops',
  catalog: new Catalog([
    {
      id: 'doomed.ping',
      name: 'Ping',
      description: 'pong',
      tags: ['test'],
      keywords: ['ping'],
      readOnly: true,
      args: {},
      run: () => ({ pong: true }),
    },
  ]),
};

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet([scanner({ fixturesDir: FIXTURES }), peerOnly, doomed]);
});
afterAll(() => f.stop());

describe('/api/fleet', () => {
  test('aggregates every node: kind, online, latency, agent-backed, skills', async () => {
    const snap = await (await fetch(`${f.hubUrl}/api/fleet`)).json();
    expect(snap.hub).toBe('a2a');
    expect(snap.nodes.map((n: any) => [n.name, n.kind, n.online, n.agentBacked])).toEqual([
      ['scanner', 'a2a', true, false],
      ['gauge', 'peer', true, false],
      ['doomed', 'a2a', true, false],
    ]);
    expect(snap.nodes[0].skills.map((s: any) => s.id)).toContain('sector.movement');
    expect(snap.nodes[0].protocolVersions).toEqual(['1.0', '0.3']);
    expect(snap.nodes.every((n: any) => typeof n.latencyMs === 'number')).toBe(true);
  });
});

describe('fleet.invoke and the trace', () => {
  test('every call is traced: ok, empty and failed, with codes and bytes; pages and filters work', async () => {
    const ok = await localInvoke(f.hubUrl, { target: 'gauge', capability: 'gauge.read' });
    expect(ok).toEqual({ status: 200, json: { ok: true, result: { value: 42 } } });
    const empty = await localInvoke(f.hubUrl, { target: 'gauge', capability: 'gauge.empty' });
    expect(empty.json).toEqual({ ok: true, result: { items: [] } });
    const failed = await localInvoke(f.hubUrl, { target: 'gauge', capability: 'gauge.missing' });
    // The caller named a capability the node does not offer: its mistake, answered 404.
    expect([failed.status, failed.json.error.code]).toEqual([404, 'UNKNOWN_CAPABILITY']);

    const page = await (await fetch(`${f.hubUrl}/api/trace?to=gauge&limit=2`)).json();
    expect(
      page.records.map((r: any) => [r.from, r.to, r.capability, r.outcome, r.errorCode]),
    ).toEqual([
      ['a2a', 'gauge', 'gauge.missing', 'failed', 'UNKNOWN_CAPABILITY'],
      ['a2a', 'gauge', 'gauge.empty', 'empty', null],
    ]);
    const next = await (
      await fetch(`${f.hubUrl}/api/trace?to=gauge&limit=2&before=${page.nextBefore}`)
    ).json();
    // Bytes: the node's answer as it was read, envelope included.
    expect(next.records.map((r: any) => [r.capability, r.outcome, r.bytes])).toEqual([
      ['gauge.read', 'ok', JSON.stringify({ ok: true, result: { value: 42 } }).length],
    ]);
    expect(next.nextBefore).toBeNull();
    const failures = await (
      await fetch(`${f.hubUrl}/api/trace?outcome=failed&capability=gauge.missing`)
    ).json();
    expect(failures.records).toHaveLength(1);
  });

  test('the live stream pushes each new record', async () => {
    const ctl = new AbortController();
    const frames = sseFrames(await fetch(`${f.hubUrl}/api/trace/stream`, { signal: ctl.signal }));
    const first = frames.next();
    await localInvoke(f.hubUrl, { target: 'scanner', capability: 'scanner.status' });
    const rec = (await first).value;
    expect([rec.to, rec.capability, rec.outcome]).toEqual(['scanner', 'scanner.status', 'ok']);
    ctl.abort();
  });

  test('bad trace queries are refused with a code', async () => {
    for (const q of [
      'limit=0',
      'limit=x',
      'before=-1',
      'outcome=great',
      'to=../x',
      'capability=%20',
      'nope=1',
    ]) {
      const res = await fetch(`${f.hubUrl}/api/trace?${q}`);
      expect([q, res.status, (await res.json()).error.code]).toEqual([q, 400, 'BAD_QUERY']);
    }
  });
});

describe('/api/local-invoke refusals', () => {
  test('cross-origin, anonymous, URLs, unknown targets and malformed bodies change nothing', async () => {
    const before = (await (await fetch(`${f.hubUrl}/api/trace?limit=500`)).json()).records.length;
    const cases: [unknown, Record<string, string>, number, string][] = [
      [
        { target: 'scanner', capability: 'scanner.status' },
        { Origin: 'http://evil.example' },
        403,
        'FORBIDDEN_ORIGIN',
      ],
      [{ target: 'http://127.0.0.1:9/x', capability: 'scanner.status' }, {}, 400, 'BAD_REQUEST'],
      [{ target: '../scanner', capability: 'scanner.status' }, {}, 400, 'BAD_REQUEST'],
      [{ target: 'ghost', capability: 'scanner.status' }, {}, 404, 'UNKNOWN_TARGET'],
      [{ target: 'a2a', capability: 'sector.movement' }, {}, 404, 'UNKNOWN_TARGET'],
      [{ target: 'scanner', capability: 'x' }, {}, 400, 'BAD_REQUEST'],
      [{ target: 'scanner', capability: 'scanner.status', args: [1] }, {}, 400, 'BAD_REQUEST'],
      ['{not json', {}, 400, 'BAD_REQUEST'],
      [[1, 2], {}, 400, 'BAD_REQUEST'],
      [
        { target: 'scanner', capability: 'scanner.status', args: { pad: 'x'.repeat(70_000) } },
        {},
        413,
        'TOO_LARGE',
      ],
      [
        { target: 'scanner', capability: 'scanner.status' },
        { 'Content-Type': 'text/plain' },
        415,
        'NOT_JSON',
      ],
      // The hub signs this call as itself: never for an anonymous caller, even from its own page.
      [
        { target: 'scanner', capability: 'scanner.status' },
        { Authorization: '' },
        401,
        'UNAUTHENTICATED',
      ],
    ];
    for (const [body, headers, status, code] of cases) {
      const r = await localInvoke(f.hubUrl, body, headers);
      expect([status, code]).toEqual([r.status, r.json.error.code]);
    }
    const noOrigin = await fetch(`${f.hubUrl}/api/local-invoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"target":"scanner","capability":"scanner.status"}',
    });
    expect([noOrigin.status, (await noOrigin.json()).error.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect((await (await fetch(`${f.hubUrl}/api/trace?limit=500`)).json()).records.length).toBe(
      before,
    );
  });
});

describe('the hub as an A2A node', () => {
  test('its card declares the five fleet capabilities', async () => {
    const card = await (await fetch(`${f.hubUrl}/.well-known/agent-card.json`)).json();
    expect(card.name).toBe('a2a');
    expect(card.skills.map((s: any) => s.id)).toEqual(
      expect.arrayContaining([
        'customer.reach',
        'entity.resolve',
        'node.capabilities',
        'sector.movement',
        'task.delegate',
      ]),
    );
    expect(card.url).toBe(`${f.hubUrl}/a2a`);
  });

  test('serves the HTTP+JSON binding through its node, beside /api/* (which it does not shadow)', async () => {
    const headers = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
    const sent = await (
      await fetch(`${f.hubUrl}/message:send`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: msgV1('which sector moved most?') }),
      })
    ).json();
    expect(sent.task.status.state).toBe('TASK_STATE_COMPLETED');
    const got = await (
      await fetch(`${f.hubUrl}/tasks/${sent.task.id}?historyLength=0`, { headers })
    ).json();
    expect([got.id, got.status.state]).toEqual([sent.task.id, 'TASK_STATE_COMPLETED']);
    expect((await fetch(`${f.hubUrl}/api/fleet`)).status).toBe(200);
  });

  test('a text question is planned across the fleet and answered through fleet.invoke', async () => {
    const t = (await rpc(f.hubUrl, 'SendMessage', { message: msgV1('which sector moved most?') }))
      .result.task;
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    const answer = t.artifacts[0].parts[0].data;
    expect([answer.answered, answer.plannedBy]).toEqual([true, 'keywords']);
    expect(answer.facts.map((x: any) => [x.node, x.tool])).toEqual([
      ['scanner', 'sector.movement'],
    ]);
    expect(answer.facts[0].result.sectors[0].sector).toBe('robotics');
    const rec = (await (await fetch(`${f.hubUrl}/api/trace?to=scanner&limit=1`)).json()).records[0];
    expect([rec.id, rec.capability, rec.outcome]).toEqual([
      answer.facts[0].traceId,
      'sector.movement',
      'ok',
    ]);
  });

  test("a capability whose node is missing fails with the node's code", async () => {
    // This fleet has no crm: entity.resolve cannot read the companies.
    const t = (
      await rpc(f.hubUrl, 'SendMessage', {
        message: {
          ...msgV1(''),
          parts: [{ data: { skill: 'entity.resolve', args: { code: '688981' } } }],
        },
      })
    ).result.task;
    expect(t.status.state).toBe('TASK_STATE_FAILED');
    // The code travels as data beside the text, never inside it.
    expect(t.status.message.parts).toEqual([
      { text: 'crm crm.companies: target is not a fleet node' },
      {
        data: {
          error: {
            code: 'ENTITY_SOURCE_FAILED',
            message: 'crm crm.companies: target is not a fleet node',
          },
        },
        mediaType: 'application/json',
      },
    ]);
  });
});

describe('a node going away', () => {
  test('shows offline in /api/fleet and as failed calls in the trace; the hub keeps serving', async () => {
    expect(
      (await localInvoke(f.hubUrl, { target: 'doomed', capability: 'doomed.ping' })).json.ok,
    ).toBe(true);
    await f.kill('doomed');
    const r = await localInvoke(f.hubUrl, { target: 'doomed', capability: 'doomed.ping' });
    expect([r.status, r.json.error.code]).toEqual([502, 'PEER_UNREACHABLE']);
    const snap = await (await fetch(`${f.hubUrl}/api/fleet`)).json();
    const doomedNode = snap.nodes.find((n: any) => n.name === 'doomed');
    expect([doomedNode.online, doomedNode.error.code]).toEqual([false, 'NODE_UNREACHABLE']);
    const trace = (await (await fetch(`${f.hubUrl}/api/trace?to=doomed`)).json()).records;
    expect(trace.map((t: any) => [t.outcome, t.errorCode])).toEqual([
      ['failed', 'PEER_UNREACHABLE'],
      ['ok', null],
    ]);
    expect((await fetch(`${f.hubUrl}/api/fleet`)).status).toBe(200);
  });
});

describe('customer.reach', () => {
  test("joins the scanner's rising sectors with crm's open customers, through two traced calls", async () => {
    const { default: crm } = await import('../node/crm/index.ts');
    const g = await startFleet([
      scanner({ fixturesDir: FIXTURES }),
      crm({ fixturesDir: FIXTURES }),
    ]);
    try {
      const t = (
        await rpc(g.hubUrl, 'SendMessage', {
          message: { ...msgV1(''), parts: [{ data: { skill: 'customer.reach', args: {} } }] },
        })
      ).result.task;
      expect(t.status.state).toBe('TASK_STATE_COMPLETED');
      const recs = t.artifacts[0].parts[0].data.recommendations;
      expect(recs.length).toBeGreaterThan(0);
      expect(recs.every((r: any) => r.avgChangePct > 0 && r.openCustomers > 0)).toBe(true);
      expect(recs.map((r: any) => r.avgChangePct)).toEqual(
        [...recs.map((r: any) => r.avgChangePct)].sort((a: number, b: number) => b - a),
      );
      const trace = (await (await fetch(`${g.hubUrl}/api/trace`)).json()).records;
      expect(trace.map((r: any) => [r.to, r.capability]).reverse()).toEqual([
        ['scanner', 'sector.movement'],
        ['crm', 'crm.industries'],
      ]);
    } finally {
      await g.stop();
    }
  });
});
