/**
 * @module hub/mesh/http-answers — how the mesh's HTTP routes answer and read: `{error: {code,
 * message}}` with the registry's status (or 200 where the mesh protocol answers in the body), and
 * a JSON body read under its cap while it streams.
 */

import { parseJsonBody } from '../../lib/body.ts';
import type { MeshHttpCode } from '../../lib/errors/mesh.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import { fail, ok, type Failure, type Result } from '../../lib/errors/result.ts';

export const json = (body: unknown, status = 200): Response => Response.json(body, { status });
/**
 * The codes the mesh protocol answers on `/api/*` as HTTP 200 with an error body; every other code
 * (a refused token, a missing project, a body too large) keeps its status so it cannot look like a success.
 */
const ANSWERED_IN_BODY: ReadonlySet<MeshHttpCode> = new Set([
  'bad-json',
  'project-conflict',
  'A2A_BAD_REQUEST',
  'internal',
]);
export const apiError = (code: MeshHttpCode, message: string): Response =>
  json({ error: { code, message } }, ANSWERED_IN_BODY.has(code) ? 200 : statusOf(code));
/** `/v1/*` and `/healthz` use plain HTTP semantics: the registry's status. */
export const readError = (code: MeshHttpCode, message: string): Response =>
  json({ error: { code, message } }, statusOf(code));

/** Reads a JSON body of at most `cap` bytes; an empty body is `{}`. */
export async function readBody(
  req: Request,
  cap: number,
): Promise<Result<unknown, Failure<MeshHttpCode>>> {
  const declared = Number(req.headers.get('content-length'));
  if (declared > cap) return fail('payload-too-large', `body is over ${cap} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body?.getReader();
  // Counted while streaming: a chunked body has no Content-Length to trust.
  for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) {
    size += r.value.length;
    if (size > cap) {
      void reader!.cancel();
      return fail('payload-too-large', `body is over ${cap} bytes`);
    }
    chunks.push(r.value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return ok({});
  // The mesh protocol's vocabulary has no depth code: a body nested too deep is not JSON it takes.
  const parsed = parseJsonBody(text);
  return parsed.ok ? parsed : fail('bad-json', parsed.error.message);
}
