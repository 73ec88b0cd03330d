/**
 * @module lib/metrics/registry — a small metrics registry: counters, gauges and histograms with fixed
 * buckets, rendered in the Prometheus text exposition format (version 0.0.4). Every metric has a
 * bounded set of label combinations: values outside a label's allowed list, and combinations past
 * the metric's series cap, are counted under "other", so no caller input can grow it without end.
 * The kinds are lib/metrics/counter.ts, gauge.ts, histogram.ts; the bounds lib/metrics/labels.ts.
 */

import { type Counter, makeCounter } from './counter.ts';
import type { Metric } from './exposition.ts';
import { type Gauge, makeGauge } from './gauge.ts';
import { type Histogram, makeHistogram } from './histogram.ts';
import type { MetricOptions } from './labels.ts';

export type { Counter } from './counter.ts';
export { PROMETHEUS_CONTENT_TYPE } from './exposition.ts';
export type { Gauge } from './gauge.ts';
export type { Histogram } from './histogram.ts';
export { type Labels, type MetricOptions, OTHER } from './labels.ts';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

export interface MetricsRegistry {
  counter(name: string, help: string, opts?: MetricOptions): Counter;
  gauge(name: string, help: string, opts?: MetricOptions): Gauge;
  /** `buckets`: upper bounds, ascending; `+Inf` is added. */
  histogram(
    name: string,
    help: string,
    buckets: readonly number[],
    opts?: MetricOptions,
  ): Histogram;
  /** The whole registry in the text format, ending with a newline. */
  render(): string;
}

/** A registry; registering a metric with an invalid or taken name, or invalid labels, throws (a bug). */
export function createMetricsRegistry(): MetricsRegistry {
  const metrics = new Map<string, Metric>();
  const add = <T>([made, m]: [T, Metric]): T => {
    if (!METRIC_NAME.test(m.name)) throw new Error(`metrics: invalid metric name ${m.name}`);
    if (metrics.has(m.name)) throw new Error(`metrics: ${m.name} is registered twice`);
    metrics.set(m.name, m);
    return made;
  };
  return {
    counter: (name, help, opts = {}) => add(makeCounter(name, help, opts)),
    gauge: (name, help, opts = {}) => add(makeGauge(name, help, opts)),
    histogram: (name, help, buckets, opts = {}) => add(makeHistogram(name, help, buckets, opts)),
    render() {
      return `${[...metrics.values()].flatMap((m) => m.render()).join('\n')}\n`;
    },
  };
}
