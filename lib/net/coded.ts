/** @module lib/net/coded — a registry-coded JSON refusal (`{error: {code, message}}`) with the code's HTTP status. */

import { statusOf } from '../errors/registry.ts';

export function codedError(
  code: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json(
    { error: { code, message } },
    { status: statusOf(code), headers: { 'cache-control': 'no-store', ...headers } },
  );
}
