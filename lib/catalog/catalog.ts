/**
 * @module lib/catalog/catalog — a node's capability catalog, the single source for the agent card's skills,
 * the console's descriptors and dispatch (`/peer/invoke`, data parts, keyword picks). A capability
 * the card lists is exactly a capability dispatch can run.
 */

import { mayRun, scopeFor } from '../auth/scopes.ts';
import type { Principal } from '../auth/principal.ts';
import type { CatalogErrorCode } from '../errors/fleet.ts';
import { fail, ok, type Failure, type Result } from '../errors/result.ts';
import type { ArgSpec } from './arg-spec.ts';
import { argsFromText, MAX_TEXT_CHARS, namesAnArgument, patternProblem } from './text-args.ts';

export type { ArgSpec } from './arg-spec.ts';

/**
 * Who a capability runs for: the principal the surface authenticated (a signed node, a token, a
 * session), and, when that is a fleet node acting for someone (the hub for a console user), the
 * owner key it names in its signed request. The executor's per-principal limits read it.
 */
export interface CallContext {
  caller: Principal;
  onBehalfOf?: string;
}

/**
 * A capability as the catalog holds it. Node files declare one with `capability({...})`
 * (lib/catalog/capability.ts), which types `run`'s arguments from `args` and `summarize`'s input
 * from `run`'s result.
 */
export interface Capability {
  /** Dotted id such as `sector.movement`; also the skill id on the card. */
  id: string;
  name: string;
  description: string;
  /** Non-empty (the card requires at least one tag per skill). */
  tags: string[];
  examples?: string[];
  /** Words that make a text message pick this capability. */
  keywords: string[];
  /** Read-only capabilities may be picked from free text; others only by explicit call. */
  readOnly: boolean;
  args: Record<string, ArgSpec>;
  /**
   * Its answer, or an expected failure as a value: the kit's `fail(code, message, field?)` (or
   * `ok(result)`), which the catalog passes on as it is. A throw is a bug.
   */
  run(
    args: Record<string, unknown>,
    signal?: AbortSignal,
    context?: CallContext,
  ): Promise<unknown> | unknown;
  /** One line describing a result, for the text part of an answer. */
  summarize?(result: unknown): string;
}

/** A dispatch's outcome: a catalog code (lib/errors/fleet.ts) or the capability's own failure. */
type InvokeResult = Result<unknown, Failure<CatalogErrorCode | (string & {})>>;

export interface Skill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  inputModes: string[];
  outputModes: string[];
}

/** What the console needs to render a form for a capability. */
export interface CapabilityDescriptor {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples: string[];
  keywords: string[];
  readOnly: boolean;
  args: Record<string, ArgSpec>;
}

const CAPABILITY_ID = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

export class Catalog {
  private readonly byId: Map<string, Capability>;

  /** @throws Error when a capability is malformed or an id repeats (a bug in the node file). */
  constructor(readonly capabilities: readonly Capability[]) {
    this.byId = new Map();
    for (const c of capabilities) {
      if (!CAPABILITY_ID.test(c.id)) throw new Error(`catalog: bad capability id ${c.id}`);
      if (this.byId.has(c.id)) throw new Error(`catalog: duplicate capability ${c.id}`);
      if (!c.tags?.length) throw new Error(`catalog: ${c.id} needs at least one tag`);
      for (const [name, spec] of Object.entries(c.args)) {
        const problem = spec.pattern === undefined ? undefined : patternProblem(spec.pattern);
        if (problem) throw new Error(`catalog: ${c.id}'s argument ${name}: ${problem}`);
      }
      this.byId.set(c.id, c);
    }
    if (!capabilities.length) throw new Error('catalog: a node needs at least one capability');
  }

  find(id: string): Capability | undefined {
    return this.byId.get(id);
  }

  skills(): Skill[] {
    return this.capabilities.map((c) => ({
      id: c.id,
      name: c.name,
      description: c.description,
      tags: c.tags,
      ...(c.examples?.length ? { examples: c.examples } : {}),
      inputModes: ['text/plain', 'application/json'],
      outputModes: ['application/json', 'text/plain'],
    }));
  }

