/**
 * @module lib/a2a/extensions — A2A extensions negotiated per request (A2A 1.0 §3.3.4, §4.6): the
 * caller names the extensions it activates in `A2A-Extensions` (an HTTP header, or gRPC metadata;
 * 0.3's `X-A2A-Extensions` too), comma-separated URIs; the node activates those its card declares
 * and says which in the answer's `A2A-Extensions` (streams too); a call that does not name an
 * extension the card marks `required` is refused with ExtensionSupportRequiredError (-32008).
 * The list is bounded (`EXTENSION_LIMITS`) and read before any work. While a call runs, the
 * activated extensions are its context (an `AsyncLocalStorage`): a capability asks
 * `extensionActive(uri)`.
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type { AgentExtension } from './card/types.ts';
import { a2aError, type A2AError } from './errors.ts';

export const EXTENSIONS_HEADER = 'A2A-Extensions';
const LEGACY_HEADER = 'X-A2A-Extensions';

/** Bounds of one request's list (docs/limits.md). */
const EXTENSION_LIMITS = { headerChars: 8 * 1024, uris: 32, uriChars: 2048 } as const;

/** The header's value as a request carries it (the 1.0 name first, then 0.3's). */
export const extensionsHeaderOf = (headers: Headers): string | null =>
  headers.get(EXTENSIONS_HEADER) ?? headers.get(LEGACY_HEADER);

/**
 * The extensions a request activates (declared ones it names, in the card's order), or why it is
 * refused: a list past its bounds (INVALID_REQUEST), or a required extension it leaves out
 * (EXTENSION_SUPPORT_REQUIRED). Names the card does not declare are ignored, as §3.3.4 says.
 */
export function negotiateExtensions(
  header: string | null | undefined,
  declared: readonly AgentExtension[],
): string[] | A2AError {
  const raw = header ?? '';
  if (raw.length > EXTENSION_LIMITS.headerChars)
    return a2aError(
      'INVALID_REQUEST',
      `${EXTENSIONS_HEADER} is longer than ${EXTENSION_LIMITS.headerChars} characters`,
    );
  const asked = raw
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  if (
    asked.length > EXTENSION_LIMITS.uris ||
    asked.some((u) => u.length > EXTENSION_LIMITS.uriChars)
  )
    return a2aError(
      'INVALID_REQUEST',
      `${EXTENSIONS_HEADER} names at most ${EXTENSION_LIMITS.uris} extensions of at most ${EXTENSION_LIMITS.uriChars} characters`,
    );
  const named = new Set(asked);
  const missing = declared.find((e) => e.required && !named.has(e.uri));
  if (missing)
    return a2aError(
      'EXTENSION_SUPPORT_REQUIRED',
      `This agent requires the extension ${missing.uri}: name it in ${EXTENSIONS_HEADER}`,
    );
  return declared.filter((e) => named.has(e.uri)).map((e) => e.uri);
}

/** The answer's `A2A-Extensions` value: the activated URIs, or undefined when none is. */
export const echoOf = (activated: readonly string[]): string | undefined =>
  activated.length ? activated.join(', ') : undefined;

const current = new AsyncLocalStorage<readonly string[]>();
const NONE: readonly string[] = Object.freeze([]);

/** Runs `fn` (and all it starts: the task's agent turn, its capabilities) with `activated`. */
export function withExtensions<T>(activated: readonly string[], fn: () => T): T {
  return activated.length || current.getStore() ? current.run(activated, fn) : fn();
}

/** The extensions the caller of the running call activated. */
export const activeExtensions = (): readonly string[] => current.getStore() ?? NONE;

/** Whether the caller of the running call activated the extension `uri` (and the node declares it). */
export const extensionActive = (uri: string): boolean => activeExtensions().includes(uri);
