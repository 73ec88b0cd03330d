/**
 * @module lib/fleet/otlp — exports spans (the hub's trace records, every process's A2A operations) as OTLP/HTTP JSON (opentelemetry-proto's JSON
 * mapping: lowerCamelCase fields, hex trace and span ids, 64-bit times as decimal strings, enums
 * as numbers) to `<endpoint>/v1/traces`, with no SDK. Records wait in a bounded queue and go out
 * in batches, one request at a time, each with a deadline; past the bound they are dropped and
 * counted. A collector that fails loses that batch (counted), never stops or slows a call.
 */

import type { Log } from '../log.ts';
import { silentLog } from '../log.ts';
import type { OtelSpan, SpanSink, SpanValue } from '../telemetry/a2a-span.ts';

export interface OtlpConfig {
  /** Full URL spans are posted to (`<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`). */
  url: string;
  /** Batching (OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_EXPORT_TIMEOUT). */
  delayMs?: number;
  maxQueue?: number;
  maxBatch?: number;
  timeoutMs?: number;
  /** Extra request headers (OTEL_EXPORTER_OTLP_HEADERS, e.g. a collector's key): sent, never logged. */
  headers: Record<string, string>;
  /** `service.name` of the resource (OTEL_SERVICE_NAME). */
  serviceName?: string;
}

/**
 * Reads the exporter settings from an environment (called by entry files only): undefined when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or the traces-only OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as is)
 * is not set, a message when a value is malformed.
 */
export function otlpConfigFromEnv(
  env: Record<string, string | undefined>,
): { ok: true; value: OtlpConfig | undefined } | { ok: false; message: string } {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const tracesOnly = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (!base && !tracesOnly) return { ok: true, value: undefined };
  const url = tracesOnly || `${base!.replace(/\/+$/, '')}/v1/traces`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { ok: false, message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' };
  const headers: Record<string, string> = {};
  for (const pair of (env.OTEL_EXPORTER_OTLP_HEADERS ?? '').split(',')) {
    if (!pair.trim()) continue;
    const eq = pair.indexOf('=');
    const key = eq > 0 ? pair.slice(0, eq).trim() : '';
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(key))
      return {
        ok: false,
        message: 'OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas',
      };
    headers[key] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  const serviceName = env.OTEL_SERVICE_NAME?.trim();
  const value: OtlpConfig = { url: parsed.href, headers, ...(serviceName ? { serviceName } : {}) };
  // The batch span processor's standard settings, each a positive integer when set.
  const numbers = [
    ['OTEL_BSP_SCHEDULE_DELAY', 'delayMs'],
    ['OTEL_BSP_MAX_QUEUE_SIZE', 'maxQueue'],
    ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'maxBatch'],
    ['OTEL_BSP_EXPORT_TIMEOUT', 'timeoutMs'],
  ] as const;
  for (const [name, key] of numbers) {
    const raw = env[name]?.trim();
    if (!raw) continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 10_000_000)
      return { ok: false, message: `${name} must be a positive integer` };
    value[key] = n;
  }
  return { ok: true, value };
}

type AnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { boolValue: boolean }
  | { doubleValue: number }
  | { arrayValue: { values: AnyValue[] } };
const str = (key: string, value: string) => ({ key, value: { stringValue: value } as AnyValue });

function anyValue(v: SpanValue): AnyValue {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number')
    return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  return { arrayValue: { values: v.map((x) => ({ stringValue: x })) } };
}

/** SpanKind and StatusCode values of opentelemetry-proto. */
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

/** One span in the JSON mapping. */
function toOtlpSpan(s: OtelSpan): Record<string, unknown> {
  const start = BigInt(Math.round(s.startMs)) * 1_000_000n;
  const end = start + BigInt(Math.max(0, Math.round(s.durationMs * 1e6)));
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
    name: s.name,
    kind: s.kind === 'server' ? SPAN_KIND_SERVER : SPAN_KIND_CLIENT,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: end.toString(),
    attributes: Object.entries(s.attributes).map(([key, v]) => ({ key, value: anyValue(v) })),
    status:
      s.error !== undefined ? { code: STATUS_ERROR, message: s.error } : { code: STATUS_UNSET },
  };
}

