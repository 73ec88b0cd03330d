/**
 * @module lib/net/outbound-policy — which hosts an outgoing request that a caller chose (a webhook)
 * may reach: public internet addresses, and beyond them only what an explicit allow-list names.
 * Names are resolved and every address they resolve to is checked; `lookup` hands the checked
 * address itself to the connection, so a name cannot resolve to another address between the
 * check and the connect (DNS rebinding).
 */

import { lookup as dnsLookup } from 'node:dns/promises';
import type { Failure } from '../errors/result.ts';
import {
  classify,
  formatIp,
  inRange,
  parseIp,
  parseRange,
  type AddressKind,
  type IpAddress,
  type IpRange,
} from './address.ts';

/** A connection refused by the policy (`code` is what a delivery reports). */
class AddressRefused extends Error {
  readonly code = 'ADDRESS_REFUSED';
  constructor(
    readonly host: string,
    readonly kind: AddressKind,
  ) {
    super(`${host} is a ${kind} address`);
    this.name = 'AddressRefused';
  }
}

type LookupCallback = (
  err: Error | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;

export interface OutboundPolicy {
  /** Why a URL host (as `new URL` spells it) is refused before any lookup, or undefined. Names pass here. */
  refuseHost(hostname: string): Failure<'ADDRESS_REFUSED'> | undefined;
  /** Resolves a name and checks every address; rejects with AddressRefused when one is not allowed. */
  resolve(hostname: string): Promise<{ address: string; family: 4 | 6 }[]>;
  /** A `lookup` for node:http / node:https that connects only to checked addresses. */
  lookup(
    hostname: string,
    options: { all?: boolean } | number | undefined,
    callback: LookupCallback,
  ): void;
  /** The allow-list as given (lower-cased, each once), for messages. */
  readonly allowed: readonly string[];
}

const SPECIAL_NAMES = /(^|\.)localhost\.?$/i; // RFC 6761: always loopback, whatever a resolver says

/**
 * `allow` entries: a host name (`hooks.lan`: that name may resolve anywhere), an address in any
 * spelling (`127.0.0.1`, `::1`) or a CIDR range (`10.0.0.0/8`). Everything else must be public.
 */
export function createOutboundPolicy(
  allow: readonly string[],
  resolveName: (host: string) => Promise<{ address: string; family: number }[]> = (h) =>
    dnsLookup(h, { all: true }),
): OutboundPolicy {
  const allowed = [...new Set(allow.map((h) => h.trim().toLowerCase()).filter(Boolean))];
  const ranges: IpRange[] = [];
  const names = new Set<string>();
  for (const entry of allowed) {
    const r = parseRange(entry.replace(/^\[|\](?=\/|$)/g, ''));
    if (r) ranges.push(r);
    else names.add(entry.replace(/\.$/, ''));
  }
  const nameAllowed = (host: string) => names.has(host.toLowerCase().replace(/\.$/, ''));
  const addressKind = (ip: IpAddress): AddressKind =>
    ranges.some((r) => inRange(ip, r)) ? 'public' : classify(ip);

  const policy: OutboundPolicy = {
    allowed,
    refuseHost(hostname) {
      if (nameAllowed(hostname)) return undefined;
      const ip = parseIp(hostname);
      const kind = ip ? addressKind(ip) : SPECIAL_NAMES.test(hostname) ? 'loopback' : 'public';
      if (kind === 'public') return undefined;
      return {
        code: 'ADDRESS_REFUSED',
        message: `webhook host ${hostname} is a ${kind} address; only public addresses are allowed unless PUSH_ALLOW_HOSTS lists it`,
      };
    },
    async resolve(hostname) {
      const bare = hostname.replace(/^\[|\]$/g, '');
      const literal = parseIp(bare);
      if (literal) {
        const kind = nameAllowed(hostname) ? 'public' : addressKind(literal);
        if (kind !== 'public') throw new AddressRefused(hostname, kind);
        return [
          { address: literal.family === 4 ? formatIp(literal) : bare, family: literal.family },
        ];
      }
      if (SPECIAL_NAMES.test(hostname) && !nameAllowed(hostname))
        throw new AddressRefused(hostname, 'loopback');
      const found = await resolveName(hostname);
      if (nameAllowed(hostname))
        return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
      // Every address must pass: a name with one private record among public ones is refused,
      // since which record a later connection would use is not ours to choose.
      const out: { address: string; family: 4 | 6 }[] = [];
      for (const a of found) {
        const ip = parseIp(a.address);
        const kind = ip ? addressKind(ip) : 'reserved';
        if (kind !== 'public') throw new AddressRefused(hostname, kind);
        out.push({ address: a.address, family: ip!.family });
      }
      if (!out.length) throw new AddressRefused(hostname, 'reserved');
      return out;
    },
    lookup(hostname, options, callback) {
      const all = typeof options === 'object' && options?.all === true;
      policy.resolve(hostname).then(
        (addresses) =>
          all
            ? callback(null, addresses)
            : callback(null, addresses[0]!.address, addresses[0]!.family),
        (e: Error) => callback(e, all ? [] : ''),
      );
    },
  };
  return policy;
}
