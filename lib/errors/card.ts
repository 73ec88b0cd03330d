/**
 * @module lib/errors/card — codes of an agent card's signature check (lib/a2a/card/signature.ts):
 * why a card does not verify against the keys its checker trusts.
 */

import type { ErrorSpec } from './spec.ts';

export const CARD_SIGNATURE_ERRORS = {
  CARD_UNSIGNED: { http: 422, message: 'the agent card carries no signature' },
  CARD_SIGNATURE_MALFORMED: {
    http: 422,
    message: 'the agent card signature is not a flattened JWS with an EdDSA protected header',
  },
  CARD_KEY_UNKNOWN: {
    http: 422,
    message: 'the agent card is signed with a key that is not pinned',
  },
  CARD_SIGNATURE_INVALID: {
    http: 422,
    message: 'the agent card signature does not verify: the card changed after it was signed',
  },
} as const satisfies Record<string, ErrorSpec>;

export type CardSignatureErrorCode = keyof typeof CARD_SIGNATURE_ERRORS;
