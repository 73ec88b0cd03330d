/**
 * W3C trace context across real servers: a call through the hub to a node that calls another node
 * through the hub leaves three trace records of one trace with parent links, the nodes see the
 * context, a malformed `traceparent` starts a new trace, and the hub exports the records as OTLP
 * JSON to a receiver this test runs.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Catalog, type Capability } from '../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../lib/node/node-types.ts';
import { createPeerClient, type PeerClient } from '../lib/peer/client.ts';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import {
  childContext,
  currentTrace,
  parseTraceparent,
  parseTracestate,
  withTrace,
  type TraceContext,
} from '../lib/telemetry/trace-context.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { attr, checkOtlpRequest, startOtlpReceiver, type OtlpReceiver } from './support/otlp.ts';
import { TEST_AUTH } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

/** The context each node's capability ran in, by capability. */
const seen = new Map<string, TraceContext | undefined>();
let xClient: PeerClient;

const cap = (id: string, run: (args: Record<string, unknown>) => unknown): Capability =>
  ({
    id,
    name: id,
    description: id,
    tags: ['test'],
    keywords: [id],
    readOnly: true,
    args: { word: { type: 'string', description: 'a word' } },
    run: async (args: Record<string, unknown>) => {
      seen.set(id, currentTrace());
      return run(args);
    },
  }) as unknown as Capability;

const y: NodeDefinition = {
  name: 'y',
  description: 'answers',
  catalog: new Catalog([cap('y.echo', (a) => ({ echo: a.word ?? null }))]),
};
const x: NodeDefinition = {
  name: 'x',
  description: 'asks y',
  catalog: new Catalog([
    // Through the hub: a relay the hub forwards to y.
    cap('x.chain', async (a) => {
      const r = await xClient.peerRelay('a2a', ['y'], 'y.echo', { word: a.word });
      return r.ok ? r.result : { failed: r.error.code };
    }),
    // Straight to y: nothing records it, the context goes on as x received it.
    cap('x.direct', async (a) => {
      const r = await xClient.peerFetch('y', 'y.echo', { word: a.word });
      return r.ok ? r.result : { failed: r.error.code };
    }),
  ]),
};

let f: RunningFleet;
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = startOtlpReceiver();
  f = await startFleet([x, y], {
    hub: {
      otlp: {
        url: `${receiver.url}/v1/traces`,
        headers: {},
        serviceName: 'lume-test-hub',
        delayMs: 5,
      },
    },
  });
  xClient = createPeerClient({
    signer: (await loadPeerIdentity(f.dataDir, 'x')).signer,
    fleet: f.fleet,
  });
});
afterAll(async () => {
  await f.stop();
  receiver.stop();
});

