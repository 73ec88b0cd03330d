/**
 * Test support: a strict parser of the Prometheus text exposition format, version 0.0.4. It throws
 * on anything the format does not allow: a sample before its TYPE, a family split in two, a bad
 * metric or label name, a bad escape, a duplicate series, a histogram without its +Inf bucket or
 * with buckets that fall, `_count` unlike the +Inf bucket, or a negative counter.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface Family {
  name: string;
  help?: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const METRIC = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, line: number): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text))
    throw new Error(`line ${line}: bad value ${text}`);
  return Number(text);
}

/** Reads `{a="x",b="y"}` starting at `i`; returns the labels and the index after `}`. */
function parseLabels(s: string, i: number, line: number): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  i++; // {
  while (true) {
    if (s[i] === '}') return [labels, i + 1];
    const eq = s.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without =`);
    const name = s.slice(i, eq);
    if (!LABEL.test(name) || name.startsWith('__'))
      throw new Error(`line ${line}: bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new Error(`line ${line}: label ${name} twice`);
    if (s[eq + 1] !== '"') throw new Error(`line ${line}: label value must be quoted`);
    let j = eq + 2;
    let value = '';
    while (true) {
      const c = s[j];
      if (c === undefined) throw new Error(`line ${line}: unterminated label value`);
      if (c === '\n') throw new Error(`line ${line}: raw newline in a label value`);
      if (c === '"') break;
      if (c === '\\') {
        const n = s[j + 1];
        if (n === '\\') value += '\\';
        else if (n === '"') value += '"';
        else if (n === 'n') value += '\n';
        else throw new Error(`line ${line}: bad escape \\${n}`);
        j += 2;
      } else {
        value += c;
        j++;
      }
    }
    labels[name] = value;
    i = j + 1;
    if (s[i] === ',') i++;
    else if (s[i] !== '}') throw new Error(`line ${line}: expected , or } after a label`);
  }
}

/** The family a sample belongs to: histograms own name_bucket, name_sum and name_count. */
function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(sample);
  if (direct && direct.type !== 'histogram' && direct.type !== 'summary') return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sample.endsWith(suffix)) continue;
    const f = families.get(sample.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return direct;
}

export function parsePrometheus(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  let current: Family | undefined;
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((raw, idx) => {
    const line = idx + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!m) return; // an ordinary comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC.test(name)) throw new Error(`line ${line}: bad metric name ${name}`);
      if (closed.has(name))
        throw new Error(`line ${line}: ${name} appears again after other metrics`);
      let f = families.get(name);
      if (current && current.name !== name) closed.add(current.name);
      if (kind === 'HELP') {
        if (f?.help !== undefined) throw new Error(`line ${line}: second HELP for ${name}`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, '')))
          throw new Error(`line ${line}: bad escape in HELP`);
        if (!f) families.set(name, (f = { name, type: 'untyped', samples: [] }));
        f.help = rest;
      } else {
        if (!TYPES.has(rest)) throw new Error(`line ${line}: unknown type ${rest}`);
        if (f && (f.samples.length || (f as Family & { typed?: boolean }).typed))
          throw new Error(`line ${line}: TYPE for ${name} after its samples or twice`);
        if (!f) families.set(name, (f = { name, type: 'untyped', samples: [] }));
        f.type = rest as Family['type'];
        (f as Family & { typed?: boolean }).typed = true;
      }
      current = f;
      return;
    }
    const nameEnd = raw.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`line ${line}: not a sample: ${raw}`);
    const name = raw.slice(0, nameEnd);
    if (!METRIC.test(name)) throw new Error(`line ${line}: bad metric name ${name}`);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (raw[i] === '{') [labels, i] = parseLabels(raw, i, line);
    if (raw[i] !== ' ') throw new Error(`line ${line}: expected a space before the value`);
    const parts = raw.slice(i + 1).split(' ');
    if (
      parts.length < 1 ||
      parts.length > 2 ||
      (parts[1] !== undefined && !/^-?\d+$/.test(parts[1]))
    )
      throw new Error(`line ${line}: bad value or timestamp`);
    const value = parseValue(parts[0]!, line);
    const f = familyOf(name, families);
    if (!f || !(f as Family & { typed?: boolean }).typed)
      throw new Error(`line ${line}: sample ${name} before its TYPE`);
    if (current !== f)
      throw new Error(`line ${line}: sample ${name} is not next to its family's other lines`);
    if (f.type === 'counter' && !(value >= 0))
      throw new Error(`line ${line}: counter ${name} is negative or NaN`);
    if (f.type === 'histogram' && name.endsWith('_bucket') && labels.le === undefined)
      throw new Error(`line ${line}: a bucket without le`);
    if (f.type !== 'histogram' && 'le' in labels)
      throw new Error(`line ${line}: le on a ${f.type}`);
    const id = name + JSON.stringify(Object.entries(labels).sort());
    if (f.samples.some((s) => s.name + JSON.stringify(Object.entries(s.labels).sort()) === id))
      throw new Error(`line ${line}: duplicate series ${id}`);
    f.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const h = series.get(key) ?? { buckets: [] };
    series.set(key, h);
    if (s.name === `${f.name}_bucket`) h.buckets.push([parseValue(le!, 0), s.value]);
    else if (s.name === `${f.name}_sum`) h.sum = s.value;
    else if (s.name === `${f.name}_count`) h.count = s.value;
    else throw new Error(`${f.name}: stray sample ${s.name}`);
  }
  for (const [key, h] of series) {
    if (h.sum === undefined || h.count === undefined)
      throw new Error(`${f.name}${key}: _sum or _count missing`);
    const last = h.buckets[h.buckets.length - 1];
    if (!last || last[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket last`);
    for (let i = 1; i < h.buckets.length; i++) {
      if (!(h.buckets[i]![0] > h.buckets[i - 1]![0]))
        throw new Error(`${f.name}${key}: le not ascending`);
      if (h.buckets[i]![1] < h.buckets[i - 1]![1])
        throw new Error(`${f.name}${key}: bucket counts fall`);
    }
    if (last[1] !== h.count)
      throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} is not _count ${h.count}`);
  }
}

/** The value of one series (0 when absent). */
export function valueOf(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (
        s.name === name &&
        Object.keys(labels).length === Object.keys(s.labels).length &&
        Object.entries(labels).every(([k, v]) => s.labels[k] === v)
      )
        return s.value;
    }
  }
  return 0;
}

/** Fails unless every counter series (histogram counts included) of `before` is in `after` with a value as large. */
export function assertMonotonic(before: Map<string, Family>, after: Map<string, Family>): void {
  for (const f of before.values()) {
    if (f.type !== 'counter' && f.type !== 'histogram') continue;
    for (const s of f.samples) {
      if (f.type === 'histogram' && s.name.endsWith('_sum')) continue;
      const later = after
        .get(f.name)
        ?.samples.find(
          (t) => t.name === s.name && JSON.stringify(t.labels) === JSON.stringify(s.labels),
        );
      if (!later || later.value < s.value)
        throw new Error(
          `${s.name}${JSON.stringify(s.labels)} went from ${s.value} to ${later?.value}`,
        );
    }
  }
}
