/**
 * @module lib/a2a/engine/agent-turn — one agent turn on a task: the context the agent gets, the
 * reporters it changes the task through (status, artifacts, metadata, a Message answer), and how
 * each change is applied to the task, stored and published. A turn that throws fails the task.
 */

import type { AgentContext, ArtifactInput, TaskUpdater } from '../agent.ts';
import { failureParts } from '../../errors/as-data.ts';
import { jsonBytes } from '../../limits.ts';
import type { Principal } from '../../auth/principal.ts';
import {
  TERMINAL_STATES,
  type Message,
  type Part,
  type ProtocolVersion,
  type TaskState,
} from '../types.ts';
import type { EngineCore, TaskCoordination } from './core.ts';
import type { Live } from './live-tasks.ts';
import { addArtifact, artifactFit, setStatus, toArtifact, type TaskUpdate } from './task-rules.ts';

/** Applies one change to a live task, stores it and publishes its event; a terminal task is immutable. */
export function applyUpdate(core: EngineCore, live: Live, update: TaskUpdate): void {
  const task = live.rec.task;
  if (TERMINAL_STATES.has(task.status.state)) return;
  core.live.materialize(live);
  if (update.kind === 'status') {
    const event = setStatus(task, update.state, update.note, core.now, core.limits);
    core.live.store(live, event);
    core.live.publish(live, event);
    return;
  }
  const existing = task.artifacts.findIndex((a) => a.artifactId === update.artifact.artifactId);
  live.artifactBytes ??= jsonBytes(task.artifacts);
  const fit = artifactFit(
    task,
    live.artifactBytes,
    existing,
    update.artifact,
    update.append,
    core.limits,
  );
  if ('refused' in fit) {
    core.log('warn', 'task artifacts past their cap', { task: task.id, limit: fit.refused });
    applyUpdate(core, live, {
      kind: 'status',
      state: 'failed',
      note: failureParts({ code: 'TASK_TOO_LARGE', message: fit.refused }),
    });
    return;
  }
  live.artifactBytes = fit.bytes;
  const event = addArtifact(task, existing, update);
  core.live.store(live, event);
  core.live.publish(live, event);
}

/** The status, artifact and metadata reporters of a task, active while `active()` says so. */
export function taskUpdater(core: EngineCore, live: Live, active: () => boolean): TaskUpdater {
  const status = (state: TaskState, note?: string | Part[]) => {
    if (active())
      applyUpdate(core, live, { kind: 'status', state, ...(note !== undefined ? { note } : {}) });
  };
  return {
    get task() {
      return live.rec.task;
    },
    working: (note) => status('working', note),
    complete: (note) => status('completed', note),
    fail: (reason) => status('failed', reason),
    status,
    artifact(input: ArtifactInput, opts) {
      const artifact = toArtifact(input);
      if (active())
        applyUpdate(core, live, {
          kind: 'artifact',
          artifact,
          append: !!opts?.append,
          lastChunk: !!opts?.lastChunk,
        });
      return artifact;
    },
    setMetadata(values) {
      if (!active() || TERMINAL_STATES.has(live.rec.task.status.state)) return;
      live.rec.task.metadata = { ...live.rec.task.metadata, ...values };
      if (live.stored) core.live.store(live);
    },
  };
}

/** Who runs a turn, on what. */
export interface TurnInput {
  live: Live;
  message: Message;
  /** Whether the message continues a stored task. */
  continued: boolean;
  version: ProtocolVersion;
  caller: Principal;
}

/** Runs one agent turn; resolves when the agent's handler returns (after failing the task if it threw). */
export async function runTurn(
  core: EngineCore,
  coordination: TaskCoordination,
  { live, message, continued, version, caller }: TurnInput,
): Promise<void> {
  const controller = core.live.startTurn(live);
  const id = live.rec.task.id;
  coordination.turnStarted(id);
  let answered = false;
  const active = () => !controller.signal.aborted && !answered;
  const up = taskUpdater(core, live, active);
  const ctx: AgentContext = {
    get task() {
      return live.rec.task;
    },
    message,
    text: message.parts
      .filter((p) => typeof p.text === 'string')
      .map((p) => p.text)
      .join('\n'),
    data: message.parts.find((p) => p.data !== undefined)?.data,
    signal: controller.signal,
    continued,
    version,
    caller,
    working: up.working,
    complete: up.complete,
    fail: up.fail,
    status: up.status,
    artifact: up.artifact,
    setMetadata: up.setMetadata,
    reject: (reason) => up.status('rejected', reason),
    requireInput: (question) => up.status('input-required', question),
    requireAuth: (reason) => up.status('auth-required', reason),
    reply(content) {
      if (!active()) return;
      const parts = typeof content === 'string' ? [{ text: content }] : content;
      if (live.stored) return up.status('completed', parts);
      answered = true;
      const reply: Message = {
        messageId: crypto.randomUUID(),
        role: 'agent',
        parts,
        contextId: live.rec.task.contextId,
      };
      live.reply = reply;
      core.live.forget(live);
      core.live.publish(live, { kind: 'message', message: reply });
    },
  };
  try {
    await core.agent.handle(ctx);
  } catch (e) {
    core.log('error', 'agent turn failed', { task: id, error: (e as Error)?.message ?? String(e) });
    if (active() && !TERMINAL_STATES.has(live.rec.task.status.state))
      applyUpdate(core, live, {
        kind: 'status',
        state: 'failed',
        note: 'The agent failed while handling the message',
      });
  } finally {
    coordination.turnEnded(id);
    core.live.endTurn(live, controller, !answered);
  }
}

/**
 * A turn whose own failure handling threw (a bug, or a task the store cannot hold): logged with
 * its kind only, never left as an unhandled rejection that would stop the process.
 */
export function turnCrashed(core: EngineCore, live: Live, e: unknown): void {
  core.log('error', 'task turn crashed', {
    task: live.rec.task.id,
    error: (e as Error)?.name ?? 'unknown',
  });
}
