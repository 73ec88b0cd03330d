/**
 * @module lib/metrics/labels — the bounded label combinations of one metric: values outside a
 * label's allowed list, too long, or past the metric's series cap are folded into "other", so no
 * caller input can grow a metric without end.
 */

import { escapeValue } from './exposition.ts';

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** The label value everything unknown or past a cap is folded into. */
export const OTHER = 'other';
/** Longest label value kept; a longer one is folded into "other". */
const MAX_LABEL_CHARS = 128;
const DEFAULT_MAX_SERIES = 500;

export type Labels = Readonly<Record<string, string | number>>;

export interface MetricOptions {
  /** Label names, in the order they are rendered. */
  labels?: readonly string[];
  /** Allowed values of some labels; any other value becomes "other". */
  values?: Readonly<Record<string, readonly string[]>>;
  /** Most label combinations kept (default 500); later new ones become all-"other". */
  maxSeries?: number;
}

/** Label combinations of one metric: a key per combination, folded when out of bounds. */
export class LabelSet {
  readonly names: readonly string[];
  private readonly allowed: ReadonlyMap<string, ReadonlySet<string>>;
  private readonly maxSeries: number;
  readonly keys = new Map<string, string[]>();

  /** @throws Error on a label name the format refuses, a reserved one, or a name given twice. */
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
    // Each value with its length before it: distinct label values give distinct keys.
    let key = '';
    for (const n of this.names) {
      const v = this.bounded(n, labels?.[n]);
      key += `${v.length}:${v}`;
    }
    // A known series (every call after its first) allocates nothing more.
    if (this.keys.has(key)) return key;
    const values = this.names.map((n) => this.bounded(n, labels?.[n]));
    if (this.keys.size >= this.maxSeries) {
      values.fill(OTHER);
      key = values.map((v) => `${v.length}:${v}`).join('');
    }
    if (!this.keys.has(key)) this.keys.set(key, values);
    return key;
  }

  /** A label's value as a series keeps it: "other" when not allowed or too long. */
  private bounded(name: string, raw: string | number | undefined): string {
    const v = raw === undefined ? '' : String(raw);
    const allowed = this.allowed.get(name);
    return (allowed && !allowed.has(v)) || v.length > MAX_LABEL_CHARS ? OTHER : v;
  }

  /** `{a="x",b="y"}` for a series, with `extra` pairs (a histogram's `le`) at the end. */
  render(values: readonly string[], extra: ReadonlyArray<readonly [string, string]> = []): string {
    const pairs = [...this.names.map((n, i) => [n, values[i]!] as const), ...extra];
    return pairs.length ? `{${pairs.map(([k, v]) => `${k}="${escapeValue(v)}"`).join(',')}}` : '';
  }
}
