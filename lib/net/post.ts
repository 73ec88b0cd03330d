/**
 * @module lib/net/post — one HTTP POST to a URL a caller chose, on a connection pool of its own
 * (node:http agents with a socket cap, never the process's fetch pool, which fleet calls use),
 * connecting only to an address the outbound policy checked, with one deadline for connecting and
 * answering. Redirects are not followed; the answer's body is not read.
 */

import http from 'node:http';
import https from 'node:https';
import { parseIp } from './address.ts';
import type { OutboundPolicy } from './outbound-policy.ts';
import type { Err, Failure, Result } from '../errors/result.ts';

/**
 * How one POST failed: no answer in time, no connection (or a non-2xx answer, with its `status`),
 * or an address the policy refuses, which a retry cannot change.
 */
export type PostFailure = Failure<
  'WEBHOOK_TIMEOUT' | 'WEBHOOK_UNREACHABLE' | 'WEBHOOK_REJECTED' | 'ADDRESS_REFUSED'
> & { status?: number };

/** A 2xx answer's status, or how the POST failed. */
export type PostOutcome = Result<{ status: number }, PostFailure>;

const failed = (code: PostFailure['code'], message: string, status?: number): Err<PostFailure> => ({
  ok: false,
  error: status === undefined ? { code, message } : { code, message, status },
});

export interface Poster {
  post(url: URL, headers: Record<string, string>, body: string): Promise<PostOutcome>;
  /** Closes idle sockets (at shutdown). */
  close(): void;
}

export function createPoster(opts: {
  policy: OutboundPolicy;
  maxSockets: number;
  timeoutMs: number;
}): Poster {
  const agents = {
    'http:': new http.Agent({ keepAlive: false, maxSockets: opts.maxSockets }),
    'https:': new https.Agent({ keepAlive: false, maxSockets: opts.maxSockets }),
  };
  return {
    async post(url, headers, body) {
      const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
      const request = protocol === 'https:' ? https.request : http.request;
      const host = url.hostname.replace(/^\[|\]$/g, '');
      // A literal address skips `lookup` entirely, so it is checked here.
      if (parseIp(host)) {
        try {
          await opts.policy.resolve(url.hostname);
        } catch (e) {
          return failed('ADDRESS_REFUSED', (e as Error).message);
        }
      }
      return new Promise<PostOutcome>((resolve) => {
        let settled = false;
        const done = (o: PostOutcome) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(o);
        };
        // The host name stays the request's host (Host header, TLS name); the policy's lookup
        // decides the address, and the socket connects to exactly that address.
        const req = request(
          {
            protocol,
            host,
            port: url.port || (protocol === 'https:' ? 443 : 80),
            path: `${url.pathname}${url.search}`,
            method: 'POST',
            agent: agents[protocol],
            lookup: opts.policy.lookup as never,
            headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
          },
          (res) => {
            const status = res.statusCode ?? 0;
            res.destroy(); // only the status matters; a huge or endless body is never read
            done(
              status >= 200 && status < 300
                ? { ok: true, result: { status } }
                : failed('WEBHOOK_REJECTED', `the webhook answered HTTP ${status}`, status),
            );
          },
        );
        const timer = setTimeout(() => {
          done(failed('WEBHOOK_TIMEOUT', `no answer within ${opts.timeoutMs} ms`));
          req.destroy();
        }, opts.timeoutMs);
        req.on('error', (e: Error & { code?: string }) => {
          done(
            e.code === 'ADDRESS_REFUSED'
              ? failed('ADDRESS_REFUSED', e.message)
              : failed('WEBHOOK_UNREACHABLE', 'the webhook could not be reached'),
          );
        });
        req.end(body);
      });
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
