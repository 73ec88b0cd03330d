/**
 * @module lib/mcp/server-params — the parameters of each MCP method, checked: a tool call's name
 * and arguments, a resource URI, a prompt's name and string arguments, a completion's reference
 * and argument, a log level. Each gives the value read or a message saying what is wrong.
 */

import { isPlainObject } from '../json/guards.ts';
import { LOG_LEVELS, type CompletionRef, type LogLevel } from './protocol.ts';

const shortString = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.length > 0 && v.length <= max;

export function toolParams(
  p: Record<string, unknown>,
): { name: string; args: Record<string, unknown> } | string {
  if (!shortString(p.name, 128)) return 'params.name must be a tool name';
  if (p.arguments !== undefined && !isPlainObject(p.arguments))
    return 'params.arguments must be an object';
  return { name: p.name, args: (p.arguments ?? {}) as Record<string, unknown> };
}

/** `params.uri`, when it is a URI of a sensible length. */
export const uriParam = (p: Record<string, unknown>): string | undefined =>
  shortString(p.uri, 512) ? p.uri : undefined;

/** A prompt's name and its arguments, every one a string (prompts/get). */
export function promptParams(
  p: Record<string, unknown>,
): { name: string; args: Record<string, string> } | string {
  if (!shortString(p.name, 128)) return 'params.name must be a prompt name';
  if (p.arguments === undefined) return { name: p.name, args: {} };
  if (!isPlainObject(p.arguments)) return 'params.arguments must be an object';
  const entries = Object.entries(p.arguments);
  if (entries.length > 64) return 'a prompt takes at most 64 arguments';
  for (const [k, v] of entries)
    if (typeof v !== 'string' || v.length > 16_384)
      return `argument ${k.slice(0, 64)} must be a string`;
  return { name: p.name, args: p.arguments as Record<string, string> };
}

/** What `completion/complete` completes: a reference and the argument typed so far. */
export function completeParams(
  p: Record<string, unknown>,
): { ref: CompletionRef; argument: { name: string; value: string } } | string {
  const ref = p.ref;
  const arg = p.argument;
  if (!isPlainObject(ref)) return 'params.ref must be an object';
  if (!isPlainObject(arg) || !shortString(arg.name, 128) || typeof arg.value !== 'string')
    return 'params.argument must be {name, value}';
  const argument = { name: arg.name, value: arg.value.slice(0, 1024) };
  if (ref.type === 'ref/prompt' && shortString(ref.name, 128))
    return { ref: { type: 'ref/prompt', name: ref.name }, argument };
  if (ref.type === 'ref/resource' && shortString(ref.uri, 512))
    return { ref: { type: 'ref/resource', uri: ref.uri }, argument };
  return 'params.ref must be a ref/prompt with a name or a ref/resource with a uri';
}

export const levelParam = (p: Record<string, unknown>): LogLevel | undefined =>
  LOG_LEVELS.find((l) => l === p.level);
