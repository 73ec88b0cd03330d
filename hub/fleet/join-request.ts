/**
 * @module hub/fleet/join-request — what a join request carries and how it is answered: the node's
 * name, base URL and Ed25519 public key in a small JSON body, signed with that key in mode
 * ed25519; every refusal a JOIN_* code (or UNAUTHENTICATED) with its registry status.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import { readBodyBytes } from '../../lib/body.ts';
import { JOIN_ERRORS, type JoinErrorCode } from '../../lib/errors/join.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import { JOIN_ROUTE } from '../../lib/fleet/join.ts';
import { fromB64url } from '../../lib/peer/base64url.ts';
import { kidOf } from '../../lib/peer/keys.ts';
import { NODE_NAME } from '../../lib/peer/signature.ts';
import { createVerifier } from '../../lib/peer/verifier.ts';
import { baseUrl } from './add.ts';

const MAX_BODY = 4 * 1024;
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { 'cache-control': 'no-store', ...headers } });
export const refuse = (code: JoinErrorCode | 'UNAUTHENTICATED', detail?: string) =>
  json(
    {
      ok: false,
      error: {
        code,
        message:
          code === 'UNAUTHENTICATED'
            ? `joining the fleet needs a bearer token made on the hub's machine (bun run keys token add <name>)${detail ? `: ${detail}` : ''}`
            : detail
              ? `${JOIN_ERRORS[code].message}: ${detail}`
              : JOIN_ERRORS[code].message,
      },
    },
    statusOf(code),
    code === 'UNAUTHENTICATED' ? { 'www-authenticate': 'Bearer realm="lume-a2a"' } : {},
  );

export interface Presented {
  name: string;
  url: string;
  kid: string;
  publicKey: string;
}

function presented(doc: unknown): Presented | undefined {
  const d = doc as Record<string, unknown> | null;
  if (!isPlainObject(d)) return undefined;
  const { name, url, publicKey, kid } = d;
  if (typeof name !== 'string' || !NODE_NAME.test(name)) return undefined;
  const base = typeof url === 'string' ? baseUrl(url) : undefined;
  const id = typeof publicKey === 'string' ? kidOf(publicKey) : undefined;
  if (!base || !id || (kid !== undefined && kid !== id)) return undefined;
  return { name, url: base.origin, kid: id, publicKey: publicKey as string };
}

/** The node a signed join body presents, or the refusal; `self` is the hub the proof names. */
export async function readPresented(req: Request, self: string): Promise<Presented | Response> {
  const bytes = await readBodyBytes(req, MAX_BODY).catch(() => undefined);
  if (!bytes) return refuse('JOIN_BAD_REQUEST', `the body must be under ${MAX_BODY} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return refuse('JOIN_BAD_REQUEST', 'the body is not JSON');
  }
  const p = presented(doc);
  if (!p) return refuse('JOIN_BAD_REQUEST');
  const proof = await createVerifier({
    self,
    ring: new Map([[p.name, { mode: 'ed25519', ed25519: [fromB64url(p.publicKey, 32)!] }]]),
  }).verify(req.headers, bytes, JOIN_ROUTE);
  if (!proof.ok || proof.result.mode !== 'ed25519')
    return refuse('JOIN_BAD_PROOF', proof.ok ? 'sign it in mode ed25519' : proof.error.code);
  return p;
}
