/**
 * @module lib/node/task-metrics — the metrics of a node's own work, beside its requests: task state changes
 * (from the engine's events), the webhook delivery queue and the long-polls held (read when the
 * metrics are rendered).
 */

import type { TaskEvent } from '../a2a/types.ts';
import type { MetricsRegistry } from '../metrics/registry.ts';

const TASK_STATES = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'canceled',
  'failed',
  'rejected',
];

export interface NodeMetrics {
  /** Give it every task event (the engine's `onEvent`). */
  onTaskEvent(event: TaskEvent): void;
  /** Reads the webhook queue's depth at every render. */
  watchWebhooks(push: { stats(): { pending: number; inFlight: number } }): void;
  /** Reads the GetTask long-polls held at every render. */
  watchLongPolls(engine: { readonly longPollsHeld: number }): void;
}

export function createNodeMetrics(registry: MetricsRegistry): NodeMetrics {
  const states = registry.counter(
    'lume_task_states_total',
    'Task state changes, by the state entered (a new task counts as its first state).',
    {
      labels: ['state'],
      values: { state: TASK_STATES },
    },
  );
  const webhooks = registry.gauge(
    'lume_webhook_queue',
    'Webhook deliveries of task updates: queued (waiting or being sent, retries included) and sending (on a socket now).',
    {
      labels: ['state'],
      values: { state: ['queued', 'sending'] },
    },
  );
  const polls = registry.gauge(
    'lume_a2a_long_polls',
    'GetTask long-polls (currentGeneration) held by this process now.',
  );
  return {
    onTaskEvent(event) {
      if (event.kind === 'task') states.inc({ state: event.task.status.state });
      else if (event.kind === 'status') states.inc({ state: event.status.state });
    },
    watchWebhooks(push) {
      webhooks.collect(() => {
        const s = push.stats();
        return [
          [{ state: 'queued' }, s.pending],
          [{ state: 'sending' }, s.inFlight],
        ];
      });
    },
    watchLongPolls(engine) {
      polls.collect(() => engine.longPollsHeld);
    },
  };
}
