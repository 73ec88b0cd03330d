/**
 * @module lib/node/node-card — a node's agent card as served: built from its catalog and
 * bindings, signed with the node's key (the JWKS lists it and the key it replaced), and rebuilt
 * when the advertised port, the gRPC address or the agent-backed state changes.
 */

import type { AccessPolicy } from '../auth/access.ts';
import { CardServer, bindWarnings, buildAgentCard } from '../a2a/card/card.ts';
import { type CardKey, cardKeyOf, JWKS_PATH, jwks, signCard } from '../a2a/card/signature.ts';
import type { AgentCard } from '../a2a/card/types.ts';
import type { NodeDefinition, NodeOptions } from './node-types.ts';

export interface NodeCardOptions {
  def: NodeDefinition;
  opts: NodeOptions;
  host: string;
  policy: AccessPolicy;
  inputModes: string[];
  outputModes: string[];
  pushNotifications: boolean;
}

export interface NodeCard {
  /** The card's HTTP answer to `req` (conditional requests, cache headers). */
  respond(req: Request): Response;
  /** Tenant `tenant`'s card (its interfaces alone), signed alike; undefined for a tenant not served. */
  respondIn(tenant: string, req: Request): Response | undefined;
  /** The card as currently served. */
  json(): AgentCard;
  /** The card's content without its signatures: no signing (start-up reads its URL and skills). */
  unsigned(): AgentCard;
  /** The JWKS: the current key and, during a rotation, the one it replaced. */
  publishedKeys(): ReturnType<typeof jwks>;
  rotate(next: CardKey): void;
  /** The port the card's URLs name from now on. */
  advertise(port: number): void;
  /** The gRPC binding's port, listed on the card from now on. */
  listGrpc(port: number): void;
}

/** The base URL a node advertises: its public URL, else its bind address (a wildcard as loopback). */
function baseUrlOf(host: string, port: number, publicUrl?: string): string {
  const advertisedHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return (
    publicUrl ??
    `http://${advertisedHost.includes(':') ? `[${advertisedHost}]` : advertisedHost}:${port}`
  ).replace(/\/+$/, '');
}

export function createNodeCard(o: NodeCardOptions): NodeCard {
  const { def, opts, host, policy } = o;
  let grpcPort: number | undefined;
  let advertisedPort = opts.port ?? 0;
  const cardFor = (port: number, inTenant?: string) => {
    const baseUrl = baseUrlOf(host, port, opts.publicUrl);
    // The gRPC address is the advertised host with the binding's own port.
    const grpcAddress =
      grpcPort === undefined ? undefined : `${new URL(baseUrl).hostname}:${grpcPort}`;
    return buildAgentCard({
      ...(grpcAddress ? { grpcAddress } : {}),
      name: def.name,
      description: def.description,
      version: def.version ?? '1.0.0',
      baseUrl,
      skills: def.catalog.skills(),
      inputModes: o.inputModes,
      outputModes: o.outputModes,
      streaming: true,
      pushNotifications: o.pushNotifications,
      agentBacked:
        typeof def.agentBacked === 'function' ? def.agentBacked() : (def.agentBacked ?? false),
      ...(def.extensions ? { extensions: def.extensions } : {}),
      ...(opts.tenants?.length ? { tenants: opts.tenants } : {}),
      ...(inTenant !== undefined ? { inTenant } : {}),
      warnings: bindWarnings(host, opts.publicUrl, baseUrl),
      auth: {
        required:
          policy.anonymous === 'none' ? 'all' : policy.anonymous === 'read' ? 'writes' : 'none',
        protectedSkills: def.catalog.capabilities.filter((c) => !c.readOnly).map((c) => c.id),
        ...(opts.access?.oidc ? { issuers: opts.access.oidc.issuers.map((i) => i.issuer) } : {}),
      },
    });
  };
  // The card names its signing key and where the public keys are (the base URL, never the Host
  // header: a signed card must not carry an address a caller chose).
  let cardKey = opts.cardKeys?.current ?? cardKeyOf(crypto.getRandomValues(new Uint8Array(32)));
  let retiredKeys = [...(opts.cardKeys?.previous ?? [])];
  const signer = (key: CardKey) => (card: AgentCard) =>
    signCard(card, key, `${baseUrlOf(host, advertisedPort, opts.publicUrl)}${JWKS_PATH}`);
  const cards = new CardServer(cardFor(advertisedPort), opts.now, signer(cardKey));
  // One card per tenant served (bounded by the tenants configured), kept in step with the main one.
  const tenantCards = new Map(
    (opts.tenants ?? []).map((t) => [
      t,
      new CardServer(cardFor(advertisedPort, t), opts.now, signer(cardKey)),
    ]),
  );
  const rebuild = () => {
    cards.update(cardFor(advertisedPort), opts.now);
    for (const [t, c] of tenantCards) c.update(cardFor(advertisedPort, t), opts.now);
  };
  // A card whose agent-backed state can change is rebuilt when read (the server keeps it if unchanged).
  const fresh = () => {
    if (typeof def.agentBacked === 'function') rebuild();
  };
  return {
    respond: (req) => (fresh(), cards.respond(req)),
    respondIn: (tenant, req) => {
      const c = tenantCards.get(tenant);
      return c && (fresh(), c.respond(req));
    },
    json: () => (fresh(), cards.json),
    unsigned: () => (fresh(), cards.unsignedCard),
    publishedKeys: () =>
      jwks([cardKey, ...retiredKeys.filter((k) => k.kid !== cardKey.kid)].slice(0, 2)),
    rotate: (next) => {
      retiredKeys = [{ kid: cardKey.kid, publicKey: cardKey.publicKey }];
      cardKey = next;
      cards.resign(signer(next), opts.now);
      for (const c of tenantCards.values()) c.resign(signer(next), opts.now);
    },
    advertise: (port) => {
      advertisedPort = port;
      rebuild();
    },
    listGrpc: (port) => {
      grpcPort = port;
      rebuild();
    },
  };
}
