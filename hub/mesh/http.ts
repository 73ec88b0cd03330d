/**
 * @module hub/mesh/http — the mesh's HTTP routes: `/healthz`, `/v1/meta`, `/v1/history`,
 * `/v1/presence`, `/v1/watch` (a project's roster and new messages as SSE, for the console) and
 * `POST /api/projects.*`. Errors are `{error: {code, message}}` with the status
 * the error registry gives the code, except where the mesh protocol answers in a 200 body.
 */

import type { Server } from 'bun';
import { parseJsonBody } from '../../lib/body.ts';
import type { MeshHttpCode } from '../../lib/errors/mesh.ts';
import { fail, ok, type Failure, type Result } from '../../lib/errors/result.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import { parseHistoryQuery } from '../../lib/mesh/history.ts';
import { PROTOCOL_VERSION, type MeshLimits } from '../../lib/mesh/limits.ts';
import { isProjectName } from '../../lib/mesh/names.ts';
import type { MeshStore } from '../../lib/mesh/store.ts';
import { liveResponse } from '../http/live.ts';
import type { Realtime } from './realtime.ts';
import { bearer, tokenAccepted } from './trust.ts';
import { visibleTo } from './visibility.ts';
import type { Principal } from '../../lib/auth/principal.ts';

export interface MeshHttpOptions {
  store: MeshStore;
  realtime: Realtime;
  token?: string;
  limits: MeshLimits;
  startedAt: number;
}

const json = (body: unknown, status = 200): Response => Response.json(body, { status });
/**
 * The codes the mesh protocol answers on `/api/*` as HTTP 200 with an error body; every other code
 * (a refused token, a missing project, a body too large) keeps its status so it cannot look like a success.
 */
const ANSWERED_IN_BODY: ReadonlySet<MeshHttpCode> = new Set([
  'bad-json',
  'project-conflict',
  'A2A_BAD_REQUEST',
  'internal',
]);
const apiError = (code: MeshHttpCode, message: string): Response =>
  json({ error: { code, message } }, ANSWERED_IN_BODY.has(code) ? 200 : statusOf(code));
/** `/v1/*` and `/healthz` use plain HTTP semantics: the registry's status. */
const readError = (code: MeshHttpCode, message: string): Response =>
  json({ error: { code, message } }, statusOf(code));

