/**
 * @module test/console-types.check — the console's shapes (console/types.d.ts) tied to the
 * server's: each server type must be assignable to the console type that restates it, so a field a
 * page reads that the server renames, drops or retypes fails `bun run typecheck`. Checked by the
 * compiler only (no runtime part); test/console-types.test.ts makes sure this file stays compiled.
 */

import type * as C from '../console/types.d.ts';
import type * as Fleet from '../hub/fleet/view.ts';
import type * as Live from '../hub/http/live.ts';
import type * as Trace from '../lib/fleet/trace.ts';
import type * as Ask from '../hub/workbench/ask.ts';
import type * as Candidates from '../hub/workbench/entity-candidates.ts';
import type * as Resolve from '../hub/workbench/entity-resolve.ts';
import type * as Coverage from '../hub/workbench/entity-coverage.ts';
import type * as Terms from '../lib/domain/negotiation-terms.ts';
import type * as Record_ from '../hub/workbench/negotiation-record.ts';
import type * as V1 from '../lib/a2a/wire/v1-types.ts';
import type * as Delegate from '../hub/workbench/delegate.ts';
import type * as MeshStore from '../lib/mesh/store.ts';
import type * as Wire from '../lib/mesh/wire.ts';

/** Compiles only when `Server` is assignable to `Console`. */
type Fits<Server extends Console, Console> = [Server, Console];

export type Checks = [
  Fits<Fleet.NodeStatus, C.NodeStatus>,
  Fits<Fleet.FleetSnapshot, C.FleetSnapshot>,
  Fits<Live.FleetSample, C.FleetSample>,
  Fits<Live.FleetFrame, C.FleetFrame>,
  Fits<Trace.TraceRecord, C.TraceRecord>,
  Fits<Ask.AskAnswer, C.AskAnswer>,
  Fits<Candidates.Entity, C.Entity>,
  Fits<Candidates.EntityCandidate, C.EntityCandidate>,
  Fits<Resolve.EntityResolution, C.EntityResolution>,
  Fits<Coverage.EntityCoverage, C.EntityCoverage>,
  Fits<Terms.Proposal, C.Proposal>,
  Fits<Record_.NegotiationVeto, C.NegotiationVeto>,
  Fits<Record_.NegotiationTurn, C.NegotiationTurn>,
  Fits<Record_.Negotiation, C.Negotiation>,
  // Tasks as the HTTP+JSON binding writes them; their metadata is the agent's (the hub's
  // delegations are checked on their own).
  Fits<Omit<V1.TaskV1, 'metadata'>, Omit<C.Task, 'metadata'>>,
  Fits<V1.ListTasksPageV1, Omit<C.TaskPage, 'tasks'> & { tasks: Omit<C.Task, 'metadata'>[] }>,
  Fits<V1.MessageV1, C.Message>,
  Fits<V1.PartV1, C.Part>,
  Fits<V1.ArtifactV1, C.Artifact>,
  Fits<Delegate.Delegation, C.Delegation>,
  Fits<Delegate.DelegateArgs, C.DelegateArgs>,
  Fits<MeshStore.Project, C.Project>,
  Fits<Wire.MeshMessage, C.MeshMessage>,
];
