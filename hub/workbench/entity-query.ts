/**
 * @module hub/workbench/entity-query — checks an entity query (`{name?, uscc?, code?}`): at least one
 * key, each of a sane shape, or ENTITY_BAD_QUERY with what is wrong.
 */

import { ok, type Result } from '../../lib/errors/result.ts';
import type { EntityFailure } from './entity-index.ts';
import { LEGAL, tokens } from './entity-names.ts';

export interface EntityQuery {
  name?: string;
  uscc?: string;
  code?: string;
}

const USCC_TEXT = /^[0-9A-Za-z]{1,32}$/;
const CODE_TEXT = /^\d{6}$/;

/** Checks the query: at least one key, each of a sane shape. */
export function checkQuery(q: EntityQuery): Result<EntityQuery, EntityFailure['error']> {
  const bad = (message: string): EntityFailure => ({
    ok: false,
    error: { code: 'ENTITY_BAD_QUERY', message },
  });
  if (!q || typeof q !== 'object') return bad('a query is {name?, uscc?, code?}');
  const out: EntityQuery = {};
  for (const k of ['name', 'uscc', 'code'] as const) {
    const v = q[k];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') return bad(`${k} must be a string`);
    out[k] = v.trim();
  }
  if (!out.name && !out.uscc && !out.code) return bad('give at least one of name, uscc, code');
  if (
    out.name !== undefined &&
    (out.name.length > 200 || tokens(out.name).filter((w) => !LEGAL.has(w)).length === 0)
  )
    return bad('name must have a distinctive word (and at most 200 characters)');
  if (out.uscc !== undefined && !USCC_TEXT.test(out.uscc))
    return bad('uscc must be letters and digits');
  if (out.code !== undefined && !CODE_TEXT.test(out.code))
    return bad('code must be a six-digit stock code');
  if (out.uscc) out.uscc = out.uscc.toUpperCase();
  return ok(out);
}
