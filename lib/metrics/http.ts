/**
 * @module lib/metrics/http — what every process measures of the requests it serves: a wrapper around
 * a fetch handler that runs the request's work inside its W3C trace context (its `traceparent`,
 * when well formed) and counts it by route template, method and status, its latency, and the
 * error code of a coded failure answer. Route labels are templates (`/tasks/{id}`), never raw paths.
 *
 * The wrapper runs on every request, so its common case is kept cheap: the error code of an
 * answer built by `codedJsonResponse` (both A2A bindings) is taken from what its builder recorded;
 * only answers built elsewhere are read back for it.
 */

import { isKnownCode } from '../errors/registry.ts';
import { readBodyBytes } from '../body.ts';
import { contextFromHeaders, withTrace } from '../telemetry/trace-context.ts';
import { answerCodeOf, errorCodeOf } from './answer-code.ts';
import { OTHER, type Labels, type MetricsRegistry } from './registry.ts';

export { errorCodeOf };

/** Maps a path to its route template, or "other". */
export type RouteTemplater = (path: string) => string;

/**
 * Builds a templater from exact paths and patterns. A pattern's template may use `$1` … for its
 * groups (each group must match a fixed word, never caller text).
 */
export function routeTemplater(
  exact: readonly string[],
  patterns: ReadonlyArray<readonly [RegExp, string]> = [],
): RouteTemplater {
  const known = new Set(exact);
  return (path) => {
    if (known.has(path)) return path;
    for (const [re, template] of patterns) {
      const m = re.exec(path);
      if (m) return template.replace(/\$(\d)/g, (_, i: string) => m[Number(i)] ?? '');
    }
    return OTHER;
  };
}

/**
 * Builds a templater from route templates (`/tasks/{id}:cancel`): a template without `{…}` is an
 * exact path; in the others each `{name}` matches one path segment; `extra` patterns come last. The more literal text a
 * template has, the earlier it is tried, so `/tasks/{id}:cancel` wins over `/tasks/{id}`.
 */
export function templaterOf(
  templates: readonly string[],
  extra: ReadonlyArray<readonly [RegExp, string]> = [],
): RouteTemplater {
  const exact = templates.filter((t) => !t.includes('{'));
  const literal = (t: string) => t.replace(/\{[^}]*\}/g, '').length;
  const patterns = templates
    .filter((t) => t.includes('{'))
    .sort((a, b) => literal(b) - literal(a))
    .map((t): readonly [RegExp, string] => {
      const source = t
        .split(/\{[^}]*\}/)
        .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
        .join('[^/]+');
      return [new RegExp(`^${source}$`), t];
    });
  return routeTemplater(exact, [...patterns, ...extra]);
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Latency buckets in seconds: 1 ms to 30 s. */
export const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Error answers larger than this are not read for their code (they are counted as "other"). */
const MAX_ERROR_BODY = 64 * 1024;

/** The same answer, its body counted in `open` from now until the consumer reads its end or goes away. */
function counted(
  res: Response,
  open: { inc(l: Labels): void; dec(l: Labels): void },
  labels: Labels,
): Response {
  const reader = res.body!.getReader();
  let ended = false;
  const end = () => {
    if (!ended) (ended = true), open.dec(labels);
  };
  open.inc(labels);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) end(), controller.close();
        else controller.enqueue(value);
      } catch (e) {
        end();
        controller.error(e);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

export interface RequestObserver {
  /** Wraps a fetch handler; the wrapped one behaves the same and is measured. */
  wrap<A extends unknown[]>(
    handler: (req: Request, ...rest: A) => Response | Promise<Response>,
  ): (req: Request, ...rest: A) => Promise<Response>;
}

export function createRequestObserver(
  registry: MetricsRegistry,
  routeOf: RouteTemplater,
): RequestObserver {
  const requests = registry.counter(
    'lume_http_requests_total',
    'HTTP requests answered, by route template, method and status.',
    {
      labels: ['route', 'method', 'status'],
      values: { method: METHODS },
    },
  );
  const latency = registry.histogram(
    'lume_http_request_duration_seconds',
    "Time to the answer's headers (a stream counts until it opens), by route template.",
    LATENCY_BUCKETS,
    {
      labels: ['route'],
    },
  );
  const streams = registry.gauge(
    'lume_sse_streams',
    'Event streams open to consumers (A2A task streams, the trace stream), by route template.',
    {
      labels: ['route'],
    },
  );
  const errors = registry.counter(
    'lume_http_errors_total',
    'Coded failure answers, by route template and error code (codes the error registry does not declare count as other).',
    {
      labels: ['route', 'code'],
    },
  );

  /**
   * Reads a copy of a JSON answer built elsewhere for its error code. JSON answers are whole in
   * memory already, so this costs one bounded read.
   */
  async function readErrorCode(copy: Response): Promise<string | undefined> {
    try {
      const bytes = await readBodyBytes(copy, MAX_ERROR_BODY);
      const text = bytes ? new TextDecoder().decode(bytes) : '';
      if (text.includes('"error"')) return errorCodeOf(JSON.parse(text));
    } catch {
      /* not JSON: counted without a code */
    }
    return undefined;
  }

  /** Counts an answer's error code; an answer without one counts (as other) only with a failure status. */
  function countError(route: string, status: number, code: string | undefined): void {
    if (code !== undefined || status >= 400)
      errors.inc({ route, code: code !== undefined && isKnownCode(code) ? code : OTHER });
  }

  return {
    wrap(handler) {
      return async (req, ...rest) => {
        const route = routeOf(new URL(req.url).pathname);
        const t0 = performance.now();
        let res: Response;
        try {
          res = await withTrace(contextFromHeaders(req.headers), () => handler(req, ...rest));
        } catch (e) {
          requests.inc({ route, method: req.method, status: 500 });
          latency.observe({ route }, (performance.now() - t0) / 1000);
          throw e;
        }
        latency.observe({ route }, (performance.now() - t0) / 1000);
        requests.inc({ route, method: req.method, status: res.status });
        // A failure status, or a JSON-RPC answer (its errors come with 200): look for the code.
        const type = res.headers.get('content-type') ?? '';
        if (res.status >= 400 || route === '/a2a') {
          const told = answerCodeOf(res);
          if (told !== undefined) countError(route, res.status, told ?? undefined);
          else if (type.includes('json') && res.body)
            countError(route, res.status, await readErrorCode(res.clone()));
        }
        // `res.body` is read only when needed: reading it turns a whole answer into a stream.
        if (type.startsWith('text/event-stream') && res.body)
          return counted(res, streams, { route });
        return res;
      };
    },
  };
}
