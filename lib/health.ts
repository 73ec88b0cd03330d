/**
 * @module lib/health — the two health answers every process gives, and the probe that reads them:
 * `/healthz` (alive: the event loop answers) and `/readyz` (ready: every named check passes,
 * else 503 naming the failing ones).
 */

/** One readiness check: true when ready, otherwise why not (a short sentence, no secrets). */
export type ReadyCheck = () => true | string;

export interface ReadyReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}

/** Runs every check; a check that throws counts as failed. */
function readiness(checks: Record<string, ReadyCheck>): ReadyReport {
  const out: ReadyReport['checks'] = {};
  let ready = true;
  for (const [name, check] of Object.entries(checks)) {
    let verdict: true | string;
    try {
      verdict = check();
    } catch {
      verdict = 'check failed';
    }
    if (verdict === true) out[name] = { ok: true };
    else {
      ready = false;
      out[name] = { ok: false, detail: verdict };
    }
  }
  return { ready, checks: out };
}

const NO_STORE = { 'cache-control': 'no-store' };

/** The `/healthz` answer: the process is alive. */
export function livenessResponse(name: string): Response {
  return Response.json({ ok: true, name }, { headers: NO_STORE });
}

/** The `/readyz` answer: 200 when every check passes, else 503 with `NOT_READY` and the checks. */
export function readinessResponse(name: string, checks: Record<string, ReadyCheck>): Response {
  const report = readiness(checks);
  if (report.ready)
    return Response.json({ ok: true, name, checks: report.checks }, { headers: NO_STORE });
  const failing = Object.entries(report.checks)
    .filter(([, c]) => !c.ok)
    .map(([n]) => n);
  return Response.json(
    {
      ok: false,
      name,
      error: { code: 'NOT_READY', message: `not ready: ${failing.join(', ')}` },
      checks: report.checks,
    },
    { status: 503, headers: NO_STORE },
  );
}

export interface ProbeResult {
  /** True when the URL answered 200 in time. */
  ok: boolean;
  /** The HTTP status, null when nothing answered. */
  status: number | null;
  latencyMs: number;
  /** The JSON body, when there was one. */
  body?: unknown;
  /** Why the probe failed: `timeout`, `unreachable`, or `HTTP <status>`. */
  error?: string;
}

/**
 * Asks a health URL (`…/healthz` or `…/readyz`) once, with a timeout. Never throws: a process
 * that does not answer in time is as unhealthy as one that answers 503.
 */
export async function probeHealth(
  url: string,
  opts: { timeoutMs?: number; fetch?: typeof fetch } = {},
): Promise<ProbeResult> {
  const f = opts.fetch ?? fetch;
  const t0 = performance.now();
  const latency = () => Math.round((performance.now() - t0) * 100) / 100;
  try {
    const res = await f(url, {
      signal: AbortSignal.timeout(opts.timeoutMs ?? 1000),
      headers: { accept: 'application/json' },
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {}
    return {
      ok: res.status === 200,
      status: res.status,
      latencyMs: latency(),
      ...(body !== undefined ? { body } : {}),
      ...(res.status === 200 ? {} : { error: `HTTP ${res.status}` }),
    };
  } catch (e) {
    return {
      ok: false,
      status: null,
      latencyMs: latency(),
      error: (e as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable',
    };
  }
}