/** An `ExportTraceServiceRequest` in the JSON mapping. */
function toOtlpRequest(
  spans: readonly OtelSpan[],
  o: { serviceName: string },
): Record<string, unknown> {
  return {
    resourceSpans: [
      {
        resource: { attributes: [str('service.name', o.serviceName)] },
        scopeSpans: [
          {
            scope: { name: 'lume-a2a', version: '0.1.0' },
            spans: spans.map(toOtlpSpan),
          },
        ],
      },
    ],
  };
}

/**
 * Defaults: a record waits at most `delayMs` = 1000 ms for a fuller batch; `maxQueue` = 2048
 * records wait at most (more are dropped and counted); `maxBatch` = 512 records per request; each
 * request has `timeoutMs` = 10 000 ms.
 */
export interface OtlpExporterOptions extends OtlpConfig {
  /** This process's fleet name (`service.name` unless OTEL_SERVICE_NAME says otherwise). */
  self: string;
  log?: Log;
  fetch?: typeof fetch;
}

export interface OtlpExporter extends SpanSink {
  /** Queues one span; never blocks, never throws. */
  add(span: OtelSpan): void;
  /** Sends everything queued now (at shutdown, and in tests). */
  flush(): Promise<void>;
  stats(): { queued: number; exported: number; dropped: number; failedBatches: number };
}

export function createOtlpExporter(o: OtlpExporterOptions): OtlpExporter {
  const log = o.log ?? silentLog;
  const doFetch = o.fetch ?? fetch;
  const maxQueue = o.maxQueue ?? 2048;
  const maxBatch = o.maxBatch ?? 512;
  const delayMs = o.delayMs ?? 1000;
  const timeoutMs = o.timeoutMs ?? 10_000;
  const serviceName = o.serviceName ?? o.self;
  let queue: OtelSpan[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sending: Promise<void> | undefined;
  const stats = { exported: 0, dropped: 0, failedBatches: 0 };
  /** Logged once per run of failures, so a dead collector does not flood the log. */
  let failing = false;

  async function send(batch: OtelSpan[]): Promise<void> {
    let problem: string | undefined;
    try {
      const res = await doFetch(o.url, {
        method: 'POST',
        headers: { ...o.headers, 'content-type': 'application/json' },
        body: JSON.stringify(toOtlpRequest(batch, { serviceName })),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body?.cancel().catch(() => {});
      if (!res.ok) problem = `HTTP ${res.status}`;
    } catch (e) {
      problem =
        (e as Error)?.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : 'unreachable';
    }
    if (problem) {
      stats.failedBatches++;
      stats.dropped += batch.length;
      // The URL only: the headers may hold a collector's key.
      if (!failing)
        log('warn', 'otlp export failed; spans dropped', {
          url: o.url,
          problem,
          spans: batch.length,
        });
      failing = true;
    } else {
      stats.exported += batch.length;
      if (failing) log('info', 'otlp export works again', { url: o.url });
      failing = false;
    }
  }

  /** Sends batches one request at a time until the queue is empty. */
  function drain(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    sending ??= (async () => {
      while (queue.length) {
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        await send(batch);
      }
    })().finally(() => {
      sending = undefined;
    });
    return sending;
  }

  return {
    add(record) {
      if (queue.length >= maxQueue) {
        stats.dropped++;
        return;
      }
      queue.push(record);
      if (queue.length >= maxBatch) void drain();
      else timer ??= setTimeout(() => void drain(), delayMs);
    },
    async flush() {
      while (sending) await sending;
      if (queue.length) await drain();
    },
    stats: () => ({ queued: queue.length, ...stats }),
  };
}
