/**
 * @module lib/metrics/counter — a counter of the metrics registry: a total per label combination
 * that only rises, or one read from elsewhere when the metrics are rendered.
 */

import { formatNumber, header, type Metric } from './exposition.ts';
import { LabelSet, type Labels, type MetricOptions } from './labels.ts';

export interface Counter {
  /** Adds `n` (default 1, never negative). */
  inc(labels?: Labels, n?: number): void;
  /** Reads an unlabelled total kept elsewhere (one that only rises) when the metrics are rendered. */
  collect(read: () => number): void;
}

/** A counter and the metric that renders it. */
export function makeCounter(name: string, help: string, opts: MetricOptions): [Counter, Metric] {
  const set = new LabelSet(name, opts);
  const values = new Map<string, number>();
  if (set.names.length === 0) values.set(set.key(undefined), 0);
  let reader: (() => number) | undefined;
  const metric: Metric = {
    name,
    render() {
      if (reader) {
        const k = set.key(undefined);
        values.set(k, Math.max(values.get(k) ?? 0, reader()));
      }
      return [
        ...header(name, help, 'counter'),
        ...[...values].map(([k, v]) => `${name}${set.render(set.keys.get(k)!)} ${formatNumber(v)}`),
      ];
    },
  };
  const counter: Counter = {
    collect(read) {
      reader = read;
    },
    inc(labels, n = 1) {
      // A counter only goes up; a negative or non-finite step is a caller's bug, ignored.
      if (!(n >= 0) || !Number.isFinite(n)) return;
      const k = set.key(labels);
      values.set(k, (values.get(k) ?? 0) + n);
    },
  };
  return [counter, metric];
}
