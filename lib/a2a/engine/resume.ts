/**
 * @module lib/a2a/engine/resume — a subscribe that resumes after a generation the client saw: the
 * events after it from the task's stored event log, in order, then the live ones (the
 * subscription passes each generation once); when the log no longer reaches back that far, the
 * task itself first, whose generation shows the client the gap. A stream the lost one would have
 * ended (the task terminal, or the last replayed event final) ends after the replay.
 */

import { a2aError, type A2AError } from '../errors.ts';
import { eventsAfter } from '../store/event-log.ts';
import { TERMINAL_STATES, generationOf, type TaskEvent } from '../types.ts';
import { type Live, type LiveTasks, type Subscription, TaskSubscription } from './live-tasks.ts';
import { failedByRestart } from './recovery.ts';
import { endsStream, snapshot } from './task-rules.ts';

/**
 * The resumed stream of a live task after generation `after`; `stop` is the subscriber's close
 * hook (a shared store's watch). A cursor past the task's generation is `EVENT_CURSOR_AHEAD`.
 */
export function resumeAfter(
  tasks: LiveTasks,
  live: Live,
  after: number,
  stop: (() => void) | undefined,
): Subscription | A2AError {
  const task = live.rec.task;
  const current = generationOf(task);
  // A crash may lose events a stream had already sent before their write: the task a restart
  // failed answers its final state to a cursor past what was stored (an explicit gap).
  if (after > current && failedByRestart(task)) {
    stop?.();
    const done = new TaskSubscription();
    done.push({ kind: 'task', task: snapshot(task) });
    done.close();
    return done;
  }
  if (after > current) {
    stop?.();
    return a2aError(
      'EVENT_CURSOR_AHEAD',
      `The cursor's generation ${after} is past the task's generation ${current}`,
      'lastGeneration',
    );
  }
  const replay: TaskEvent[] = eventsAfter(task, live.rec.events, after) ?? [
    { kind: 'task', task: snapshot(task) },
  ];
  const last = replay[replay.length - 1];
  if (TERMINAL_STATES.has(task.status.state) || (last && endsStream(last))) {
    stop?.();
    const done = new TaskSubscription();
    for (const e of replay) done.push(e);
    done.close();
    return done;
  }
  const sub = tasks.subscribe(live, stop);
  for (const e of replay) sub.push(e);
  return sub;
}
