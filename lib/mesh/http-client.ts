/** @module lib/mesh/http-client — the hub's HTTP routes from the client side; every call first probes `/v1/meta` for the protocol version. */

import { clientCode, fail, ok, type ClientCode, type Result } from './errors.ts';
import { PROTOCOL_VERSION } from './limits.ts';
import type { Project } from './store.ts';
import type { MeshMessage } from './wire.ts';

export interface HubMeta {
  pid: number;
  port: number;
  baseUrl: string;
  startedAt: number;
  protocolVersion: number;
}

export interface HistoryOptions {
  before?: string;
  after?: string;
  from?: string;
  limit?: number;
}

export interface PresenceView {
  name: string;
  presenceId: string;
  joinedAt: number;
}

export interface HubClientOptions {
  baseUrl: string;
  /** Other hubs of the same cluster: asked in turn when a hub refuses the connection. */
  otherUrls?: string[];
  token?: string;
  fetch?: typeof fetch;
}

export type HubClient = ReturnType<typeof createHubClient>;

/**
 * Hub addresses as a setting or option gives them: one URL, or several hubs of one cluster
 * separated by commas (`http://a:4100,http://b:4100`), first tried first.
 */
export function hubUrlList(...given: (string | undefined)[]): string[] {
  return [
    ...new Set(
      given
        .flatMap((g) => (g ?? '').split(','))
        .map((u) => u.trim())
        .filter(Boolean),
    ),
  ];
}

/** The hubs a client asks, and the one that answered last (later calls start there). */
interface Hubs {
  bases: string[];
  base: string;
  doFetch: typeof fetch;
  headers: Record<string, string>;
}

/**
 * One call: to the hub that answered last, then to the others while they refuse the connection.
 * Only a refused connection moves on: the request never reached that hub, so asking the next one
 * cannot do anything twice. Any other failure may have happened after the hub acted.
 */
async function call(
  h: Hubs,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Result<Record<string, unknown>, ClientCode>> {
  let res: Response | undefined;
  const refused: string[] = [];
  for (const b of [h.base, ...h.bases.filter((x) => x !== h.base)]) {
    try {
      res = await h.doFetch(b + path, {
        method,
        headers: h.headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      h.base = b;
      break;
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'ECONNREFUSED')
        return fail('A2A_HTTP_TRANSPORT', `cannot reach the hub at ${b}: ${(e as Error).message}`);
      refused.push(b);
    }
  }
  if (!res)
    return fail(
      'A2A_HTTP_TRANSPORT',
      `cannot reach the hub at ${refused.join(' or ')}: connection refused`,
    );
  return answerOf(res);
}

/** The JSON document of a hub's answer, or its coded error. */
async function answerOf(res: Response): Promise<Result<Record<string, unknown>, ClientCode>> {
  let doc: Record<string, unknown>;
  try {
    doc = (await res.json()) as Record<string, unknown>;
  } catch {
    return fail('A2A_HTTP_STATUS', `hub answered ${res.status} without JSON`);
  }
  const err = doc?.error as { code?: unknown; message?: unknown } | undefined;
  if (err) return fail(clientCode(err.code), `${String(err.code)}: ${String(err.message ?? '')}`);
  if (!res.ok) return fail('A2A_HTTP_STATUS', `hub answered ${res.status}`);
  return ok(doc);
}

async function meta(h: Hubs): Promise<Result<HubMeta, ClientCode>> {
  const r = await call(h, 'GET', '/v1/meta');
  if (!r.ok) return r;
  const m = r.result as unknown as HubMeta;
  if (m.protocolVersion !== PROTOCOL_VERSION)
    return fail(
      'A2A_PROTOCOL_MISMATCH',
      `hub speaks protocol ${String(m.protocolVersion)}, this client ${PROTOCOL_VERSION}`,
    );
  return ok(m);
}

/** Probes the protocol, then makes the call. */
async function checked(h: Hubs, method: 'GET' | 'POST', path: string, body?: unknown) {
  const m = await meta(h);
  return m.ok ? call(h, method, path, body) : m;
}

const query = (q: Record<string, string | number | undefined>) =>
  new URLSearchParams(
    Object.entries(q)
      .filter((e): e is [string, string | number] => e[1] !== undefined)
      .map(([k, v]) => [k, String(v)]),
  ).toString();

export function createHubClient(o: HubClientOptions) {
  const bases = [...new Set([o.baseUrl, ...(o.otherUrls ?? [])].map((u) => u.replace(/\/+$/, '')))];
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  const h: Hubs = { bases, base: bases[0]!, doFetch: o.fetch ?? fetch, headers };

  return {
    /** The hub that answered last (the first given until one has). */
    get baseUrl() {
      return h.base;
    },
    meta: () => meta(h),
    async createProject(p: {
      name: string;
      displayName?: string;
      description?: string;
      createdByCwd?: string;
    }): Promise<Result<Project, ClientCode>> {
      const r = await checked(h, 'POST', '/api/projects.create', p);
      return r.ok ? ok((r.result.result as { project: Project }).project) : r;
    },
    async listProjects(): Promise<Result<Project[], ClientCode>> {
      const r = await checked(h, 'POST', '/api/projects.list', {});
      return r.ok ? ok((r.result.result as { projects: Project[] }).projects) : r;
    },
    async deleteProject(name: string): Promise<Result<boolean, ClientCode>> {
      const r = await checked(h, 'POST', '/api/projects.delete', { name });
      return r.ok ? ok((r.result.result as { deleted: boolean }).deleted) : r;
    },
    async history(
      project: string,
      q: HistoryOptions = {},
    ): Promise<Result<MeshMessage[], ClientCode>> {
      const r = await checked(h, 'GET', `/v1/history?${query({ project, ...q })}`);
      return r.ok ? ok(r.result.messages as MeshMessage[]) : r;
    },
    async presence(project: string): Promise<Result<PresenceView[], ClientCode>> {
      const r = await checked(h, 'GET', `/v1/presence?${query({ project })}`);
      return r.ok ? ok(r.result.peers as PresenceView[]) : r;
    },
  };
}
