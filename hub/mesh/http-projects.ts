/**
 * @module hub/mesh/http-projects — `POST /api/projects.create|list|delete` with the mesh's bearer
 * token; a project with live presences is not deleted.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import { isProjectName } from '../../lib/mesh/names.ts';
import type { MeshHttpOptions } from './http-options.ts';
import { apiError, json, readBody } from './http-answers.ts';
import { bearer, tokenAccepted } from './trust.ts';

export async function projectsApi(
  opts: MeshHttpOptions,
  req: Request,
  op: string,
): Promise<Response> {
  const { store, realtime, limits } = opts;
  if (req.method !== 'POST') return apiError('A2A_BAD_REQUEST', `use POST for /api/projects.${op}`);
  if (!tokenAccepted(opts.token, bearer(req)))
    return apiError('unauthorized', 'missing or wrong bearer token');
  const body = await readBody(req, limits.maxHttpBodyBytes);
  if (!body.ok) return apiError(body.error.code, body.error.message);
  const input = body.result as Record<string, unknown> | null;
  if (!isPlainObject(input)) return apiError('A2A_BAD_REQUEST', 'body must be a JSON object');
  if (op === 'create') {
    const r = await store.createProject(input);
    return r.ok ? json({ result: { project: r.result } }) : apiError(r.error.code, r.error.message);
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
