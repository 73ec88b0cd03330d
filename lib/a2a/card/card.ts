/**
 * @module lib/a2a/card/card — the agent card, generated from the node's catalog and valid for both
 * protocol generations: `supportedInterfaces` for JSON-RPC 1.0 and 0.3 on the same URL,
 * HTTP+JSON 1.0 at the node root and gRPC 1.0 on its own port, plus the v0.3 top-level fields. Whether a model answers is
 * declared as this project's agent-backed extension. Served with ETag, Last-Modified and Cache-Control.
 */

import { discoveryUrl } from '../../auth/oidc/issuer-url.ts';
import { SCOPES, scopeFor } from '../../auth/scopes.ts';
import type { Skill } from '../../catalog/catalog.ts';
import type {
  AgentCard,
  AgentExtension,
  AgentInterface,
  AgentSkill,
  BearerSecurityScheme,
  OpenIdSecurityScheme,
  SecurityRequirementV03,
  SecurityRequirementV1,
} from './types.ts';

/**
 * The agent-backed extension: every node declares it in `capabilities.extensions` with
 * `params.agentBacked` true when a model answers its messages, false when the node's own code
 * does. Informational (`required: false`): clients need not activate it.
 */
export const AGENT_BACKED_EXTENSION = 'urn:lume-a2a:extension:agent-backed:v1';

function agentBackedExtension(agentBacked: boolean): AgentExtension {
  return {
    uri: AGENT_BACKED_EXTENSION,
    description:
      'Whether a language model answers messages to this agent: params.agentBacked is true if so, false if code does.',
    required: false,
    params: { agentBacked },
  };
}

/**
 * What a card says about being agent-backed: the extension's `params.agentBacked`, or null when
 * the card does not declare the extension (another implementation's agent, or a malformed card).
 */
export function readAgentBacked(card: unknown): boolean | null {
  const caps = (card as { capabilities?: { extensions?: unknown } } | null)?.capabilities;
  if (!caps || !Array.isArray(caps.extensions)) return null;
  const ext = caps.extensions.find(
    (e): e is { params?: { agentBacked?: unknown } } =>
      !!e && typeof e === 'object' && (e as { uri?: unknown }).uri === AGENT_BACKED_EXTENSION,
  );
  const value = ext?.params?.agentBacked;
  return typeof value === 'boolean' ? value : null;
}

export interface CardInput {
  name: string;
  description: string;
  version: string;
  /** Base URL clients reach the node at, without a trailing slash. */
  baseUrl: string;
  /** `host:port` of the gRPC binding (lib/a2a/grpc/), when the node serves it. */
  grpcAddress?: string;
  skills: Skill[];
  inputModes: string[];
  outputModes: string[];
  streaming: boolean;
  pushNotifications: boolean;
  /** Whether a model answers messages (false: a keyword pick over read-only tools). */
  agentBacked: boolean;
  /**
   * Tenants served (lib/node/tenants.ts): each adds the 1.0 interfaces again with `tenant` set,
   * after the untenanted ones (a client copies an interface's `tenant` into its requests).
   */
  tenants?: readonly string[];
  /**
   * The card of one tenant (`/{tenant}/.well-known/agent-card.json`): its 1.0 interfaces alone
   * (then the untenanted 0.3 one), so a client that keeps any 1.0 interface acts in that tenant.
   */
  inTenant?: string;
  /** The node author's extensions (`defineNode({ extensions })`), after the agent-backed one. */
  extensions?: readonly AgentExtension[];
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  warnings?: string[];
  /**
   * Who must authenticate: `all` when every A2A call needs a principal, `writes` when only skills
   * that change state or run work do (those listed in `protectedSkills`), `none` for an open node.
   */
  auth?: {
    required: 'all' | 'writes' | 'none';
    protectedSkills: readonly string[];
    /** Trusted issuers: each is an OpenID Connect scheme, its requirements naming scopes. */
    issuers?: readonly string[];
  };
}

/** The card's name for the bearer scheme, in both protocol generations. */
const BEARER_SCHEME = 'bearer';

/**
 * The bearer scheme in one object both generations read: the v1.0 form (`httpAuthSecurityScheme`)
 * and the v0.3 OpenAPI form (`type: http`, `scheme: bearer`) side by side, since both name the
 * field `securitySchemes`. Each SDK reads its own members and ignores the others.
 */
