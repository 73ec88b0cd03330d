/**
 * @module lib/log-limit — repeated identical log lines, rate-limited: the same level, message and
 * fields are written at most `burst` times per window; the rest are counted and reported once as
 * `repeated` when the window ends (on the next line of that kind, or the next line of any kind
 * after it). A flood of one refusal cannot grow the log without bound. At most `maxKinds` kinds
 * are tracked; past that the oldest is forgotten (and its count reported).
 */

/** The logger's shape (lib/log.ts imports this module, so its types are restated here). */
type LogLevel = string;
type LogFields = Record<string, string | number | boolean | null | undefined>;
type Write<L extends LogLevel> = (level: L, msg: string, fields?: LogFields) => void;

export interface LogLimitOptions {
  /** Identical lines written per window before the rest are only counted (default 5). */
  burst?: number;
  /** The window, in ms (default 10 000). */
  windowMs?: number;
  /** Kinds of line tracked at once (default 1 000). */
  maxKinds?: number;
  now?: () => number;
}

interface Kind<L> {
  level: L;
  msg: string;
  fields: LogFields | undefined;
  since: number;
  written: number;
  dropped: number;
}

export function rateLimitedLog<L extends LogLevel>(
  write: Write<L>,
  opts: LogLimitOptions = {},
): Write<L> {
  const burst = opts.burst ?? 5;
  const windowMs = opts.windowMs ?? 10_000;
  const maxKinds = opts.maxKinds ?? 1000;
  const now = opts.now ?? Date.now;
  const kinds = new Map<string, Kind<L>>();
  const report = (k: Kind<L>) => {
    if (k.dropped > 0)
      write(k.level, k.msg, { ...k.fields, repeated: k.dropped, window_ms: windowMs });
  };
  // Ends every window that is over, reporting what it dropped (oldest kinds come first in the map).
  const sweep = (t: number) => {
    for (const [key, k] of kinds) {
      if (t - k.since < windowMs) continue;
      kinds.delete(key);
      report(k);
    }
  };
  return (level, msg, fields) => {
    const t = now();
    sweep(t);
    const key = `${level}\u0000${msg}\u0000${fields ? JSON.stringify(fields) : ''}`;
    let k = kinds.get(key);
    if (!k) {
      if (kinds.size >= maxKinds) {
        const [oldest, first] = kinds.entries().next().value!;
        kinds.delete(oldest);
        report(first);
      }
      k = { level, msg, fields, since: t, written: 0, dropped: 0 };
      kinds.set(key, k);
    }
    if (k.written < burst) {
      k.written++;
      write(level, msg, fields);
    } else k.dropped++;
  };
}
