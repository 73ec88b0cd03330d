/**
 * @module lib/catalog/capability — `capability({...})`: one capability declared with typed arguments and a
 * typed result. The argument type is derived from the declared specs, so `run` receives what the
 * catalog's argument checker lets through and `summarize` receives what `run` answers (a returned
 * `fail(…)` never reaches it).
 */

import type { Result } from '../errors/result.ts';
import type { ArgSpec, CallContext, Capability } from './catalog.ts';

/** The value an argument spec admits: an enum's literals, a string, a boolean or a number. */
type ArgValue<S extends ArgSpec> = S extends {
  type: 'string';
  enum: readonly (infer E extends string)[];
}
  ? E
  : S extends { type: 'string' }
    ? string
    : S extends { type: 'boolean' }
      ? boolean
      : number;

type RequiredArgs<A extends Record<string, ArgSpec>> = {
  [K in keyof A as A[K] extends { required: true } ? K : never]: ArgValue<A[K]>;
};
type OptionalArgs<A extends Record<string, ArgSpec>> = {
  [K in keyof A as A[K] extends { required: true } ? never : K]?: ArgValue<A[K]>;
};
type Flat<T> = { -readonly [K in keyof T]: T[K] };

/** The arguments `run` receives: required specs as fields, the others optional (absent, never null). */
export type ArgsOf<A extends Record<string, ArgSpec>> = Flat<RequiredArgs<A> & OptionalArgs<A>>;

/** A capability as a node file writes it; see `Capability` for the meaning of each field. */
interface CapabilitySpec<A extends Record<string, ArgSpec>, R> {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  keywords: string[];
  readOnly: boolean;
  args: A;
  /**
   * Runs with checked arguments. An expected failure is returned, `fail(code, message, field?)`,
   * and reaches the caller as it is; a throw is a bug (answered as an internal error).
   */
  run(
    args: ArgsOf<A>,
    signal?: AbortSignal,
    context?: CallContext,
  ): R | Result<R> | Promise<R | Result<R>>;
  summarize?(result: R): string;
}

/**
 * Declares a capability. The catalog checks every call's arguments against `args` before `run`
 * sees them (unknown, missing and ill-typed ones are refused with BAD_ARGS), which is what makes
 * the derived argument type true.
 */
export function capability<const A extends Record<string, ArgSpec>, R>(
  spec: CapabilitySpec<A, R>,
): Capability {
  // The one widening of the contract: the catalog only calls run with checked arguments, and only
  // hands summarize what run returned.
  return spec as unknown as Capability;
}