function bearerScheme(): BearerSecurityScheme {
  const description =
    'A bearer token made with `bun run keys token add <name>` (sent as Authorization: Bearer <token>). Fleet nodes sign their requests instead (lib/peer).';
  return {
    httpAuthSecurityScheme: { scheme: 'Bearer', description },
    type: 'http',
    scheme: 'bearer',
    description,
  };
}

/** The card's name for the n-th issuer's scheme: `oidc`, then `oidc-2`, … */
const oidcSchemeName = (i: number) => (i === 0 ? 'oidc' : `oidc-${i + 1}`);

function openIdScheme(issuer: string): OpenIdSecurityScheme {
  const openIdConnectUrl = discoveryUrl(issuer);
  const description = `An access token of ${issuer} (client credentials or authorization code) naming this node's audience; scopes: a2a.read reads, a2a.write changes state, a2a.exec runs exec.* work.`;
  return {
    openIdConnectSecurityScheme: { openIdConnectUrl, description },
    type: 'openIdConnect',
    openIdConnectUrl,
    description,
  };
}

/**
 * The requirements of one scope, either scheme satisfying them: the bearer scheme (no scopes),
 * or any issuer's scheme with the scope. v1.0 `[{schemes: {bearer: {list: []}}}, {schemes:
 * {oidc: {list: [scope]}}}]`, v0.3 `[{bearer: []}, {oidc: [scope]}]`.
 */
const requirementsV1 = (issuers: number, scope: string): SecurityRequirementV1[] => [
  { schemes: { [BEARER_SCHEME]: { list: [] } } },
  ...Array.from({ length: issuers }, (_, i) => ({
    schemes: { [oidcSchemeName(i)]: { list: [scope] } },
  })),
];
const requirementsV03 = (issuers: number, scope: string): SecurityRequirementV03[] => [
  { [BEARER_SCHEME]: [] },
  ...Array.from({ length: issuers }, (_, i) => ({ [oidcSchemeName(i)]: [scope] })),
];

/** The security fields of a card and of its protected skills (A2A 1.0 and 0.3 forms). */
function securityFields(
  auth: NonNullable<CardInput['auth']>,
  skills: Skill[],
): {
  card: Pick<AgentCard, 'securitySchemes' | 'securityRequirements' | 'security'>;
  skills: AgentSkill[];
} {
  const issuers = auth.issuers ?? [];
  const card: Pick<AgentCard, 'securitySchemes' | 'securityRequirements' | 'security'> = {
    securitySchemes: {
      [BEARER_SCHEME]: bearerScheme(),
      ...Object.fromEntries(issuers.map((iss, i) => [oidcSchemeName(i), openIdScheme(iss)])),
    },
  };
  if (auth.required === 'all') {
    card.securityRequirements = requirementsV1(issuers.length, SCOPES.read);
    card.security = requirementsV03(issuers.length, SCOPES.read);
  }
  const writes = new Set(auth.protectedSkills);
  // With issuers, every state-changing skill names its scope; without, only when anonymous callers may read.
  const guarded = new Set(auth.required === 'writes' || issuers.length ? auth.protectedSkills : []);
  return {
    card,
    skills: skills.map((s) => {
      if (!guarded.has(s.id)) return { ...s };
      const scope = scopeFor({ id: s.id, readOnly: !writes.has(s.id) });
      return {
        ...s,
        securityRequirements: requirementsV1(issuers.length, scope),
        security: requirementsV03(issuers.length, scope),
      };
    }),
  };
}

/**
 * The 1.0 interfaces in `tenant` (none: untenanted): JSON-RPC, HTTP+JSON (a client puts the
 * tenant in the path, `/{tenant}/…`), gRPC when served. The URLs are the same for every tenant.
 */
