/**
 * @module lib/node/task-metrics — the metrics of a node's own work, beside its requests: task state changes
 * (from the engine's events), the webhook delivery queue and the long-polls held (read when the
 * metrics are rendered).
 */

import type { TaskEvent } from '../a2a/types.ts';
import type { MetricsRegistry } from '../metrics/registry.ts';
import { V1_METHODS } from '../a2a/operations.ts';
import type { OperationObserver } from '../a2a/traced-operations.ts';
import { taskStateName } from '../telemetry/a2a-span.ts';

/** OpenTelemetry's `a2a.task.state` values (the label is `a2a_task_state`, as OTLP maps names to Prometheus). */
const TASK_STATES = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'canceled',
  'failed',
  'rejected',
].map(taskStateName) as string[];

export interface NodeMetrics {
  /** Give it every task event (the engine's `onEvent`). */
  onTaskEvent(event: TaskEvent): void;
  /** Give it every A2A operation served (lib/a2a/traced-operations.ts). */
  onOperation: OperationObserver;
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
      labels: ['a2a_task_state'],
      values: { a2a_task_state: TASK_STATES },
    },
  );
  // The labels are OpenTelemetry's A2A attribute names as Prometheus spells them (dots as _).
  const operations = registry.counter(
    'lume_a2a_server_operations_total',
    'A2A operations served, by method, protocol version and error type (empty: none).',
    {
      labels: ['a2a_method_name', 'a2a_protocol_version', 'error_type'],
      values: { a2a_method_name: V1_METHODS, a2a_protocol_version: ['0.3', '1.0'] },
    },
  );
  const durations = registry.histogram(
    'lume_a2a_server_operation_duration_seconds',
    'Time to answer an A2A operation (a stream: until it ends), by method.',
    [0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10, 60],
    { labels: ['a2a_method_name'], values: { a2a_method_name: V1_METHODS } },
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
      if (event.kind === 'task')
        states.inc({ a2a_task_state: taskStateName(event.task.status.state)! });
      else if (event.kind === 'status')
        states.inc({ a2a_task_state: taskStateName(event.status.state)! });
    },
    onOperation(method, version, error, seconds) {
      operations.inc({
        a2a_method_name: method,
        a2a_protocol_version: version,
        error_type: error ?? '',
      });
      durations.observe({ a2a_method_name: method }, seconds);
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
