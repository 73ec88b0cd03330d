/**
 * @module lib/log — one-line structured logger. Passed into every component as a dependency so tests
 * can capture lines; nothing in lib/ writes to the console directly. The console logger writes
 * text (`time level name msg k=v …`) or, with `format: 'json'` (LOG_FORMAT=json), one JSON object
 * per line; either way a field whose name says it holds a secret is written as `[redacted]`, and
 * identical lines past a few per window are counted, not written.
 */

import { rateLimitedLog } from './log-limit.ts';
import { currentTrace } from './telemetry/trace-context.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, string | number | boolean | null | undefined>;
export type Log = (level: LogLevel, msg: string, fields?: LogFields) => void;
export type LogFormat = 'text' | 'json';

/**
 * Field names that hold secrets (keys, tokens, passwords, credentials, signatures, cookies).
 * Nothing should log one; this is the defence for the day something does.
 */
const SECRET_FIELD =
  /(key|token|secret|passw(or)?d|credential|authorization|signature|cookie|bearer)s?$/i;
export const REDACTED = '[redacted]';
const BEARER = /\b(bearer)\s+([A-Za-z0-9._~+/=-]+)/gi;
/**
 * Whether what follows `Bearer` is a credential rather than a word of the sentence ("the bearer
 * token is not valid"): a token has a character a word lacks (digit, `.`, `_`, `-`, …), a capital
 * inside it, or the length of one (16 and more).
 */
const credential = (s: string) => s.length >= 16 || /[^A-Za-z]/.test(s) || /.[A-Z]/.test(s);
/** A password inside a URL (`postgres://user:password@host`). */
const URL_PASSWORD = /(\/\/[^\s:/@]+:)[^\s@/]+@/g;
/** Keys by their form, wherever they stand: `sk-…` API keys and this kit's `lume_…` tokens. */
const KEYS = /\b(?:sk-[A-Za-z0-9_-]{16,}|lume_[A-Za-z0-9_-]{20,})/g;
/** PEM key material, whole. */
const PEM =
  /-----BEGIN [A-Z0-9 ]*(?:PRIVATE|SECRET) KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*KEY-----|$)/g;
/** A value given to a secret-named key: `MODEL_API_KEY=…`, `"privateKey": "…"`, `password=…`. */
const NAMED =
  /(\b[\w-]*(?:key|token|secret|passw(?:or)?d|credential)s?(?:"\s*:\s*"|=))[^\s"&,;}]+/gi;
/** Text with secrets cut out: bearer credentials, keys, key material, named values, URL passwords. */
const scrub = (text: string) =>
  text
    .replace(PEM, REDACTED)
    .replace(BEARER, (all, word: string, value: string) =>
      credential(value) ? `${word} ${REDACTED}` : all,
    )
    .replace(KEYS, REDACTED)
    .replace(NAMED, `$1${REDACTED}`)
    .replace(URL_PASSWORD, `$1${REDACTED}@`);

/** The fields as written: secret-named ones redacted, bearer credentials and URL passwords cut out of any text. */
export function redactFields(fields: LogFields): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    if (SECRET_FIELD.test(k) && v !== null && typeof v !== 'boolean') out[k] = REDACTED;
    else out[k] = typeof v === 'string' ? scrub(v) : v;
  }
  return out;
}

/**
 * A logger that writes to stderr (stdout stays free for CLIs). JSON lines carry `time`, `level`,
 * `logger`, `msg` and `fields`, and the W3C `trace_id`/`span_id` of the request being served, if any.
 */
export function consoleLog(
  name: string,
  minLevel: LogLevel = 'info',
  format: LogFormat = 'text',
): Log {
  const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  // Identical lines are written a few times per window, then counted (lib/log-limit.ts). A line
  // below the level is dropped first, before the limiter encodes it to tell it from the others.
  const limited = rateLimitedLog((level: LogLevel, msg: string, fields?: LogFields) => {
    const safe = fields ? redactFields(fields) : {};
    const text = scrub(msg);
    let line: string;
    if (format === 'json') {
      const trace = currentTrace();
      line = JSON.stringify({
        time: new Date().toISOString(),
        level,
        logger: name,
        msg: text,
        fields: safe,
        ...(trace ? { trace_id: trace.traceId, span_id: trace.spanId } : {}),
      });
    } else {
      line = `${new Date().toISOString()} ${level} ${name} ${text}`;
      for (const [k, v] of Object.entries(safe)) line += ` ${k}=${JSON.stringify(v)}`;
    }
    process.stderr.write(`${line}\n`);
  });
  const log: Log = (level, msg, fields) => {
    if (order[level] >= order[minLevel]) limited(level, msg, fields);
  };
  levels.set(log, order[minLevel]);
  return log;
}

/**
 * The lines a process prints for its reader on stdout (its self-check, "listening on", its console
 * URL): as written in text, and with `format: 'json'` one JSON object each, shaped as the log
 * lines, so LOG_FORMAT=json leaves no plain line in either stream.
 */
export function stdoutLog(name: string, format: LogFormat = 'text'): Log {
  return (level, msg, fields) => {
    const line =
      format === 'json'
        ? JSON.stringify({
            time: new Date().toISOString(),
            level,
            logger: name,
            msg: scrub(msg),
            fields: fields ? redactFields(fields) : {},
          })
        : msg;
    process.stdout.write(`${line}\n`);
  };
}

/** The least level each console logger writes (a logger not listed writes every level). */
const levels = new WeakMap<Log, number>();
const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Whether `log` writes lines of `level`: a caller skips building a line that would be dropped. */
export const logs = (log: Log, level: LogLevel): boolean =>
  log !== silentLog && ORDER[level] >= (levels.get(log) ?? 0);

/** LOG_FORMAT's value as a format; anything but `json` is text. */
export const logFormatOf = (value: string | undefined): LogFormat =>
  value?.trim().toLowerCase() === 'json' ? 'json' : 'text';

/** A logger that keeps lines in memory; tests read `lines`. */
export function memoryLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  const log = ((level: LogLevel, msg: string, fields?: LogFields) => {
    lines.push(`${level} ${msg}${fields ? ` ${JSON.stringify(fields)}` : ''}`);
  }) as Log & { lines: string[] };
  log.lines = lines;
  return log;
}

/** Discards everything. */
export const silentLog: Log = () => {};
