/**
 * @module console/types — the shapes the console reads from the hub, declared once for every page: the
 * hub API's answers (`/api/*`), the A2A v1.0 task as the HTTP+JSON binding sends it, and the
 * mesh's projects, presence and history. Only what the pages read is declared; pages import a
 * shape with `@type {import('../types').X}`.
 */

import type { FunctionComponent, TargetedEvent } from 'preact';

// ---- the console's own pieces ----

/** A page of the navigation: its hash route, its title and how to load the component that draws it. */
export interface Page {
  id: string;
  title: string;
  /** Pages load when first opened, so the first load carries one page's code. */
  load: () => Promise<FunctionComponent>;
}

/** An input or select whose value a handler reads. */
export type FieldEvent = TargetedEvent<HTMLInputElement | HTMLSelectElement>;
/** A form being submitted. */
export type FormEvent = TargetedEvent<HTMLFormElement, SubmitEvent>;

// ---- errors ----

/** How every answer of the hub names a failure: a stable code and a message for people. */
export interface ApiError {
  code: string;
  message: string;
}

/** A refused POST, as the console's api module hands it to a page (`ok: false`). */
export interface Refusal {
  ok: false;
  error: ApiError;
}

// ---- the hub API (/api/*) ----

export interface NodeStatus {
  name: string;
  role: string;
  url: string;
  /** `a2a`: card and /a2a; `peer`: signed peer HTTP only; `unknown`: never reached. */
  kind: 'a2a' | 'peer' | 'unknown';
  online: boolean;
  latencyMs: number | null;
  agentBacked: boolean | null;
  warnings: string[];
  skills: { id: string; name: string }[];
  protocolVersions: string[];
  /** Its card's signature against the key the hub pinned (hub/fleet/view.ts). */
  cardSignature?: { state: 'verified' | 'failed' | 'unpinned'; kid?: string; code?: string };
  error?: ApiError;
}

/** `GET /api/fleet`. */
export interface FleetSnapshot {
  hub: string;
  checkedAt: string;
  online: number;
  nodes: NodeStatus[];
  /** Why the fleet file's last change could not be read: the view is the last good one. */
  fleetFileProblem?: string;
}

/** One reading of the fleet, as the Fleet page draws it over time. */
export interface FleetSample {
  at: string;
  nodes: { name: string; online: boolean; latencyMs: number | null }[];
}

/** One message of `GET /api/fleet/stream`: the fleet now; the kept history first, then each new reading. */
export interface FleetFrame {
  snapshot: FleetSnapshot;
  samples: FleetSample[];
}

export type TraceOutcome = 'ok' | 'failed' | 'empty';

/** One `fleet.invoke` call, as `GET /api/trace` and `/api/trace/stream` send it. */
export interface TraceRecord {
  id: number;
  /** ISO 8601 time the call started. */
  ts: string;
  from: string;
  to: string;
  capability: string;
  durationMs: number;
  outcome: TraceOutcome;
  errorCode: string | null;
  bytes: number;
  /** W3C trace id (32 hex digits) shared by every call one question caused; '' on records older than trace ids. */
  traceId: string;
  /** This call's span id (16 hex digits). */
  spanId: string;
  /** The span the call was made under: another record's `spanId` when that call made this one, or null. */
  parentSpanId: string | null;
}

/** `GET /api/trace`: newest first; `nextBefore` pages on. */
export interface TracePage {
  records: TraceRecord[];
  nextBefore: number | null;
}

export interface AskFact {
  node: string;
  tool: string;
  summary: string;
  result: unknown;
  traceId?: number;
}

export interface AskTry {
  node: string;
  tool: string;
  score: number;
  outcome: TraceOutcome;
  errorCode?: string;
  traceId?: number;
}

/** `POST /api/ask`. */
export interface AskAnswer {
  question: string;
  plannedBy: 'keywords' | 'model';
  /** Why the model did not plan, when it was asked and the keywords planned instead. */
  planNote?: string;
  answered: boolean;
  answer: string;
  facts: AskFact[];
  tried: AskTry[];
}

/** One sector as scanner's `sector.movement` reports it. */
export interface SectorMove {
  sector: string;
  name: string;
  avgChangePct: number;
  signaled: number;
}

export interface SectorMovement {
  asOf: string;
  sectors: SectorMove[];
}

/** One industry `customer.reach` recommends. */
export interface Recommendation {
  rank: number;
  industry: string;
  name: string;
  avgChangePct: number;
  signaledStocks: number;
  openCustomers: number;
  inFollowUp: number;
  why: string;
}

export interface CustomerReach {
  asOf: string;
  recommendations: Recommendation[];
}

export interface Entity {
  uscc: string;
  name: string;
  crmId: string;
  industry: string;
  city: string;
  stockCode: string | null;
  stockName: string | null;
}

export interface EntityCandidate {
  crmId: string | null;
  uscc: string | null;
  usccValid: boolean;
  name: string;
  industry: string | null;
  stockCode: string | null;
  stockName: string | null;
  onScanner: boolean;
  matchedBy: ('uscc' | 'code' | 'name')[];
  /** Why this candidate is not a confirmed entity; absent when it is. */
  unconfirmed?: string;
}

export interface EntityResolution {
  status: 'matched' | 'ambiguous' | 'unmatched';
  entity?: Entity;
  candidates: EntityCandidate[];
  reason: string;
}

export interface CoverageGap {
  kind: string;
  key: string;
  records: string[];
  reason: string;
}

export interface EntityCoverage {
  asOf: { crm: string; scanner: string };
  crm: { customers: number; aligned: number };
  scanner: { codes: number; aligned: number };
  gaps: CoverageGap[];
}