  descriptors(): CapabilityDescriptor[] {
    return this.capabilities.map((c) => ({
      id: c.id,
      name: c.name,
      description: c.description,
      tags: c.tags,
      examples: c.examples ?? [],
      keywords: c.keywords,
      readOnly: c.readOnly,
      args: c.args,
    }));
  }

  /**
   * Checks arguments against a capability's specs; unknown arguments are refused. The checked
   * arguments hold only the given values: an optional argument sent as null is left out, so `run`
   * sees it absent (the type `capability()` derives says so). A refusal is BAD_ARGS naming the
   * argument (`field`), when it is one argument's fault.
   */
  checkArgs(cap: Capability, args: unknown): Result<Record<string, unknown>, Failure<'BAD_ARGS'>> {
    if (args === undefined || args === null) args = {};
    if (typeof args !== 'object' || Array.isArray(args))
      return fail('BAD_ARGS', 'args must be an object', 'args');
    const given = args as Record<string, unknown>;
    for (const name of Object.keys(given))
      if (!Object.hasOwn(cap.args, name)) return fail('BAD_ARGS', `unknown argument ${name}`, name);
    const checked: Record<string, unknown> = {};
    for (const [name, spec] of Object.entries(cap.args)) {
      const v = given[name];
      if (v === undefined || v === null) {
        if (spec.required)
          return fail('BAD_ARGS', `missing argument ${name}: ${spec.description}`, name);
        continue;
      }
      const okType =
        spec.type === 'string'
          ? typeof v === 'string' && v.length <= (spec.maxLength ?? 1024)
          : spec.type === 'boolean'
            ? typeof v === 'boolean'
            : spec.type === 'integer'
              ? Number.isInteger(v)
              : typeof v === 'number' && Number.isFinite(v);
      if (!okType) return fail('BAD_ARGS', `argument ${name} must be a ${spec.type}`, name);
      if (spec.enum && !spec.enum.includes(v as string))
        return fail('BAD_ARGS', `argument ${name} must be one of ${spec.enum.join(', ')}`, name);
      checked[name] = v;
    }
    return ok(checked);
  }

  /**
   * Runs a capability by id; every expected failure is a coded value: the catalog's own
   * (UNKNOWN_CAPABILITY, BAD_ARGS) or the one the capability returned, code, message and field
   * as it gave them.
   * @throws whatever a capability throws (a bug: the surface that called answers it as an
   * internal error and logs it).
   */
  async invoke(
    id: string,
    args: unknown,
    signal?: AbortSignal,
    context?: CallContext,
  ): Promise<InvokeResult> {
    const cap = this.byId.get(id);
    if (!cap)
      return {
        ok: false,
        error: {
          code: 'UNKNOWN_CAPABILITY',
          message: `unknown capability ${id}; this node offers ${[...this.byId.keys()].join(', ')}`,
        },
      };
    const checked = this.checkArgs(cap, args);
    if (!checked.ok) return checked;
    return this.runChecked(cap, checked.result, signal, context);
  }

  /**
   * Runs a capability on arguments `checkArgs` passed (a caller that answers a refusal in its own
   * way checks them first, once): its result with the guarded summary, or its own failure.
   * @throws whatever the capability throws (a bug), as `invoke`.
   */
  async runChecked(
    cap: Capability,
    checked: Record<string, unknown>,
    signal?: AbortSignal,
    context?: CallContext,
  ): Promise<InvokeResult> {
    // An issuer's user runs only what its token's scopes cover (lib/auth/scopes.ts).
    if (context && !mayRun(context.caller, cap))
      return {
        ok: false,
        error: {
          code: 'INSUFFICIENT_SCOPE',
          message: `${cap.id} needs the scope ${scopeFor(cap)}, which the access token does not carry`,
        },
      };
    const answer = await cap.run(checked, signal, context);
    const settled = settledOf(answer);
    if (!settled.ok) return settled;
    const summary = summarizeSafely(cap, settled.result);
    return summary === undefined
      ? { ok: true, result: settled.result }
      : { ok: true, result: settled.result, summary };
  }

