/**
 * @module lib/sse/frames — reads a server-sent events body as it arrives: each event's name and
 * its `data:` lines joined, with a bound on what one event may hold. The A2A client's streams and
 * the MCP stdio bridge read their servers' events through it.
 */

/** Frames of an SSE body (`data:` lines joined, and the event's `id:`), each under `max` bytes. */
export async function* sseFrames(
  body: ReadableStream<Uint8Array>,
  max: number,
): AsyncGenerator<{ event: string; data: string; id?: string } | { tooLarge: true }> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      let event = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        else if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('id:')) id = line.slice(3).replace(/^ /, '');
      }
      if (data.length) yield { event, data: data.join('\n'), ...(id ? { id } : {}) };
    }
    if (buffer.length > max) {
      yield { tooLarge: true };
      return;
    }
  }
}
