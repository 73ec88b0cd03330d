/**
 * @module lib/errors/auth — why an issuer's access token is refused (lib/auth/oidc/verifier.ts). The
 * A2A answer's code is UNAUTHENTICATED (401; gRPC UNAUTHENTICATED) and its message starts with
 * one of these; ISSUER_UNAVAILABLE (503, retryable) and INSUFFICIENT_SCOPE (403) are A2A-shaped
 * codes of their own (lib/errors/a2a.ts). The log names the code, never the token.
 */

import type { ErrorSpec } from './spec.ts';

export const TOKEN_ERRORS = {
  TOKEN_MALFORMED: {
    http: 401,
    message: 'the token is not a compact JWS of at most 8192 bytes with an exp and a subject',
  },
  TOKEN_ALG_REFUSED: {
    http: 401,
    message: 'the token is signed with an algorithm not accepted (only RS256, PS256, ES256, EdDSA)',
  },
  TOKEN_ISSUER_UNKNOWN: { http: 401, message: 'the token is not from a trusted issuer' },
  TOKEN_KEY_UNKNOWN: {
    http: 401,
    message: 'the token is signed with a key its issuer does not publish',
  },
  TOKEN_SIGNATURE_INVALID: { http: 401, message: 'the token signature does not verify' },
  TOKEN_AUDIENCE: { http: 401, message: 'the token is meant for another audience' },
  TOKEN_EXPIRED: { http: 401, message: 'the token has expired' },
  TOKEN_NOT_YET_VALID: { http: 401, message: 'the token is not valid yet' },
} as const satisfies Record<string, ErrorSpec>;