/** A stock as the advisor proposes it in a negotiation. */
export interface Proposal {
  code: string;
  name: string;
  sector: string;
  changePct: number;
  signals: string[];
}

export interface NegotiationVeto {
  round: number;
  code: string;
  reason: string;
  detail?: string;
  proposal: Proposal;
}

export interface NegotiationTurn {
  round: number;
  agent: 'advisor' | 'customer';
  node: string;
  skill: string;
  ok: boolean;
  traceId?: number;
  error?: ApiError;
}

/** `GET /api/model`: whether the hub has a model configured, and whether it answers. */
export interface HubModel {
  configured: boolean;
  answering: boolean;
}

/** `negotiation.start`'s result and `GET /api/negotiations/<id>`. */
export interface Negotiation {
  id: string;
  /** Who took the agents' turns: their rules, or their models. */
  agents?: 'rules' | 'model';
  contextId: string;
  customer: string;
  customerName: string;
  advisor: string;
  customerAgent: string;
  startedAt: string;
  rounds: number;
  outcome: 'deal' | 'no-deal';
  ended: 'accepted' | 'exhausted' | 'max-rounds' | 'failed';
  summary: string;
  deal?: { round: number; proposal: Proposal; reason: string };
  vetoes: NegotiationVeto[];
  transcript: NegotiationTurn[];
  error?: ApiError;
}

/** One line of `GET /api/negotiations`. */
export interface NegotiationSummary {
  id: string;
  customer: string;
  customerName: string;
  startedAt: string;
  outcome: 'deal' | 'no-deal';
  rounds: number;
  vetoCodes: string[];
  deal?: { code: string; name: string };
}

/** The result of each hub capability the console runs through `POST /api/hub`. */
export interface HubResults {
  'sector.movement': SectorMovement;
  'customer.reach': CustomerReach;
  'entity.resolve': EntityResolution;
  'entity.coverage': EntityCoverage;
  'negotiation.start': Negotiation;
}

/** `POST /api/hub`: the capability's result and its one-line summary. */
export interface HubAnswer<R> {
  ok: true;
  result: R;
  summary?: string;
}

// ---- the hub's tasks: A2A v1.0 over the HTTP+JSON binding ----

export type TaskState =
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_AUTH_REQUIRED'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_REJECTED';

/** One content item: exactly one of `text`, `raw`, `url`, `data`. */
export interface Part {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  mediaType?: string;
}

export interface Message {
  messageId: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: Part[];
  contextId?: string;
  taskId?: string;
}

export interface Artifact {
  artifactId: string;
  name?: string;
  parts: Part[];
}

/** What the hub keeps on a delegated task (`metadata.delegation`). */
export interface Delegation {
  executor: string;
  job_id: string;
  recipe?: string;
  /** The model name the model recipe was given. */
  model?: string;
  prompt: string;
  submittedAt: string;
  /** The hub task this delegation continues, and the turns before it (oldest first). */
  continues?: string;
  turns?: { prompt: string; output: string; job_id: string; taskId: string }[];
}

/** `task.delegate`'s arguments. */
export interface DelegateArgs {
  prompt: string;
  recipe?: string;
  executor?: string;
  model?: string;
  taskId?: string;
}

export interface Task {
  id: string;
  contextId: string;
  status: { state: TaskState; message?: Message; timestamp?: string };
  artifacts?: Artifact[];
  history?: Message[];
  /** `delegation` on a delegated task; `progress` is whatever the executor reports. */
  metadata?: { delegation?: Delegation; progress?: unknown; [key: string]: unknown };
}

/** `GET /tasks` (ListTasks). */
export interface TaskPage {
  tasks: Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/** `POST /message:send` (SendMessage): a task, or a message when the agent answered at once. */
export type SendAnswer = { task: Task } | { message: Message };

/** The HTTP+JSON binding's error body (AIP-193). */
export interface A2AErrorBody {
  error: {
    code: number;
    status: string;
    message: string;
    details?: { '@type': string; reason?: string }[];
  };
}

// ---- the mesh ----

export interface Project {
  name: string;
  displayName?: string;
  description?: string;
  createdAt: number;
}

export interface PresentPeer {
  name: string;
  presenceId: string;
  joinedAt: number;
}

/** `GET /v1/presence`. */
export interface Roster {
  project: string;
  peers: PresentPeer[];
}

export interface MeshMessage {
  messageRef: string;
  from: { name: string; presenceId: string };
  target: { type: 'agent'; name: string } | { type: 'project' };
  payload: { encoding: 'identity' | 'gzip+base64'; data: string; uncompressedBytes: number };
  attachments: { name: string }[];
  createdAt: number;
  replyTo?: string;
}

/** `GET /v1/history`. */
export interface HistoryPage {
  messages: MeshMessage[];
}

/** One message of `GET /v1/watch`: the roster after a change, or a new message. */
export type ProjectEvent =
  | { type: 'roster'; peers: PresentPeer[] }
  | { type: 'message'; message: MeshMessage };

/** `GET /api/mesh/me`: the presence the hub holds (or would hold) for this visitor in a project. */
export interface MeshIdentity {
  project: string;
  /** The hub's name. */
  hub: string;
  signedIn: boolean;
  /** The roster name: held, or asked for on the first send; null for an anonymous visitor. */
  name: string | null;
  present: boolean;
}

/** `POST /api/mesh/send`: who the message went from and to. */
export interface MeshSent {
  ok: true;
  result: { name: string; messageRef: string; recipients: string[] };
}
