/**
 * @module lib/catalog/wire-descriptor — a capability descriptor as it comes from another process
 * (a node's public `/capabilities`, `resolve.catalog`): untrusted JSON, checked before anything
 * plans or lists over it. A malformed descriptor is left out, never half-used.
 */

import { isPlainObject } from '../json/guards.ts';
import type { ArgSpec, CapabilityDescriptor } from './catalog.ts';

/** A descriptor as it comes over the wire: tags, examples and keywords may be absent. */
export type WireDescriptor = Omit<CapabilityDescriptor, 'tags' | 'examples' | 'keywords'> & {
  tags?: string[];
  examples?: string[];
  keywords?: string[];
};

const isString = (v: unknown): v is string => typeof v === 'string';
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const optional = (v: unknown, is: (v: unknown) => boolean) => v === undefined || is(v);

const ARG_TYPES: readonly ArgSpec['type'][] = ['string', 'number', 'integer', 'boolean'];
const isArgSpec = (v: unknown): v is ArgSpec =>
  isPlainObject(v) &&
  ARG_TYPES.some((t) => t === v.type) &&
  isString(v.description) &&
  optional(v.required, (x) => typeof x === 'boolean') &&
  optional(v.enum, isStringList) &&
  optional(v.maxLength, (x) => typeof x === 'number');

/** A descriptor a planner can score and fill in. */
export const isWireDescriptor = (v: unknown): v is WireDescriptor =>
  isPlainObject(v) &&
  isString(v.id) &&
  isString(v.name) &&
  isString(v.description) &&
  typeof v.readOnly === 'boolean' &&
  isPlainObject(v.args) &&
  Object.values(v.args).every(isArgSpec) &&
  optional(v.tags, isStringList) &&
  optional(v.examples, isStringList) &&
  optional(v.keywords, isStringList);

/** The descriptors of a `/capabilities` answer that check; `undefined` when the answer has no list. */
export function wireDescriptorsOf(body: unknown): WireDescriptor[] | undefined {
  if (!isPlainObject(body) || !Array.isArray(body.capabilities)) return undefined;
  return body.capabilities.filter(isWireDescriptor);
}
