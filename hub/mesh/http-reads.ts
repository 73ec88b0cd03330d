/**
 * @module hub/mesh/http-reads — the mesh's reads over HTTP: `/v1/history` (a page of a project's
 * messages), `/v1/presence` (who is present) and `/v1/watch` (the roster and new messages as SSE,
 * for the console), each as the caller may see it.
 */

import type { Principal } from '../../lib/auth/principal.ts';
import { parseHistoryQuery } from '../../lib/mesh/history.ts';
import { isProjectName } from '../../lib/mesh/names.ts';
import { liveResponse } from '../../lib/sse/live.ts';
import type { MeshHttpOptions } from './http-options.ts';
import { json, readError } from './http-answers.ts';
import { visibleTo } from './visibility.ts';

type Reads = Pick<MeshHttpOptions, 'store' | 'realtime' | 'limits'>;

/** The project a read names, or the refusal when it is no project's name or no such project. */
async function projectOf(
  { store }: Reads,
  url: URL,
): Promise<{ project: string } | { refused: Response }> {
  const project = url.searchParams.get('project');
  if (!isProjectName(project))
    return {
      refused: readError(
        'A2A_BAD_REQUEST',
        project ? 'project is not a valid project name' : 'project is required',
      ),
    };
  if (!(await store.hasProject(project)))
    return { refused: readError('not-found', `project ${project} does not exist`) };
  return { project };
}

export async function history(
  { store, limits }: Reads,
  url: URL,
  caller: Principal | undefined,
): Promise<Response> {
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

export async function presence(o: Reads, url: URL): Promise<Response> {
  const p = await projectOf(o, url);
  if ('refused' in p) return p.refused;
  return json({ project: p.project, peers: o.realtime.peers(p.project) });
}

/** The console's live view of a project: its roster now and after each change, and each new message. */
export async function watch(
  o: Reads,
  req: Request,
  url: URL,
  caller: Principal | undefined,
): Promise<Response> {
  const p = await projectOf(o, url);
  if ('refused' in p) return p.refused;
  return liveResponse(req, (push) =>
    o.realtime.watch(p.project, (e) =>
      push(e.type === 'message' ? { ...e, message: visibleTo(caller, e.message) } : e),
    ),
  );
}
