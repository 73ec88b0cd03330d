/**
 * @module a2a-sse — Server-Sent Events for streaming answers (A2A JSON-RPC streaming): one
 * `data: <json>` frame per event, sent as the event happens; the response ends when the source
 * ends. A comment line every few seconds keeps idle connections open through proxies.
 */

const HEARTBEAT_MS = 15_000;
const encoder = new TextEncoder();

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
} as const;

/**
 * Streams `source` as SSE. `frame` turns each item into the JSON of one `data:` line. `stop`
 * runs when the client goes away before the source ends, so the subscription is dropped.
 */
export function sseResponse<T>(source: AsyncIterable<T>, frame: (item: T) => unknown, stop: () => void): Response {
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      // A comment first, so the headers and the stream reach the client before any event.
      controller.enqueue(encoder.encode(': stream open\n\n'));
      heartbeat = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(': keep-alive\n\n'));
        } catch {
          clearInterval(heartbeat);
        }
      }, HEARTBEAT_MS);
      try {
        for await (const item of source) controller.enqueue(encoder.encode(`data: ${JSON.stringify(frame(item))}\n\n`));
        controller.close();
      } catch {
        // The client went away mid-write; nothing left to send.
      } finally {
        clearInterval(heartbeat);
      }
    },
    cancel() {
      clearInterval(heartbeat);
      stop();
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/**
 * A stream of one `event: error` frame carrying `error` (a JSON-RPC error answer), then the end:
 * how the official SDK refuses a v0.3 `tasks/resubscribe`, whose clients read only SSE.
 */
export function sseErrorResponse(error: unknown): Response {
  return new Response(`event: error\ndata: ${JSON.stringify(error)}\n\n`, { status: 200, headers: SSE_HEADERS });
}
