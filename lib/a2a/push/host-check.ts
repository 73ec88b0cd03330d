/**
 * @module lib/a2a/push/host-check — a webhook's host name checked when the webhook is registered,
 * as delivery checks it: resolved, and refused when an address it resolves to is not public and
 * the allow-list (PUSH_ALLOW_HOSTS) does not name it. A name that does not resolve, or not in
 * time, passes: delivery resolves and checks again at each connection.
 */

import type { WebhookUrlFailure } from '../engine/engine.ts';
import { parseIp } from '../../net/address.ts';
import type { OutboundPolicy } from '../../net/outbound-policy.ts';

/** How long a registration waits for its host name to resolve (a slow resolver holds no request longer). */
const RESOLVE_MS = 2_000;

export async function refuseResolved(
  policy: OutboundPolicy,
  raw: string,
): Promise<WebhookUrlFailure | undefined> {
  const host = new URL(raw).hostname.toLowerCase();
  if (parseIp(host)) return undefined; // an address: the check before resolution judged it
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((r) => {
    timer = setTimeout(r, RESOLVE_MS);
  });
  try {
    await Promise.race([policy.resolve(host), late]);
    return undefined;
  } catch (e) {
    const refused = e as { code?: string; kind?: string };
    if (refused.code !== 'ADDRESS_REFUSED') return undefined;
    return {
      code: 'ADDRESS_REFUSED',
      message: `webhook host ${host} resolves to a ${refused.kind} address; only public addresses are allowed unless PUSH_ALLOW_HOSTS lists it`,
      field: 'url',
    };
  } finally {
    clearTimeout(timer);
  }
}
