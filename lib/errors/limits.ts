/**
 * @module lib/errors/limits — what a client meets at a bound or during a stop: a stream ended because
 * its reader fell behind, a server shutting down or not ready, a task grown past its caps.
 */

import type { ErrorSpec } from './spec.ts';

export const LIMIT_ERRORS = {
  STREAM_TOO_SLOW: {
    http: 503,
    message: 'The stream was ended: the client fell too far behind reading it',
  },
  SHUTTING_DOWN: { http: 503, message: 'The server is shutting down' },
  // lib/sse/sse.ts: open event streams, per process and per principal.
  STREAMS_FULL: { http: 503, message: 'This server has as many open streams as it serves' },
  PRINCIPAL_STREAMS_FULL: {
    http: 503,
    message: 'This principal has as many open streams as one may; close one first',
  },
  NOT_READY: { http: 503, message: 'The server is not ready' },
  // lib/sse/live.ts: a live stream's `event: reset` for a Last-Event-ID it cannot continue from.
  STREAM_RESET: {
    http: 410,
    message:
      'The stream cannot go on from the Last-Event-ID given (older than what is kept, or not one this server sent); what follows is live',
  },
  TASK_TOO_LARGE: { http: 413, message: 'The task reached its size limit' },
} as const satisfies Record<string, ErrorSpec>;

export type LimitErrorCode = keyof typeof LIMIT_ERRORS;
