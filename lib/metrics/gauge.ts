/**
 * @module lib/metrics/gauge — a gauge of the metrics registry: a value per label combination that
 * goes up and down, or values read from elsewhere (a queue's length) when the metrics are rendered.
 */

import { formatNumber, header, type Metric } from './exposition.ts';
import { LabelSet, type Labels, type MetricOptions } from './labels.ts';

export interface Gauge {
  set(labels: Labels, value: number): void;
  inc(labels?: Labels, n?: number): void;
  dec(labels?: Labels, n?: number): void;
  /** Reads the value(s) when the metrics are rendered instead of keeping them (e.g. a queue's length). */
  collect(read: () => number | ReadonlyArray<readonly [Labels, number]>): void;
}

/** A gauge and the metric that renders it. */
export function makeGauge(name: string, help: string, opts: MetricOptions): [Gauge, Metric] {
  const set = new LabelSet(name, opts);
  const values = new Map<string, number>();
  let reader: (() => number | ReadonlyArray<readonly [Labels, number]>) | undefined;
  const change = (labels: Labels | undefined, f: (v: number) => number) => {
    const k = set.key(labels);
    values.set(k, f(values.get(k) ?? 0));
  };
  const metric: Metric = {
    name,
    render() {
      if (reader) {
        const read = reader();
        if (typeof read === 'number') values.set(set.key(undefined), read);
        else for (const [labels, v] of read) values.set(set.key(labels), v);
      }
      return [
        ...header(name, help, 'gauge'),
        ...[...values].map(([k, v]) => `${name}${set.render(set.keys.get(k)!)} ${formatNumber(v)}`),
      ];
    },
  };
  const gauge: Gauge = {
    set: (labels, v) => change(labels, () => v),
    inc: (labels, n = 1) => change(labels, (v) => v + n),
    dec: (labels, n = 1) => change(labels, (v) => v - n),
    collect(read) {
      reader = read;
    },
  };
  return [gauge, metric];
}