/** The console's local-invoke, with extra headers. */
async function localInvoke(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${f.hubUrl}/api/local-invoke`, {
    method: 'POST',
    headers: { origin: f.hubUrl, 'content-type': 'application/json', ...TEST_AUTH, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const traceOf = async (traceId: string) =>
  ((await (await fetch(`${f.hubUrl}/api/trace?traceId=${traceId}`)).json()) as any)
    .records as any[];

describe('traceparent through the hub and a relay', () => {
  test("three records share the caller's trace id, each the parent of the next", async () => {
    const r = await localInvoke(
      { target: 'x', capability: 'x.chain', args: { word: 'hello' } },
      {
        traceparent: `00-${TRACE}-${CALLER_SPAN}-01`,
        tracestate: 'vendor=abc,other=1',
      },
    );
    expect(r).toEqual({ status: 200, body: { ok: true, result: { echo: 'hello' } } });

    const records = await traceOf(TRACE);
    expect(records).toHaveLength(3);
    const hubToX = records.find((t) => t.to === 'x')!;
    const xToHub = records.find((t) => t.from === 'x')!;
    const hubToY = records.find((t) => t.to === 'y')!;
    expect(hubToX).toMatchObject({
      from: 'a2a',
      capability: 'x.chain',
      outcome: 'ok',
      traceId: TRACE,
      parentSpanId: CALLER_SPAN,
    });
    expect(xToHub).toMatchObject({
      to: 'a2a',
      capability: 'relay:y.echo',
      outcome: 'ok',
      traceId: TRACE,
      parentSpanId: hubToX.spanId,
    });
    expect(hubToY).toMatchObject({
      from: 'a2a',
      capability: 'y.echo',
      outcome: 'ok',
      traceId: TRACE,
      parentSpanId: xToHub.spanId,
    });
    const spans = records.map((t) => t.spanId);
    expect(new Set(spans).size).toBe(3);
    for (const s of spans) expect(s).toMatch(/^[0-9a-f]{16}$/);
    expect(spans).not.toContain(CALLER_SPAN);

    // Each node ran inside the span of the call that reached it; the tracestate went along.
    expect(seen.get('x.chain')).toEqual({
      traceId: TRACE,
      spanId: hubToX.spanId,
      flags: '01',
      state: 'vendor=abc,other=1',
    });
    expect(seen.get('y.echo')).toEqual({
      traceId: TRACE,
      spanId: hubToY.spanId,
      flags: '01',
      state: 'vendor=abc,other=1',
    });
  });

  test('the hub exports those records to the OTLP receiver as valid OTLP JSON', async () => {
    const spans = await receiver.waitFor(TRACE, 3);
    for (const req of receiver.requests) {
      expect(req.contentType).toBe('application/json');
      checkOtlpRequest(req.body);
    }
    expect(receiver.requests[0]!.body.resourceSpans[0].resource.attributes).toContainEqual({
      key: 'service.name',
      value: { stringValue: 'lume-test-hub' },
    });
    const records = await traceOf(TRACE);
    for (const rec of records) {
      const span = spans.find((s) => s.spanId === rec.spanId);
      expect(span).toMatchObject({
        traceId: TRACE,
        parentSpanId: rec.parentSpanId,
        name: rec.capability,
        status: { code: 0 },
      });
      // The hub made the calls to x and y (CLIENT) and served x's relay (SERVER).
      expect(span.kind).toBe(rec.to === 'a2a' ? 2 : 3);
      expect(attr(span, 'rpc.method')).toBe(rec.capability);
      expect(attr(span, 'peer.service')).toBe(rec.to === 'a2a' ? rec.from : rec.to);
      expect(attr(span, 'lume.outcome')).toBe('ok');
      const start = BigInt(span.startTimeUnixNano);
      expect(start / 1_000_000n).toBe(BigInt(Date.parse(rec.ts)));
    }
  });

  test('a failed call is a record with its code and an ERROR span', async () => {
    const trace = childContext().traceId;
    const r = await localInvoke(
      { target: 'y', capability: 'y.nothing' },
      { traceparent: `00-${trace}-${CALLER_SPAN}-01` },
    );
    expect(r.status).toBeGreaterThanOrEqual(400);
    const [rec] = await traceOf(trace);
    expect(rec).toMatchObject({
      outcome: 'failed',
      errorCode: r.body.error.code,
      parentSpanId: CALLER_SPAN,
    });
    const [span] = await receiver.waitFor(trace, 1);
    expect(span.status).toEqual({ code: 2, message: r.body.error.code });
    expect(attr(span, 'lume.error_code')).toBe(r.body.error.code);
  });

  test('a node that records nothing passes the context on unchanged', async () => {
    const trace = childContext().traceId;
    const r = await localInvoke(
      { target: 'x', capability: 'x.direct', args: { word: 'straight' } },
      { traceparent: `00-${trace}-${CALLER_SPAN}-00` },
    );
    expect(r.body).toEqual({ ok: true, result: { echo: 'straight' } });
    const records = await traceOf(trace);
    expect(records).toHaveLength(1);
    expect(seen.get('x.direct')).toEqual({
      traceId: trace,
      spanId: records[0].spanId,
      flags: '00',
    });
    // y hangs under the hub's call to x, the last span anyone recorded.
    expect(seen.get('y.echo')).toEqual({ traceId: trace, spanId: records[0].spanId, flags: '00' });
  });

  test('fleet.message (A2A) carries the context to the node and records the call', async () => {
    const parent = childContext();
    const r = await withTrace(parent, () =>
      f.hub.invoker.message('y', 'y.echo', { word: 'by a2a' }, { contextId: 'ctx-trace-1' }),
    );
    expect(r).toMatchObject({ ok: true, result: { echo: 'by a2a' } });
    const [rec] = await traceOf(parent.traceId);
    expect(rec).toMatchObject({
      from: 'a2a',
      to: 'y',
      capability: 'y.echo',
      parentSpanId: parent.spanId,
    });
    expect(seen.get('y.echo')).toMatchObject({ traceId: parent.traceId, spanId: rec.spanId });
  });
});

describe('a malformed traceparent starts a new trace and is never an error', () => {
  const good = `00-${TRACE}-${CALLER_SPAN}-01`;
  const malformed = [
    `01-${TRACE}-${CALLER_SPAN}-01`, // another version
    `ff-${TRACE}-${CALLER_SPAN}-01`,
    `00-${TRACE.toUpperCase()}-${CALLER_SPAN}-01`, // upper case
    `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`, // all-zero trace id
    `00-${TRACE}-${'0'.repeat(16)}-01`, // all-zero span id
    `00-${TRACE.slice(1)}-${CALLER_SPAN}-01`, // short
    `00-${TRACE}-${CALLER_SPAN}0-01`, // long
    `${good}-extra`,
    `${good},${good}`, // two headers joined
    ` ${good}x`,
    `00_${TRACE}_${CALLER_SPAN}_01`,
    'not a header at all',
  ];

  test('parseTraceparent accepts only version 00 in its exact form', () => {
    expect(parseTraceparent(good)).toEqual({ traceId: TRACE, spanId: CALLER_SPAN, flags: '01' });
    for (const bad of [...malformed, '', null, undefined])
      expect([bad, parseTraceparent(bad)]).toEqual([bad, undefined]);
  });

  test('parseTracestate keeps well-formed lists and drops the rest', () => {
    expect(parseTracestate('a=1, b@c=2 ,,d=x y')).toBe('a=1,b@c=2,d=x y');
    for (const bad of [
      '=1',
      'A=1',
      'a=1,a=2',
      'a=',
      'a=b,c',
      `a=${'x'.repeat(300)}`,
      Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','),
    ])
      expect([bad, parseTracestate(bad)]).toEqual([bad, undefined]);
  });

  test('each malformed header: the call succeeds in a fresh trace with no parent', async () => {
    for (const header of malformed) {
      const r = await localInvoke(
        { target: 'y', capability: 'y.echo', args: { word: 'w' } },
        { traceparent: header },
      );
      expect([header, r.status]).toEqual([header, 200]);
      const [rec] = ((await (await fetch(`${f.hubUrl}/api/trace?limit=1`)).json()) as any).records;
      expect([header, rec.traceId === TRACE, rec.parentSpanId]).toEqual([header, false, null]);
      expect(rec.traceId).toMatch(/^[0-9a-f]{32}$/);
    }
  });

  test('/api/trace refuses a malformed traceId filter with a coded 400', async () => {
    const res = await fetch(`${f.hubUrl}/api/trace?traceId=XYZ`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe('BAD_QUERY');
  });
});
