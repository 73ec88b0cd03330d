/**
 * @module lib/node/node-auth — who a request to a node speaks for, under the node's access
 * policy (lib/auth/access.ts): a bearer token, or on `/a2a` a fleet node's signature over the
 * body as it arrived (its bytes handed on to the binding, read once); the same policy for gRPC
 * metadata and for `/metrics` beyond loopback.
 */

import type { AccessPolicy, AuthOutcome } from '../auth/access.ts';
import type { Principal } from '../auth/principal.ts';
import { mayRead } from '../auth/scopes.ts';
import { readBodyBytes } from '../body.ts';
import { a2aError, isA2AError, toRestError, type A2AError } from '../a2a/errors.ts';
import { rpcError } from '../a2a/jsonrpc/envelope.ts';
import { challenge, jsonResponse, requestedVersion } from '../a2a/binding/shared.ts';
import type { Log } from '../log.ts';
import type { PeerVerifier } from '../peer/verifier.ts';
import { PEER_HEADER } from '../peer/signature.ts';

/** The scope a fleet node signs an A2A request with (route `/a2a`). */
export const A2A_SIGNED_SCOPE = 'a2a';

const TOKEN_NEEDED =
  'This node is reachable beyond this machine, so every A2A call needs a bearer token';

export interface NodeAuthOptions {
  policy: AccessPolicy;
  host: string;
  log: Log;
  /** The fleet's keys, when the node has a peer channel; without them a signed call is refused. */
  verifier?: PeerVerifier;
  /** The largest signed body read to check its signature. */
  maxBody: number;
}

export interface NodeAuth {
  /**
   * Who an A2A request speaks for, or the 401 that refuses it. On `/a2a` a fleet node may sign its
   * request as on the peer routes (scope `a2a`); the body is read once to check it and its bytes
   * handed on (`body`), for the binding to read instead of the spent request.
   */
  identify(request: Request, jsonRpc: boolean): Promise<Identified | Response>;
  /** A gRPC call's caller, from its metadata: a bearer token under the same policy (no fleet signature). */
  identifyGrpc(metadata: Headers): Promise<Principal | A2AError>;
  /**
   * `/metrics` asks the same policy as the A2A routes (beyond loopback: a principal): undefined
   * lets the request through, a response refuses it.
   */
  metricsAccess(req: Request): Promise<Response | undefined>;
}

/** Who a request speaks for; `body`: its bytes, when they were read to check a signature. */
export interface Identified {
  caller: Principal;
  body?: Uint8Array;
}

export function createNodeAuth(o: NodeAuthOptions): NodeAuth {
  const { policy, log, verifier, maxBody } = o;

  const refusal = (
    request: Request,
    jsonRpc: boolean,
    message: string,
    err: A2AError = a2aError('UNAUTHENTICATED', message),
  ): Response => {
    const { http, body } = toRestError(err);
    const v = requestedVersion(request.headers.get('a2a-version'));
    const res = jsonResponse(
      jsonRpc ? rpcError(null, err, typeof v === 'string' ? v : '1.0') : body,
      http,
      err.code,
    );
    if (err.code === 'ISSUER_UNAVAILABLE') res.headers.set('Retry-After', '5');
    return err.code === 'UNAUTHENTICATED' ? challenge(res) : res;
  };

  /**
   * The caller a proof names under the policy, or the A2A error that refuses it: a wrong proof
   * (UNAUTHENTICATED), an issuer out of reach (ISSUER_UNAVAILABLE), an issuer's token without any
   * A2A scope (INSUFFICIENT_SCOPE), or nobody where a principal is required.
   */
  const callerOf = (who: AuthOutcome, hint: string): Principal | A2AError => {
    if (!who.ok) return a2aError(who.error.code, who.error.message);
    if (who.result.kind === 'anonymous' && policy.anonymous === 'none')
      return a2aError('UNAUTHENTICATED', `${TOKEN_NEEDED} (${hint}: Bearer …)`);
    if (!mayRead(who.result))
      return a2aError(
        'INSUFFICIENT_SCOPE',
        'The access token names none of the scopes a2a.read, a2a.write, a2a.exec',
      );
    return who.result;
  };

  /** A fleet node's signed `/a2a` request: the body is checked as it arrived, its bytes handed on. */
  async function identifySigned(request: Request): Promise<Identified | Response> {
    const refuse = (message: string) => refusal(request, true, message);
    if (!verifier)
      return refuse('This node has no peer keys, so it cannot check a fleet signature');
    const bytes = await readBodyBytes(request, maxBody).catch(() => undefined);
    if (!bytes)
      return refuse(`A signed request body must be readable and at most ${maxBody} bytes`);
    const v = await verifier.verify(request.headers, bytes, '/a2a');
    if (!v.ok || v.result.scope !== A2A_SIGNED_SCOPE) {
      const code = v.ok ? 'PEER_SCOPE' : v.error.code;
      log('warn', 'a2a signature refused', { code });
      return refuse(
        `Fleet signature refused (${code}): ${v.ok ? `an A2A request is signed with scope ${A2A_SIGNED_SCOPE}` : v.error.message}`,
      );
    }
    return { caller: { kind: 'node', name: v.result.node }, body: bytes };
  }

  return {
    async identify(request, jsonRpc) {
      if (jsonRpc && request.headers.has(PEER_HEADER)) return identifySigned(request);
      const who = callerOf(await policy.authenticate(request), 'Authorization');
      if (isA2AError(who)) {
        // A refused issuer token is logged where it is checked (with its TOKEN_* code).
        if (who.code !== 'UNAUTHENTICATED') log('warn', 'a2a caller refused', { code: who.code });
        return refusal(request, jsonRpc, who.message, who);
      }
      return { caller: who };
    },
    async identifyGrpc(metadata) {
      const req = new Request(`http://${o.host}/`, { headers: metadata });
      return callerOf(await policy.authenticate(req), 'authorization');
    },
    async metricsAccess(req) {
      const who = await policy.authenticate(req);
      if (who.ok && (who.result.kind !== 'anonymous' || policy.anonymous !== 'none'))
        return undefined;
      const { http, body } = toRestError(
        a2aError(
          'UNAUTHENTICATED',
          who.ok
            ? '/metrics needs a principal here (bound beyond loopback, or sign-in required): send a bearer token (bun run keys token add <name>)'
            : who.error.message,
        ),
      );
      return challenge(jsonResponse(body, http, 'UNAUTHENTICATED'));
    },
  };
}