/** Reads a JSON body of at most `cap` bytes; an empty body is `{}`. */
async function readBody(
  req: Request,
  cap: number,
): Promise<Result<unknown, Failure<MeshHttpCode>>> {
  const declared = Number(req.headers.get('content-length'));
  if (declared > cap) return fail('payload-too-large', `body is over ${cap} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body?.getReader();
  // Counted while streaming: a chunked body has no Content-Length to trust.
  for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) {
    size += r.value.length;
    if (size > cap) {
      void reader!.cancel();
      return fail('payload-too-large', `body is over ${cap} bytes`);
    }
    chunks.push(r.value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return ok({});
  // The mesh protocol's vocabulary has no depth code: a body nested too deep is not JSON it takes.
  const parsed = parseJsonBody(text);
  return parsed.ok ? parsed : fail('bad-json', parsed.error.message);
}

export function createMeshHttp(opts: MeshHttpOptions) {
  const { store, realtime, limits } = opts;
  const authorized = (req: Request) => tokenAccepted(opts.token, bearer(req));

  async function api(req: Request, op: string): Promise<Response> {
    if (req.method !== 'POST')
      return apiError('A2A_BAD_REQUEST', `use POST for /api/projects.${op}`);
    if (!authorized(req)) return apiError('unauthorized', 'missing or wrong bearer token');
    const body = await readBody(req, limits.maxHttpBodyBytes);
    if (!body.ok) return apiError(body.error.code, body.error.message);
    const input = body.result as Record<string, unknown> | null;
    if (!input || typeof input !== 'object' || Array.isArray(input))
      return apiError('A2A_BAD_REQUEST', 'body must be a JSON object');
    if (op === 'create') {
      const r = await store.createProject(input);
      return r.ok
        ? json({ result: { project: r.result } })
        : apiError(r.error.code, r.error.message);
    }
    if (op === 'list') return json({ result: { projects: await store.listProjects() } });
    // delete
    const name = input.name;
    if (!isProjectName(name)) return apiError('A2A_BAD_REQUEST', 'name must be a project name');
    if (!(await store.hasProject(name)))
      return apiError('not-found', `project ${name} does not exist`);
    const live = realtime.peers(name).length;
    if (live > 0)
      return apiError(
        'project-conflict',
        `project ${name} has ${live} live presence(s); it can be deleted once they leave`,
      );
    return json({ result: { deleted: await store.deleteProject(name) } });
  }

  async function history(url: URL, caller: Principal | undefined): Promise<Response> {
    const q = url.searchParams;
    const parsed = parseHistoryQuery(
      {
        project: q.get('project'),
        before: q.get('before'),
        after: q.get('after'),
        from: q.get('from'),
        limit: q.get('limit'),
      },
      limits,
    );
    if (!parsed.ok) return readError('A2A_BAD_REQUEST', parsed.error.message);
    if (!(await store.hasProject(parsed.result.project)))
      return readError('not-found', `project ${parsed.result.project} does not exist`);
    const messages = await store.history(parsed.result);
    return json({ messages: messages.map((m) => visibleTo(caller, m)) });
  }

  async function presence(url: URL): Promise<Response> {
    const project = url.searchParams.get('project');
    if (!isProjectName(project))
      return readError(
        'A2A_BAD_REQUEST',
        project ? 'project is not a valid project name' : 'project is required',
      );
    if (!(await store.hasProject(project)))
      return readError('not-found', `project ${project} does not exist`);
    const peers = realtime.peers(project);
    return json({ project, peers });
  }

  /** The console's live view of a project: its roster now and after each change, and each new message. */
  async function watch(req: Request, url: URL, caller: Principal | undefined): Promise<Response> {
    const project = url.searchParams.get('project');
    if (!isProjectName(project))
      return readError(
        'A2A_BAD_REQUEST',
        project ? 'project is not a valid project name' : 'project is required',
      );
    if (!(await store.hasProject(project)))
      return readError('not-found', `project ${project} does not exist`);
    return liveResponse(req, (push) =>
      realtime.watch(project, (e) =>
        push(e.type === 'message' ? { ...e, message: visibleTo(caller, e.message) } : e),
      ),
    );
  }

  /** Answers a mesh route, or undefined when the path is not the mesh's. */
  return function handle(
    req: Request,
    server: Server<unknown>,
    caller?: Principal,
  ): Response | Promise<Response> | undefined {
    const url = new URL(req.url);
    const path = url.pathname;
    const get = req.method === 'GET' || req.method === 'HEAD';
    if (path === '/healthz')
      return get ? json({ ok: true }) : readError('A2A_BAD_REQUEST', 'use GET');
    if (path === '/v1/meta')
      return get
        ? json({
            pid: process.pid,
            port: server.port,
            baseUrl: server.url.origin,
            startedAt: opts.startedAt,
            protocolVersion: PROTOCOL_VERSION,
          })
        : readError('A2A_BAD_REQUEST', 'use GET');
    if (path === '/v1/history' || path === '/v1/presence' || path === '/v1/watch') {
      if (!get) return readError('A2A_BAD_REQUEST', 'use GET');
      if (!authorized(req)) return readError('unauthorized', 'missing or wrong bearer token');
      return path === '/v1/history'
        ? history(url, caller)
        : path === '/v1/presence'
          ? presence(url)
          : watch(req, url, caller);
    }
    const op = /^\/api\/projects\.(create|list|delete)$/.exec(path)?.[1];
    if (op) return api(req, op);
    return undefined;
  };
}
