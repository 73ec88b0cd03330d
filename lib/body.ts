/**
 * @module body — reading HTTP bodies under a size limit, for servers (requests) and clients
 * (answers) alike, without buffering more than the limit.
 */

/** Reads at most `max` bytes of a body stream; undefined when it is longer. */
async function readLimited(body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array | undefined> {
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) out.set(c, (at += c.byteLength) - c.byteLength);
  return out;
}

/**
 * The bytes of an HTTP message body (a request a server received, or an answer a client got), or
 * undefined when it is over `max`. A declared Content-Length allows the fast whole-body read; a
 * chunked body is streamed and counted. (Reading through a stream reader costs several times
 * more per message in Bun, which is why the fast path matters.)
 */
export async function readBodyBytes(msg: Request | Response, max: number): Promise<Uint8Array | undefined> {
  const length = msg.headers.get('content-length');
  if (length === null) return readLimited(msg.body, max);
  const declared = Number(length);
  if (!Number.isSafeInteger(declared) || declared > max) {
    await msg.body?.cancel().catch(() => {});
    return undefined;
  }
  return new Uint8Array(await msg.arrayBuffer());
}
