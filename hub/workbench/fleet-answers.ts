/**
 * @module hub/workbench/fleet-answers — the answers the hub reads from other nodes, typed once and
 * checked when they arrive: another node's answer is untrusted input, so one of the wrong shape
 * becomes a coded failure (NODE_BAD_ANSWER) instead of a crash further on. Checks keep the
 * object as it came (extra fields included), so an answer passed on is passed on unchanged.
 */

import { isWireDescriptor, type WireDescriptor } from '../../lib/catalog/wire-descriptor.ts';
import { isPlainObject } from '../../lib/json/guards.ts';
import type { Failure, Result } from '../../lib/errors/result.ts';
import type { FleetInvoker, InvokeOptions } from '../../lib/fleet/invoke.ts';

// ---- checks of plain JSON ----

/** A JSON object whose fields are not yet checked. */
export type Fields = Record<string, unknown>;
type Check<T> = (v: unknown) => v is T;

export const isString = (v: unknown): v is string => typeof v === 'string';
export const isNumber = (v: unknown): v is number => typeof v === 'number';
export const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const listOf = <T>(v: unknown, each: Check<T>): v is T[] => Array.isArray(v) && v.every(each);
const optional = <T>(v: unknown, is: Check<T>): v is T | undefined => v === undefined || is(v);

/**
 * Calls `capability` on `node` (fleet.invoke, traced) and checks the answer: the call's own failure
 * as it is, an answer `is` refuses as NODE_BAD_ANSWER.
 */
export async function readFrom<T>(
  invoker: FleetInvoker,
  node: string,
  capability: string,
  is: Check<T>,
  args: Fields = {},
  timeoutMs?: number,
  opts?: InvokeOptions,
): Promise<Result<T, Failure>> {
  const r = await invoker.invoke(node, capability, args, timeoutMs, opts);
  if (!r.ok) return r;
  if (!is(r.result))
    return {
      ok: false,
      error: {
        code: 'NODE_BAD_ANSWER',
        message: `${node} ${capability}: the answer is not in the expected shape`,
      },
    };
  return { ok: true, result: r.result };
}

// ---- scanner: sector.movement ----

interface SectorMove {
  sector: string;
  name: string;
  avgChangePct: number;
  signaled: number;
}
export interface MovementAnswer {
  asOf: string;
  sectors: SectorMove[];
}

const isSectorMove = (v: unknown): v is SectorMove =>
  isPlainObject(v) &&
  isString(v.sector) &&
  isString(v.name) &&
  isNumber(v.avgChangePct) &&
  isNumber(v.signaled);
export const isMovementAnswer = (v: unknown): v is MovementAnswer =>
  isPlainObject(v) && isString(v.asOf) && listOf(v.sectors, isSectorMove);

// ---- crm: crm.industries ----

/** Customers of one industry, counted by follow-up state (new, contacted, in-follow-up, …). */
interface IndustryCount {
  industry: string;
  customers: number;
  followUp: Partial<Record<string, number>>;
}
export interface IndustriesAnswer {
  industries: IndustryCount[];
}

const isIndustryCount = (v: unknown): v is IndustryCount =>
  isPlainObject(v) &&
  isString(v.industry) &&
  isNumber(v.customers) &&
  isPlainObject(v.followUp) &&
  Object.values(v.followUp).every(isNumber);
export const isIndustriesAnswer = (v: unknown): v is IndustriesAnswer =>
  isPlainObject(v) && listOf(v.industries, isIndustryCount);

// ---- crm: crm.companies and scanner: sector.stocks (entity alignment) ----

/** A row with its key fields checked; the others are read one by one, never trusted. */
type CompanyRow = Fields & { id: string; name: string };
type StockRow = Fields & { code: string; name: string };
export const isCompanyRow = (v: unknown): v is CompanyRow =>
  isPlainObject(v) && isString(v.id) && isString(v.name);
export const isStockRow = (v: unknown): v is StockRow =>
  isPlainObject(v) && isString(v.code) && isString(v.name);

// ---- resolve: resolve.catalog, and a node's own /capabilities ----

export { isWireDescriptor, type WireDescriptor };

interface CatalogAnswer {
  nodes: { node: string; capabilities: unknown[] }[];
}

export const isCatalogAnswer = (v: unknown): v is CatalogAnswer =>
  isPlainObject(v) &&
  listOf(
    v.nodes,
    (n): n is CatalogAnswer['nodes'][number] =>
      isPlainObject(n) && isString(n.node) && Array.isArray(n.capabilities),
  );

// ---- resolve: exec.submit and exec.status (delegation) ----

interface Submitted {
  job_id: string;
  recipe?: string;
}
interface Job {
  job_id: string;
  recipe?: string;
  state: 'running' | 'succeeded' | 'failed' | 'canceled';
  output?: string;
  outputTruncated?: boolean;
  exitCode?: number | null;
  error?: string;
  progress?: unknown;
}
const JOB_STATES: readonly Job['state'][] = ['running', 'succeeded', 'failed', 'canceled'];

export const isSubmitted = (v: unknown): v is Submitted =>
  isPlainObject(v) && isString(v.job_id) && optional(v.recipe, isString);
const isJob = (v: unknown): v is Job =>
  isPlainObject(v) &&
  isString(v.job_id) &&
  JOB_STATES.some((s) => s === v.state) &&
  optional(v.recipe, isString) &&
  optional(v.output, isString) &&
  optional(v.outputTruncated, isBoolean) &&
  (v.exitCode === null || optional(v.exitCode, isNumber)) &&
  optional(v.error, isString);
/** `job` is absent when the executor does not know the job. */
export const isJobStatus = (v: unknown): v is { job?: Job } =>
  isPlainObject(v) && optional(v.job, isJob);
