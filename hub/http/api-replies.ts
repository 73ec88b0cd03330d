/**
 * @module hub/http/api-replies — how the console API answers: JSON that is never cached, a coded
 * failure with its registry status, the refusal of a POST that needs a principal, and the
 * generic answer to an unexpected error.
 */

import type { HubErrorCode } from '../../lib/errors/hub.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import type { Failure } from '../../lib/errors/result.ts';

export const json = (body: unknown, status = 200) =>
  Response.json(body, { status, headers: { 'cache-control': 'no-store' } });
/** A coded failure answered with `status`: its code, message and the field it names. */
export const failed = ({ code, message, field }: Failure, status: number) =>
  json({ ok: false, error: field ? { code, message, field } : { code, message } }, status);
/** One of the API's own refusals, answered with its registry status. */
export const refuse = (code: HubErrorCode, message: string) =>
  failed({ code, message }, statusOf(code));
/** What a client sees of an unexpected error: no cause, no internal text. */
export const INTERNAL: Failure = { code: 'INTERNAL', message: 'Internal error' };

/** The refusal of a POST that needs a principal. */
export const unauthenticated = (what: string) =>
  Response.json(
    {
      ok: false,
      error: {
        code: 'UNAUTHENTICATED',
        message: `${what} needs an authenticated caller: sign in to the console or send a bearer token`,
      },
    },
    {
      status: statusOf('UNAUTHENTICATED'),
      headers: { 'cache-control': 'no-store', 'www-authenticate': 'Bearer realm="lume-a2a"' },
    },
  );
