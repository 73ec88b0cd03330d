/**
 * @module hub/http/login-form — what a sign-in POST carries: the token or the ticket and the page
 * to return to, from a form or a JSON body, read under a small bound.
 */

import { parseJsonBody, readBodyBytes } from '../../lib/body.ts';
import { isPlainObject } from '../../lib/json/guards.ts';
import { localPath } from './login-pages.ts';

const MAX_FORM = 4096;

export interface Posted {
  token?: string;
  ticket?: string;
  next: string;
  json: boolean;
}

/** The token or ticket, and the page to return to, that a sign-in form (or a JSON body) carries. */
export async function postedForm(req: Request): Promise<Posted> {
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const json = type === 'application/json';
  const bytes = await readBodyBytes(req, MAX_FORM).catch(() => undefined);
  if (!bytes) return { next: '/', json };
  const text = new TextDecoder().decode(bytes);
  let get: (k: string) => unknown;
  if (json) {
    // Bounded like every JSON body (lib/body.ts); a body that is not a small object signs nobody in.
    const parsed = parseJsonBody(text);
    const doc = parsed.ok && isPlainObject(parsed.result) ? parsed.result : {};
    get = (k) => doc[k];
  } else {
    const form = new URLSearchParams(text);
    get = (k) => form.get(k);
  }
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const token = str(get('token'));
  const ticket = str(get('ticket'));
  return {
    ...(token ? { token } : {}),
    ...(ticket ? { ticket } : {}),
    next: localPath(str(get('next'))),
    json,
  };
}
