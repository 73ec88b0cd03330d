/**
 * @module lib/metrics/exposition — the Prometheus text exposition format (version 0.0.4) as the
 * registry writes it: a metric's HELP and TYPE lines, label values and numbers escaped and
 * spelled as the format wants.
 */

/** The content type of the registry's rendering. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A registered metric: its name and its lines in the text format. */
export interface Metric {
  name: string;
  render(): string[];
}

const escapeHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

export const escapeValue = (s: string) =>
  s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

export function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** A metric's `# HELP` and `# TYPE` lines. */
export const header = (name: string, help: string, type: string) => [
  `# HELP ${name} ${escapeHelp(help)}`,
  `# TYPE ${name} ${type}`,
];
