/**
 * @module log — one-line structured logger. Passed into every component as a dependency so tests
 * can capture lines; nothing in lib/ writes to the console directly.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, string | number | boolean | null | undefined>;
export type Log = (level: LogLevel, msg: string, fields?: LogFields) => void;

/** A logger that writes `level name msg k=v …` lines to stderr (stdout stays free for CLIs). */
export function consoleLog(name: string, minLevel: LogLevel = 'info'): Log {
  const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  return (level, msg, fields) => {
    if (order[level] < order[minLevel]) return;
    let line = `${new Date().toISOString()} ${level} ${name} ${msg}`;
    if (fields) for (const [k, v] of Object.entries(fields)) if (v !== undefined) line += ` ${k}=${JSON.stringify(v)}`;
    process.stderr.write(line + '\n');
  };
}

/** A logger that keeps lines in memory; tests read `lines`. */
export function memoryLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  const log = ((level: LogLevel, msg: string, fields?: LogFields) => {
    lines.push(`${level} ${msg}${fields ? ' ' + JSON.stringify(fields) : ''}`);
  }) as Log & { lines: string[] };
  log.lines = lines;
  return log;
}

/** Discards everything. */
export const silentLog: Log = () => {};
