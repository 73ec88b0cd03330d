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

export type PostOutcome =
  | { ok: true; status: number }
  | { ok: false; reason: 'timeout' | 'unreachable' | 'refused'; status?: number; detail?: string };

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
          return { ok: false, reason: 'refused', detail: (e as Error).message };
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
                ? { ok: true, status }
                : { ok: false, reason: 'unreachable', status },
            );
          },
        );
        const timer = setTimeout(() => {
          done({ ok: false, reason: 'timeout' });
          req.destroy();
        }, opts.timeoutMs);
        req.on('error', (e: Error & { code?: string }) => {
          done(
            e.code === 'ADDRESS_REFUSED'
              ? { ok: false, reason: 'refused', detail: e.message }
              : { ok: false, reason: 'unreachable' },
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
