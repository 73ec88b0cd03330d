/**
 * @module lib/a2a/card/types — the agent card this kit serves, as a type: the A2A 1.0 `AgentCard`
 * members a node fills (a2a.proto), the v0.3 top-level members beside them (read by 0.3 clients),
 * and the kit's own extensions. Cards read from other agents are not this type: they are JSON of
 * unknown shape, read with checks (lib/a2a/card/card.ts `readAgentBacked`, hub/fleet/cards.ts).
 */

import type { Skill } from '../../catalog/catalog.ts';
import type { CardSignature } from './signature.ts';

/** A transport the card names, in A2A 1.0 spelling. */
export type ProtocolBinding = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/** One `supportedInterfaces` entry: where a binding of a protocol version is served. */
export interface AgentInterface {
  /** An absolute URL; for gRPC, `host:port` (a2a.proto `AgentInterface.url`). */
  url: string;
  protocolBinding: ProtocolBinding;
  protocolVersion: '1.0' | '0.3';
  /** The tenant a client names in every request to this interface (1.0 only; lib/node/tenants.ts). */
  tenant?: string;
}

/** An extension a card declares in `capabilities.extensions`. */
export interface AgentExtension {
  uri: string;
  description?: string;
  required?: boolean;
  params?: Record<string, unknown>;
}

export interface AgentCapabilities {
  streaming: boolean;
  pushNotifications: boolean;
  extendedAgentCard: boolean;
  extensions: AgentExtension[];
}

/**
 * The bearer scheme in the two forms both generations read under the same `securitySchemes` key:
 * v1.0 `httpAuthSecurityScheme`, v0.3 OpenAPI `type`/`scheme`.
 */
export interface BearerSecurityScheme {
  httpAuthSecurityScheme: { scheme: 'Bearer'; description: string };
  type: 'http';
  scheme: 'bearer';
  description: string;
}

/**
 * An issuer's OpenID Connect scheme in the two forms, as the bearer scheme: v1.0
 * `openIdConnectSecurityScheme`, v0.3 OpenAPI `type: openIdConnect`, both naming the discovery URL.
 */
export interface OpenIdSecurityScheme {
  openIdConnectSecurityScheme: { openIdConnectUrl: string; description: string };
  type: 'openIdConnect';
  openIdConnectUrl: string;
  description: string;
}

/** A v1.0 security requirement: scheme name to its scopes (`{schemes: {bearer: {list: []}}}`). */
export interface SecurityRequirementV1 {
  schemes: Record<string, { list: string[] }>;
}
/** A v0.3 security requirement: scheme name to its scopes (`{bearer: []}`). */
export type SecurityRequirementV03 = Record<string, string[]>;

/** A skill as the card lists it: the catalog's, with its requirements when it is protected. */
export interface AgentSkill extends Skill {
  securityRequirements?: SecurityRequirementV1[];
  security?: SecurityRequirementV03[];
}

/**
 * The card a node serves at `/.well-known/agent-card.json` (lib/a2a/card/card.ts `buildAgentCard`). A
 * type, not an interface, so it passes where any JSON object is read (`Record<string, unknown>`).
 */
export type AgentCard = {
  name: string;
  description: string;
  version: string;
  supportedInterfaces: AgentInterface[];
  capabilities: AgentCapabilities;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
  securitySchemes?: Record<string, BearerSecurityScheme | OpenIdSecurityScheme>;
  securityRequirements?: SecurityRequirementV1[];
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  /** Ed25519 JWS signatures over the canonical card (lib/a2a/card/signature.ts). */
  signatures?: CardSignature[];
  // v0.3 members, for 0.3 clients that read these instead of `supportedInterfaces`.
  url: string;
  protocolVersion: '0.3.0';
  preferredTransport: 'JSONRPC';
  additionalInterfaces: { url: string; transport: 'JSONRPC' }[];
  supportsAuthenticatedExtendedCard: false;
  security?: SecurityRequirementV03[];
  /** This kit's: what a reader of the card should know (a loopback URL on a wildcard bind). */
  warnings?: string[];
};
