/**
 * @module lib/metrics/registry — a small metrics registry: counters, gauges and histograms with fixed
 * buckets, rendered in the Prometheus text exposition format (version 0.0.4). Every metric has a
 * bounded set of label combinations: values outside a label's allowed list, and combinations past
 * the metric's series cap, are counted under "other", so no caller input can grow it without end.
 */

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** The label value everything unknown or past a cap is folded into. */
export const OTHER = 'other';
/** Longest label value kept; a longer one is folded into "other". */
const MAX_LABEL_CHARS = 128;
const DEFAULT_MAX_SERIES = 500;

export type Labels = Readonly<Record<string, string | number>>;

interface MetricOptions {
  /** Label names, in the order they are rendered. */
  labels?: readonly string[];
  /** Allowed values of some labels; any other value becomes "other". */
  values?: Readonly<Record<string, readonly string[]>>;
  /** Most label combinations kept (default 500); later new ones become all-"other". */
  maxSeries?: number;
}

export interface Counter {
  /** Adds `n` (default 1, never negative). */
  inc(labels?: Labels, n?: number): void;
  /** Reads an unlabelled total kept elsewhere (one that only rises) when the metrics are rendered. */
  collect(read: () => number): void;
}
export interface Gauge {
  set(labels: Labels, value: number): void;
  inc(labels?: Labels, n?: number): void;
  dec(labels?: Labels, n?: number): void;
  /** Reads the value(s) when the metrics are rendered instead of keeping them (e.g. a queue's length). */
  collect(read: () => number | ReadonlyArray<readonly [Labels, number]>): void;
}
export interface Histogram {
  observe(labels: Labels, value: number): void;
}

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

/** The content type of `render()`'s output. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const escapeHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeValue = (s: string) =>
  s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

export function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** Label combinations of one metric: a key per combination, folded when out of bounds. */
class LabelSet {
  readonly names: readonly string[];
  private readonly allowed: ReadonlyMap<string, ReadonlySet<string>>;
  private readonly maxSeries: number;
  readonly keys = new Map<string, string[]>();

  constructor(name: string, opts: MetricOptions, reserved: readonly string[] = []) {
    this.names = opts.labels ?? [];
    for (const l of this.names) {
      if (!LABEL_NAME.test(l) || l.startsWith('__') || reserved.includes(l))
        throw new Error(`metrics: ${name} has an invalid label name ${l}`);
    }
    if (new Set(this.names).size !== this.names.length)
      throw new Error(`metrics: ${name} names a label twice`);
    this.allowed = new Map(Object.entries(opts.values ?? {}).map(([k, v]) => [k, new Set(v)]));
    this.maxSeries = opts.maxSeries ?? DEFAULT_MAX_SERIES;
  }

  /** The key of `labels` (values bounded), creating its series when there is room. */
  key(labels: Labels | undefined): string {
    const values = this.names.map((n) => {
      const raw = labels?.[n];
      const v = raw === undefined ? '' : String(raw);
      const allowed = this.allowed.get(n);
      return (allowed && !allowed.has(v)) || v.length > MAX_LABEL_CHARS ? OTHER : v;
    });
    let key = JSON.stringify(values);
    if (!this.keys.has(key)) {
      if (this.keys.size >= this.maxSeries) {
        values.fill(OTHER);
        key = JSON.stringify(values);
      }
      if (!this.keys.has(key)) this.keys.set(key, values);
    }
    return key;
  }

  /** `{a="x",b="y"}` for a series, with `extra` pairs (a histogram's `le`) at the end. */
  render(values: readonly string[], extra: ReadonlyArray<readonly [string, string]> = []): string {
    const pairs = [...this.names.map((n, i) => [n, values[i]!] as const), ...extra];
    return pairs.length ? `{${pairs.map(([k, v]) => `${k}="${escapeValue(v)}"`).join(',')}}` : '';
  }
}

interface Metric {
  name: string;
  render(): string[];
}

export function createMetricsRegistry(): MetricsRegistry {
  const metrics = new Map<string, Metric>();
  const add = <M extends Metric>(m: M): M => {
    if (!METRIC_NAME.test(m.name)) throw new Error(`metrics: invalid metric name ${m.name}`);
    if (metrics.has(m.name)) throw new Error(`metrics: ${m.name} is registered twice`);
    metrics.set(m.name, m);
    return m;
  };
  const header = (name: string, help: string, type: string) => [
    `# HELP ${name} ${escapeHelp(help)}`,
    `# TYPE ${name} ${type}`,
  ];

  return {
    counter(name, help, opts = {}) {
      const set = new LabelSet(name, opts);
      const values = new Map<string, number>();
      if (set.names.length === 0) values.set(set.key(undefined), 0);
      let reader: (() => number) | undefined;
      add({
        name,
        render() {
          if (reader) {
            const k = set.key(undefined);
            values.set(k, Math.max(values.get(k) ?? 0, reader()));
          }
          return [
            ...header(name, help, 'counter'),
            ...[...values].map(
              ([k, v]) => `${name}${set.render(set.keys.get(k)!)} ${formatNumber(v)}`,
            ),
          ];
        },
      });
      return {
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
    },

    gauge(name, help, opts = {}) {
      const set = new LabelSet(name, opts);
      const values = new Map<string, number>();
      let reader: (() => number | ReadonlyArray<readonly [Labels, number]>) | undefined;
      const change = (labels: Labels | undefined, f: (v: number) => number) => {
        const k = set.key(labels);
        values.set(k, f(values.get(k) ?? 0));
      };
      add({
        name,
        render() {
          if (reader) {
            const read = reader();
            if (typeof read === 'number') values.set(set.key(undefined), read);
            else for (const [labels, v] of read) values.set(set.key(labels), v);
          }
          return [
            ...header(name, help, 'gauge'),
            ...[...values].map(
              ([k, v]) => `${name}${set.render(set.keys.get(k)!)} ${formatNumber(v)}`,
            ),
          ];
        },
      });
      return {
        set: (labels, v) => change(labels, () => v),
        inc: (labels, n = 1) => change(labels, (v) => v + n),
        dec: (labels, n = 1) => change(labels, (v) => v - n),
        collect(read) {
          reader = read;
        },
      };
    },

    histogram(name, help, buckets, opts = {}) {
      if (
        buckets.length === 0 ||
        buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))
      )
        throw new Error(`metrics: ${name} needs finite buckets in ascending order`);
      const set = new LabelSet(name, opts, ['le']);
      const series = new Map<string, { counts: number[]; sum: number; count: number }>();
      add({
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
      });
      return {
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
    },

    render() {
      return `${[...metrics.values()].flatMap((m) => m.render()).join('\n')}\n`;
    },
  };
}
