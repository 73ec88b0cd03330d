/**
 * @module lib/config/convert — one setting's value checked by its kind, text from the
 * environment converted first; a wrong value is an error naming where it was written.
 */

import type { Kind } from './settings-table.ts';

/** How a node's messages are answered when a model is configured for it. */
export type AgentMode = 'model' | 'dynamic' | 'keyword';
const AGENT_MODES: readonly AgentMode[] = ['model', 'dynamic', 'keyword'];

/** @throws Error naming `where` when the value does not fit its kind. */
/** Checks one value by kind; text from the environment is converted first. */
export function convert(kind: Kind, value: unknown, fromEnv: boolean, where: string): unknown {
  if (value === undefined || value === null) return undefined;
  const bad = (what: string): never => {
    throw new Error(`${where} must be ${what}, got ${JSON.stringify(String(value).slice(0, 40))}`);
  };
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? value : bad('text');
    case 'level':
      return ['debug', 'info', 'warn', 'error'].includes(value as string)
        ? value
        : bad('debug, info, warn or error');
    case 'format':
      return value === 'text' || value === 'json' ? value : bad('text or json');
    case 'agent':
      return AGENT_MODES.includes(value as AgentMode) ? value : bad('model, dynamic or keyword');
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (fromEnv && /^(1|true|yes|on)$/i.test(value as string)) return true;
      if (fromEnv && /^(0|false|no|off)$/i.test(value as string)) return false;
      return bad('true or false');
    case 'list':
      if (Array.isArray(value) && value.every((v) => typeof v === 'string'))
        return value.map((v) => v.trim()).filter(Boolean);
      return typeof value === 'string'
        ? value
            .split(',')
            .map((h) => h.trim())
            .filter(Boolean)
        : bad('a list of text');
    case 'issuers': {
      // The variable names one issuer; the file a list of {issuer, audience?}.
      const list: unknown[] = typeof value === 'string' && fromEnv ? [{ issuer: value }] : [];
      if (!fromEnv && Array.isArray(value)) list.push(...value);
      else if (!fromEnv) return bad('a list of {issuer, audience}');
      const isEntry = (e: unknown): e is { issuer: string; audience?: string } =>
        typeof e === 'object' &&
        e !== null &&
        typeof (e as { issuer?: unknown }).issuer === 'string' &&
        ['undefined', 'string'].includes(typeof (e as { audience?: unknown }).audience) &&
        Object.keys(e).every((k) => k === 'issuer' || k === 'audience');
      return list.length <= 16 && list.every(isEntry)
        ? list
        : bad('a list of at most 16 {issuer, audience}');
    }
    case 'port':
    case 'integer': {
      const n =
        typeof value === 'number'
          ? value
          : fromEnv && /^[0-9]{1,9}$/.test(value as string)
            ? Number(value)
            : NaN;
      const ok = Number.isInteger(n) && (kind === 'port' ? n >= 0 && n <= 65535 : n >= 1);
      return ok ? n : bad(kind === 'port' ? 'a port number (0-65535)' : 'a positive integer');
    }
  }
}
