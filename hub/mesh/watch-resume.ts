/**
 * @module hub/mesh/watch-resume — a `/v1/watch` stream that a browser's EventSource reconnects to
 * with `Last-Event-ID` (`<epoch>:<sequence>`, the id of each message frame): the messages it missed
 * are read from the store (at most one history page) and sent before the live ones, with no gap
 * and no repeat. A cursor further behind, of another epoch (the project was made again), past the
 * project's head or malformed gets one `event: reset` (`STREAM_RESET`): the page reads the history.
 */

import type { MeshMessage } from '../../lib/mesh/wire.ts';
import { resetFrame } from '../../lib/sse/live.ts';
import type { ReadyFrame } from '../../lib/sse/queue.ts';
import type { MeshHttpOptions } from './http-options.ts';
import type { ProjectEvent } from './realtime-context.ts';

type Reads = Pick<MeshHttpOptions, 'store' | 'realtime' | 'limits'>;

/** The messages after `last`, oldest first, or 'reset' when the stream cannot go on from it. */
async function missedSince(
  o: Reads,
  project: string,
  last: string | null,
): Promise<{ messages: MeshMessage[]; through: number } | { reset: number }> {
  const head = await o.store.position(project);
  const upTo = head?.sequence ?? 0;
  const m = last === null ? null : /^(.{1,64}):(\d{1,15})$/.exec(last);
  const after = m && head && m[1] === head.epoch ? Number(m[2]) : -1;
  if (after < 0 || after > upTo) return { reset: upTo };
  if (after === upTo) return { messages: [], through: upTo };
  const messages = await o.store.history({ project, after, limit: o.limits.historyMaxLimit });
  const through = messages.at(-1)?.sequence ?? after;
  // More than one page behind (or rows the page budget left out): the client reads the history.
  return through < upTo ? { reset: upTo } : { messages, through };
}

/**
 * Watches `project` for one stream: with `last` (its `Last-Event-ID`) the live events wait while
 * the missed messages are read and sent, then those not sent already follow. `frame` makes each
 * event's frame as the caller sees it, with its id.
 */
export function resumedWatch(
  o: Reads,
  project: string,
  last: string | null | undefined,
  frame: (e: ProjectEvent) => ReadyFrame,
) {
  return (push: (f: ReadyFrame) => void): (() => void) => {
    if (last === undefined) return o.realtime.watch(project, (e) => push(frame(e)));
    let waiting: ProjectEvent[] | undefined = [];
    let through = 0;
    const send = (e: ProjectEvent) => {
      if (e.type !== 'message' || e.message.sequence > through) push(frame(e));
    };
    const stop = o.realtime.watch(project, (e) => (waiting ? waiting.push(e) : send(e)));
    void missedSince(o, project, last)
      .then(
        (r) => {
          if ('reset' in r) {
            push(resetFrame('the messages after that id are not all sent again; read the history'));
            through = r.reset;
          } else {
            for (const message of r.messages) push(frame({ type: 'message', message }));
            through = r.through;
          }
        },
        () => push(resetFrame('the missed messages could not be read; read the history')),
      )
      .finally(() => {
        const held = waiting ?? [];
        waiting = undefined;
        for (const e of held) send(e);
      });
    return stop;
  };
}
