/**
 * Test support: an OTLP/HTTP JSON receiver on port 0 that keeps every export request, and a strict
 * check of the JSON shape opentelemetry-proto defines for `ExportTraceServiceRequest`.
 */

import { expect } from 'bun:test';

export interface OtlpReceiver {
  url: string;
  /** Every span received, in order. */
  spans: any[];
  requests: { contentType: string | null; body: any }[];
  /** Resolves once `n` spans of trace `traceId` have arrived. */
  waitFor(traceId: string, n: number): Promise<any[]>;
  stop(): void;
}

export function startOtlpReceiver(): OtlpReceiver {
  const spans: any[] = [];
  const requests: { contentType: string | null; body: any }[] = [];
  const waiters: { traceId: string; n: number; resolve: (s: any[]) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const of = spans.filter((s) => s.traceId === w.traceId);
      if (of.length >= w.n) waiters.splice(waiters.indexOf(w), 1), w.resolve(of);
    }
  };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      if (req.method !== 'POST' || new URL(req.url).pathname !== '/v1/traces')
        return new Response('not here', { status: 404 });
      const body = await req.json();
      requests.push({ contentType: req.headers.get('content-type'), body });
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      check();
      return Response.json({});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    requests,
    waitFor: (traceId, n) =>
      new Promise((resolve) => (waiters.push({ traceId, n, resolve }), check())),
    stop: () => server.stop(true),
  };
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const UINT64 = /^(0|[1-9]\d{0,19})$/;
const INT64 = /^-?(0|[1-9]\d{0,18})$/;

function keysWithin(o: object, allowed: string[], where: string): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) throw new Error(`${where}: unexpected field ${k}`);
}

function checkAttributes(attrs: unknown, where: string): void {
  expect(Array.isArray(attrs)).toBe(true);
  const seen = new Set<string>();
  for (const a of attrs as any[]) {
    keysWithin(a, ['key', 'value'], `${where}.attribute`);
    expect(typeof a.key).toBe('string');
    expect(a.key.length).toBeGreaterThan(0);
    expect(seen.has(a.key)).toBe(false);
    seen.add(a.key);
    const kinds = Object.keys(a.value);
    expect(kinds.length).toBe(1);
    const [kind] = kinds as [string];
    const v = a.value[kind];
    if (kind === 'stringValue') expect(typeof v).toBe('string');
    else if (kind === 'intValue')
      expect(INT64.test(v)).toBe(true); // int64 is a decimal string in the JSON mapping
    else if (kind === 'boolValue') expect(typeof v).toBe('boolean');
    else if (kind === 'doubleValue') expect(typeof v).toBe('number');
    else if (kind === 'arrayValue') {
      keysWithin(v, ['values'], `${where}.arrayValue`);
      for (const x of v.values) expect(typeof x.stringValue).toBe('string');
    } else throw new Error(`${where}: unexpected attribute value kind ${kind}`);
  }
}

/** Fails unless `body` is an ExportTraceServiceRequest in the OTLP JSON mapping, with nothing else in it. */
export function checkOtlpRequest(body: any): void {
  keysWithin(body, ['resourceSpans'], 'request');
  expect(Array.isArray(body.resourceSpans)).toBe(true);
  for (const rs of body.resourceSpans) {
    keysWithin(rs, ['resource', 'scopeSpans', 'schemaUrl'], 'resourceSpans');
    keysWithin(rs.resource, ['attributes', 'droppedAttributesCount'], 'resource');
    checkAttributes(rs.resource.attributes, 'resource');
    expect(
      rs.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue,
    ).toEqual(expect.any(String));
    for (const ss of rs.scopeSpans) {
      keysWithin(ss, ['scope', 'spans', 'schemaUrl'], 'scopeSpans');
      keysWithin(ss.scope, ['name', 'version', 'attributes'], 'scope');
      expect(typeof ss.scope.name).toBe('string');
      for (const s of ss.spans) {
        keysWithin(
          s,
          [
            'traceId',
            'spanId',
            'parentSpanId',
            'traceState',
            'name',
            'kind',
            'startTimeUnixNano',
            'endTimeUnixNano',
            'attributes',
            'status',
            'flags',
          ],
          'span',
        );
        expect(HEX32.test(s.traceId) && s.traceId !== '0'.repeat(32)).toBe(true);
        expect(HEX16.test(s.spanId) && s.spanId !== '0'.repeat(16)).toBe(true);
        if (s.parentSpanId !== undefined) expect(HEX16.test(s.parentSpanId)).toBe(true);
        expect(typeof s.name).toBe('string');
        expect(s.name.length).toBeGreaterThan(0);
        expect([0, 1, 2, 3, 4, 5]).toContain(s.kind);
        expect(UINT64.test(s.startTimeUnixNano) && UINT64.test(s.endTimeUnixNano)).toBe(true);
        expect(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano)).toBe(true);
        // A time in nanoseconds since 1970: 19 digits for any date of this century.
        expect(s.startTimeUnixNano.length).toBe(19);
        checkAttributes(s.attributes, 'span');
        keysWithin(s.status, ['code', 'message'], 'status');
        expect([0, 1, 2]).toContain(s.status.code);
        if (s.status.message !== undefined) expect(typeof s.status.message).toBe('string');
      }
    }
  }
}

/** The value of a span's attribute, whatever its kind. */
export const attr = (span: any, key: string): unknown => {
  const v = span.attributes.find((a: any) => a.key === key)?.value;
  if (v?.arrayValue) return v.arrayValue.values.map((x: any) => x.stringValue);
  return v === undefined ? undefined : Object.values(v)[0];
};