function v1Interfaces(c: CardInput, url: string, tenant?: string): AgentInterface[] {
  const t = tenant === undefined ? {} : { tenant };
  return [
    { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', ...t },
    // After JSON-RPC, so clients that walk the list in order keep preferring JSON-RPC.
    { url: c.baseUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', ...t },
    // gRPC names an address, not a URL (a2a.proto AgentInterface.url).
    ...(c.grpcAddress
      ? [{ url: c.grpcAddress, protocolBinding: 'GRPC', protocolVersion: '1.0', ...t } as const]
      : []),
  ];
}

export function buildAgentCard(c: CardInput): AgentCard {
  const url = `${c.baseUrl}/a2a`;
  const security = c.auth ? securityFields(c.auth, c.skills) : undefined;
  const [jsonRpc, ...rest] = v1Interfaces(c, url);
  const card: AgentCard = {
    name: c.name,
    description: c.description,
    version: c.version,
    supportedInterfaces:
      c.inTenant !== undefined
        ? [
            ...v1Interfaces(c, url, c.inTenant),
            { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
          ]
        : [
            jsonRpc!,
            { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
            ...rest,
            // Each tenant's interfaces after the untenanted ones (0.3 has no tenants).
            ...(c.tenants ?? []).flatMap((t) => v1Interfaces(c, url, t)),
          ],
    // v0.3 clients read these top-level fields instead of supportedInterfaces.
    url,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url, transport: 'JSONRPC' }],
    capabilities: {
      streaming: c.streaming,
      pushNotifications: c.pushNotifications,
      extendedAgentCard: false,
      extensions: [
        agentBackedExtension(c.agentBacked),
        ...(c.extensions ?? []).map((e) => ({ ...e })),
      ],
    },
    defaultInputModes: c.inputModes,
    defaultOutputModes: c.outputModes,
    skills: security ? security.skills : c.skills,
    supportsAuthenticatedExtendedCard: false,
    ...(security ? security.card : {}),
  };
  if (c.provider) card.provider = c.provider;
  if (c.documentationUrl) card.documentationUrl = c.documentationUrl;
  if (c.warnings?.length) card.warnings = c.warnings;
  return card;
}

/** The warning a card carries when the node binds every interface but advertises a loopback URL. */
export function bindWarnings(
  host: string,
  publicUrl: string | undefined,
  advertised: string,
): string[] {
  if ((host === '0.0.0.0' || host === '::') && !publicUrl)
    return [
      `Bound to ${host} without PEER_PUBLIC_URL: this card advertises ${advertised}, which clients on other machines cannot reach. Set PEER_PUBLIC_URL to an address they can.`,
    ];
  return [];
}

/** Signs a card as served (lib/a2a/card/signature.ts `signCard` with the node's current key). */
export type CardSigner = (card: AgentCard) => AgentCard;

/**
 * Serves a card with caching headers; a matching `If-None-Match` gets 304. The card is
 * serialised (and signed) once per change, not per request, and only when it is next read: a
 * node's start changes its card a few times (ports known, gRPC listening) and an idle node signs
 * it once, on the first request for it. `Last-Modified` is the time of the change. A new signer
 * re-signs the card in the same step that replaces body and ETag, so every response is one card
 * with its own signature.
 */
export class CardServer {
  private unsigned = '';
  private body = '';
  private etag = '';
  private lastModified = '';
  private card: AgentCard;
  /** When the card or its signer last changed, while the body is not yet made from it. */
  private changedAt: number | undefined;

  constructor(
    card: AgentCard,
    private now: () => number = Date.now,
    private sign?: CardSigner,
  ) {
    this.card = card;
    this.update(card, now);
  }

  update(card: AgentCard, now: () => number = this.now): void {
    const unsigned = JSON.stringify(card);
    if (unsigned === this.unsigned) return;
    this.unsigned = unsigned;
    this.card = card;
    this.changedAt = now();
  }

  /** Signs from now on with `sign` (a rotated key): the card served next carries its signature. */
  resign(sign: CardSigner, now: () => number = this.now): void {
    this.sign = sign;
    this.changedAt = now();
  }

  /** Makes body, ETag and Last-Modified from the card if it changed since they were made. */
  private publish(): void {
    if (this.changedAt === undefined) return;
    const at = this.changedAt;
    this.changedAt = undefined;
    const body = JSON.stringify(this.sign ? this.sign(this.card) : this.card);
    if (body === this.body) return;
    this.body = body;
    this.etag = `W/"${Bun.hash(body).toString(36)}"`;
    this.lastModified = new Date(Math.floor(at / 1000) * 1000).toUTCString();
  }

  /** The card as last updated, unsigned (signing it is left to the next read). */
  get unsignedCard(): AgentCard {
    return this.card;
  }

  get json(): AgentCard {
    this.publish();
    return JSON.parse(this.body) as AgentCard;
  }

  respond(req: Request): Response {
    this.publish();
    const headers = {
      'Content-Type': 'application/json',
      'Cache-Control': 'public, max-age=300',
      ETag: this.etag,
      'Last-Modified': this.lastModified,
      'Access-Control-Allow-Origin': '*',
    };
    if (req.headers.get('if-none-match') === this.etag)
      return new Response(null, { status: 304, headers });
    return new Response(this.body, { status: 200, headers });
  }
}
