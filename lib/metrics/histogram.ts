/**
 * @module lib/metrics/histogram — a histogram of the metrics registry: observations counted in
 * fixed buckets per label combination, with their sum and count, rendered cumulatively.
 */

import { formatNumber, header, type Metric } from './exposition.ts';
import { LabelSet, type Labels, type MetricOptions } from './labels.ts';

export interface Histogram {
  observe(labels: Labels, value: number): void;
}

/**
 * A histogram and the metric that renders it; `buckets` are upper bounds, ascending (`+Inf` is added).
 * @throws Error when the buckets are empty, not finite or not ascending.
 */
export function makeHistogram(
  name: string,
  help: string,
  buckets: readonly number[],
  opts: MetricOptions,
): [Histogram, Metric] {
  if (
    buckets.length === 0 ||
    buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))
  )
    throw new Error(`metrics: ${name} needs finite buckets in ascending order`);
  const set = new LabelSet(name, opts, ['le']);
  const series = new Map<string, { counts: number[]; sum: number; count: number }>();
  const metric: Metric = {
    name,
    render() {
      const lines = header(name, help, 'histogram');
      for (const [k, s] of series) {
        const values = set.keys.get(k)!;
        let cumulative = 0;
        buckets.forEach((b, i) => {
          cumulative += s.counts[i]!;
          lines.push(
            `${name}_bucket${set.render(values, [['le', formatNumber(b)]])} ${cumulative}`,
          );
        });
        lines.push(`${name}_bucket${set.render(values, [['le', '+Inf']])} ${s.count}`);
        lines.push(`${name}_sum${set.render(values)} ${formatNumber(s.sum)}`);
        lines.push(`${name}_count${set.render(values)} ${s.count}`);
      }
      return lines;
    },
  };
  const histogram: Histogram = {
    observe(labels, value) {
      if (!Number.isFinite(value)) return;
      const k = set.key(labels);
      let s = series.get(k);
      if (!s) series.set(k, (s = { counts: buckets.map(() => 0), sum: 0, count: 0 }));
      const i = buckets.findIndex((b) => value <= b);
      if (i >= 0) s.counts[i]!++;
      s.sum += value;
      s.count++;
    },
  };
  return [histogram, metric];
}
