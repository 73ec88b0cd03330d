/**
 * @module lib/node/node-extensions — A2A extension negotiation around the node's JSON-RPC and
 * HTTP+JSON handlers (lib/a2a/extensions.ts; gRPC does the same in lib/a2a/grpc/call.ts): the
 * request's `A2A-Extensions` is read before the handler runs; a refusal (a required extension
 * left out: -32008; a list past its bounds: -32600) is answered in the binding's own error form,
 * with the request's id on JSON-RPC; otherwise the handler runs with the activated extensions as
 * its context and its answer, a stream's too, carries them in `A2A-Extensions`.
 */

import { AGENT_BACKED_EXTENSION } from '../a2a/card/card.ts';
import type { AgentExtension } from '../a2a/card/types.ts';
import { readBodyLimited, requestedVersion, jsonResponse } from '../a2a/binding/shared.ts';
import { isA2AError, toJsonRpcError, toRestError, type A2AError } from '../a2a/errors.ts';
import {
  EXTENSIONS_HEADER,
  echoOf,
  extensionsHeaderOf,
  negotiateExtensions,
  withExtensions,
} from '../a2a/extensions.ts';
import { codedJsonResponse } from '../metrics/answer-code.ts';

/** What the node's card declares: the agent-backed extension and the author's own. */
export const declaredExtensions = (own: readonly AgentExtension[] = []): AgentExtension[] => [
  { uri: AGENT_BACKED_EXTENSION, required: false },
  ...own,
];

/** The JSON-RPC id of a refused request's body, when it has one (read from a copy, bounded). */
async function idOf(req: Request, bytes: Uint8Array | undefined): Promise<string | number | null> {
  try {
    const text = await readBodyLimited(bytes ? req : req.clone(), 1024 * 1024, bytes);
    const doc = text === null ? undefined : JSON.parse(text);
    const id = doc && typeof doc === 'object' && !Array.isArray(doc) ? doc.id : undefined;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}

const rpcRefusal = async (req: Request, bytes: Uint8Array | undefined, err: A2AError) => {
  const v = requestedVersion(req.headers.get('a2a-version'));
  const version = isA2AError(v) ? '1.0' : v;
  const body = { jsonrpc: '2.0', id: await idOf(req, bytes), error: toJsonRpcError(err, version) };
  return jsonResponse(body, 200, err.code);
};

const restRefusal = (err: A2AError) => {
  const { http, body } = toRestError(err);
  return codedJsonResponse(body, http, err.code);
};

/**
 * Runs `handle` under the extensions `req` activates, or answers the refusal; `binding` says how
 * a refusal is written. `bytes`: the body when the node read it already (a signed request).
 */
export async function negotiated<R extends Response | undefined>(
  declared: readonly AgentExtension[],
  binding: 'jsonrpc' | 'rest',
  req: Request,
  handle: () => Promise<R>,
  bytes?: Uint8Array,
): Promise<R | Response> {
  const activated = negotiateExtensions(extensionsHeaderOf(req.headers), declared);
  if (isA2AError(activated))
    return binding === 'jsonrpc' ? rpcRefusal(req, bytes, activated) : restRefusal(activated);
  const res = await withExtensions(activated, handle);
  const echo = echoOf(activated);
  if (res && echo) res.headers.set(EXTENSIONS_HEADER, echo);
  return res;
}
