/**
 * @module lib/mcp/request-state — the `requestState` a 2026-07-28 server hands its client between
 * rounds of a multi-round-trip request, sealed: the state as JSON with an HMAC-SHA256 of it under
 * a key of this process, so a client that alters or forges it is caught when it comes back
 * (the client holds it; the server keeps nothing). Bounded: a sealed state of more than 16 KiB is
 * not opened.
 */

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isPlainObject } from '../json/guards.ts';

const MAX_STATE_CHARS = 16 * 1024;

export interface StateSeal {
  seal(state: Record<string, unknown>): string;
  /** The state sealed here; undefined when it was altered, forged or is not one. */
  open(sealed: string | undefined): Record<string, unknown> | undefined;
}

export function createStateSeal(key: Uint8Array = randomBytes(32)): StateSeal {
  const mac = (data: string) => createHmac('sha256', key).update(data).digest('base64url');
  return {
    seal(state) {
      const data = Buffer.from(JSON.stringify(state)).toString('base64url');
      return `${data}.${mac(data)}`;
    },
    open(sealed) {
      if (typeof sealed !== 'string' || sealed.length > MAX_STATE_CHARS) return undefined;
      const [data, tag, extra] = sealed.split('.');
      if (!data || !tag || extra !== undefined) return undefined;
      const want = Buffer.from(mac(data));
      const got = Buffer.from(tag);
      if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
      try {
        const state: unknown = JSON.parse(Buffer.from(data, 'base64url').toString('utf8'));
        return isPlainObject(state) ? state : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