  /**
   * Picks the read-only capability whose keywords a text names most often, and the arguments the
   * text gives it (lib/catalog/text-args.ts; an argument it names ambiguously is left out).
   * Undefined when nothing matches.
   */
  pickByText(text: string): { cap: Capability; args: Record<string, unknown> } | undefined {
    const cap = this.byKeywords(text) ?? this.byArguments(text)[0];
    if (!cap) return undefined;
    const read = argsFromText(text, cap.args);
    if (read.ok) return { cap, args: read.args };
    const { [read.arg]: _, ...rest } = cap.args;
    const partial = argsFromText(text, rest);
    return { cap, args: partial.ok ? partial.args : {} };
  }

  /**
   * What a text message asks for: a capability with its arguments, a capability and the question
   * for the argument it lacks or names ambiguously, a question between several capabilities its
   * arguments fit, or nothing (no capability's keywords or identifiers appear in it).
   */
  readText(text: string): TextReading {
    if (text.length > MAX_TEXT_CHARS) return { kind: 'too-long' };
    const cap = this.byKeywords(text);
    if (!cap) {
      const fits = this.byArguments(text);
      if (fits.length > 1) return { kind: 'which', caps: fits };
      if (!fits[0]) return { kind: 'none' };
      return this.readFor(fits[0], text);
    }
    return this.readFor(cap, text);
  }

  /** A text read for one capability (a reply to its question, or a text that picked it). */
  readFor(cap: Capability, text: string): TextReading {
    const read = argsFromText(text, cap.args);
    return read.ok
      ? { kind: 'call', cap, args: read.args }
      : { kind: 'ask', cap, arg: read.arg, question: read.question };
  }

  private byKeywords(text: string): Capability | undefined {
    const lower = text.toLowerCase();
    let best: Capability | undefined;
    let bestScore = 0;
    for (const c of this.capabilities) {
      if (!c.readOnly) continue;
      const score = c.keywords.reduce((n, k) => n + (lower.includes(k.toLowerCase()) ? 1 : 0), 0);
      if (score > bestScore) {
        best = c;
        bestScore = score;
      }
    }
    return best;
  }

  /** Read-only capabilities an identifier in the text fits, whose arguments it gives in full. */
  private byArguments(text: string): Capability[] {
    return this.capabilities.filter(
      (c) => c.readOnly && namesAnArgument(text, c.args) && argsFromText(text, c.args).ok,
    );
  }
}

/** What a text message asks a catalog for (`Catalog.readText`). */
export type TextReading =
  | { kind: 'call'; cap: Capability; args: Record<string, unknown> }
  | { kind: 'ask'; cap: Capability; arg: string; question: string }
  | { kind: 'which'; caps: Capability[] }
  | { kind: 'too-long' }
  | { kind: 'none' };

/**
 * What `run` answered, as a result: a returned `fail(…)` is the failure (its code, message and
 * field, nothing else), an `ok(…)` its value, anything else the value itself.
 */
function settledOf(answer: unknown): Result<unknown, Failure> {
  if (typeof answer !== 'object' || answer === null || !('ok' in answer))
    return { ok: true, result: answer };
  const a = answer as { ok: unknown; result?: unknown; error?: unknown };
  if (a.ok === true && 'result' in a) return { ok: true, result: a.result };
  if (a.ok !== false || !isFailure(a.error)) return { ok: true, result: answer };
  const { code, message, field } = a.error;
  return {
    ok: false,
    error: typeof field === 'string' ? { code, message, field } : { code, message },
  };
}

function isFailure(e: unknown): e is Failure {
  const f = e as Partial<Failure> | null;
  return (
    typeof f === 'object' &&
    f !== null &&
    typeof f.code === 'string' &&
    typeof f.message === 'string'
  );
}

/** The capability's one-line summary of a result; a summarizer that throws gives none. */
function summarizeSafely(cap: Capability, result: unknown): string | undefined {
  if (!cap.summarize) return undefined;
  try {
    return cap.summarize(result);
  } catch {
    return undefined;
  }
}
