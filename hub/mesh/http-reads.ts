/**
 * @module hub/mesh/http-reads — the mesh's reads over HTTP: `/v1/history` (a page of a project's
 * messages), `/v1/presence` (who is present) and `/v1/watch` (the roster and new messages as SSE,
 * for the console, resumable with `Last-Event-ID`: hub/mesh/watch-resume.ts), each as the caller
 * may see it.
 */

import type { Principal } from '../../lib/auth/principal.ts';
import { parseHistoryQuery } from '../../lib/mesh/history.ts';
import { isProjectName } from '../../lib/mesh/names.ts';
import { lastEventId, liveResponse, readyFrame } from '../../lib/sse/live.ts';
import type { ReadyFrame } from '../../lib/sse/queue.ts';
import type { SseStreams } from '../../lib/sse/sse.ts';
import type { MeshHttpOptions } from './http-options.ts';
import type { ProjectEvent } from './realtime-context.ts';
import { json, readError } from './http-answers.ts';
import { visibleTo } from './visibility.ts';
import { resumedWatch } from './watch-resume.ts';

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

/** Each event's frame, whole and redacted, made once for all of a project's watchers. */
const framed = new WeakMap<ProjectEvent, Map<string, ReadyFrame>>();

/**
 * `e` as `caller` sees it, as a frame shared with every watcher who sees it the same; a message's
 * frame has the SSE id `<epoch>:<sequence>`, which a reconnecting EventSource names.
 */
function frameFor(e: ProjectEvent, caller: Principal | undefined, epoch: string): ReadyFrame {
  const seen = e.type === 'message' ? visibleTo(caller, e.message) : undefined;
  const redacted = seen !== undefined && seen !== (e as { message: unknown }).message;
  let kinds = framed.get(e);
  if (!kinds) framed.set(e, (kinds = new Map()));
  const key = `${redacted ? 1 : 0}${epoch}`;
  let frame = kinds.get(key);
  if (!frame) {
    const id = e.type === 'message' ? `${epoch}:${e.message.sequence}` : undefined;
    kinds.set(key, (frame = readyFrame(seen ? { ...e, message: seen } : e, id)));
  }
  return frame;
}

/** The open `/v1/watch` streams (per process, per client address) and who asks for one. */
export interface Watchers {
  streams: SseStreams;
  address: string;
}

/**
 * The console's live view of a project: its roster now and after each change, and each new
 * message; refused `watch-full` past the hub's or the address's bound of open watches.
 */
export async function watch(
  o: Reads,
  req: Request,
  url: URL,
  caller: Principal | undefined,
  w: Watchers,
): Promise<Response> {
  const full = w.streams.full(w.address);
  if (full)
    return readError(
      'watch-full',
      full === 'STREAMS_FULL'
        ? `the hub has ${o.limits.maxWatchers} watch streams open`
        : `this address has ${o.limits.maxWatchersPerAddress} watch streams open; close one first`,
    );
  const p = await projectOf(o, url);
  if ('refused' in p) return p.refused;
  const epoch = (await o.store.position(p.project))?.epoch ?? '';
  return liveResponse(
    req,
    resumedWatch(o, p.project, lastEventId(req), (e) => frameFor(e, caller, epoch)),
    { streams: w.streams, owner: w.address },
  );
}
