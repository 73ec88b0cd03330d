/**
 * @module hub/mesh/console-presence — the mesh presences the hub holds for console visitors: the
 * browser joins no mesh, so a signed-in principal (console session or bearer token) that sends
 * from the console's quick panel is present through the hub, one presence per principal and
 * project, under the principal's name (hub/mesh/principal-presence.ts). The presences join with a
 * secret that never leaves the process, are bounded (`CONSOLE_MESH_LIMITS.presences`, then
 * CONSOLE_MESH_FULL) and leave after `idleMs` without a send. Once joined, each is named its
 * visitor's principal, so its messages carry it (a node runs their turns as that principal).
 */

import { timingSafeEqual } from 'node:crypto';
import { newSecret } from '../../lib/auth/secret.ts';
import { ownerKey, type Principal } from '../../lib/auth/principal.ts';
import type { Failure, Result } from '../../lib/errors/result.ts';
import type { Log } from '../../lib/log.ts';
import { createMeshClient, type MeshClient } from '../../lib/mesh/client.ts';
import type { SendReceipt } from '../../lib/mesh/connection.ts';
import { joinUnderName } from './principal-presence.ts';

const CONSOLE_MESH_LIMITS = {
  /** Presences held for console visitors at once (docs/limits.md). */
  presences: 64,
  /** A presence leaves after this long without a send. */
  idleMs: 15 * 60_000,
};

export interface ConsolePresencesOptions {
  /** Where the hub itself is reached (known once it listens). */
  hubUrl: () => string | undefined;
  log: Log;
  limits?: Partial<typeof CONSOLE_MESH_LIMITS>;
  /** Told when a presence leaves (idle, or a failed join). */
  onRelease?: (roster: { principal: string; project: string }) => void;
  /** Names the principal a joined presence sends for (the mesh stamps it on its messages). */
  actFor?: (project: string, name: string, principal: string) => boolean;
}

interface Held {
  /** The roster name once joined. */
  joined: Promise<Result<string>>;
  idle?: ReturnType<typeof setTimeout>;
}

/** Principals a console visitor can be present as: a session's or a token's name. */
export const presentable = (p: Principal): p is Principal & { name: string } =>
  p.kind === 'session' || p.kind === 'token';

export function createConsolePresences(o: ConsolePresencesOptions) {
  const limits = { ...CONSOLE_MESH_LIMITS, ...o.limits };
  // The hub's own presences join its mesh with this; nothing outside the process sees it.
  const secret = Buffer.from(newSecret('mesh_'));
  const held = new Map<string, Held>();
  let client: MeshClient | undefined;
  const keyOf = (caller: Principal, project: string) => `${ownerKey(caller)}\n${project}`;

  function release(key: string): void {
    const h = held.get(key);
    if (!h) return;
    clearTimeout(h.idle);
    held.delete(key);
    void client?.disconnect(key);
    const [principal = '', project = ''] = key.split('\n');
    o.onRelease?.({ principal, project });
  }

  function touch(key: string, h: Held): void {
    clearTimeout(h.idle);
    h.idle = setTimeout(() => release(key), limits.idleMs);
    (h.idle as { unref?: () => void }).unref?.();
  }

  function meshClient(url: string): MeshClient {
    client ??= createMeshClient({ hubUrl: url, token: secret.toString(), log: o.log });
    return client;
  }

  async function join(
    key: string,
    caller: Principal & { name: string },
    project: string,
  ): Promise<Result<string>> {
    const url = o.hubUrl();
    if (!url) return failed('CONSOLE_MESH_UNAVAILABLE', 'the hub is not listening yet');
    const r = await joinUnderName(meshClient(url), key, project, caller.name);
    if (r.ok) return principalNamed(o, project, caller, r);
    // A failed join is not kept: the next send tries again.
    release(key);
    // A project that does not exist is the sender's mistake (404), not the mesh being down.
    if (r.error.code === 'A2A_UNKNOWN_PROJECT' || r.error.code === 'unknown_project')
      return failed('A2A_UNKNOWN_PROJECT', `project ${project} does not exist`);
    return failed('CONSOLE_MESH_UNAVAILABLE', r.error.message);
  }

  return {
    /** Whether a mesh `hello` carries the secret of the hub's own presences. */
    accepts(token: string): boolean {
      const t = Buffer.from(token);
      return t.length === secret.length && timingSafeEqual(t, secret);
    },

    /** The roster name the caller's presence in `project` has, if the hub holds one. */
    async nameOf(caller: Principal, project: string): Promise<string | undefined> {
      const h = held.get(keyOf(caller, project));
      const r = await h?.joined;
      return r?.ok ? r.result : undefined;
    },

    /** Sends as the caller's presence in `project`, joining it first when the hub holds none. */
    async send(
      caller: Principal & { name: string },
      project: string,
      msg: { to?: string; text: string },
    ): Promise<Result<SendReceipt & { name: string }>> {
      const key = keyOf(caller, project);
      let h = held.get(key);
      if (!h) {
        if (held.size >= limits.presences)
          return failed(
            'CONSOLE_MESH_FULL',
            `the hub holds ${limits.presences} console presences already; try again later`,
          );
        h = { joined: join(key, caller, project) };
        held.set(key, h);
      }
      const joined = await h.joined;
      if (!joined.ok) return joined;
      const r = await client!.send(key, {
        target: msg.to ? { type: 'agent', name: msg.to } : { type: 'project' },
        text: msg.text,
      });
      // Idle time counts from the last send's end.
      if (held.get(key) === h) touch(key, h);
      return r.ok ? { ok: true, result: { ...r.result, name: joined.result } } : r;
    },

    get size(): number {
      return held.size;
    },

    /** Every presence leaves (the hub stops). */
    async close(): Promise<void> {
      for (const h of held.values()) clearTimeout(h.idle);
      held.clear();
      await client?.close();
    },
  };
}

/** A joined presence, named its visitor's principal first (its messages carry it). */
function principalNamed<R extends { ok: true; result: string }>(
  o: ConsolePresencesOptions,
  project: string,
  caller: Principal,
  r: R,
): R {
  o.actFor?.(project, r.result, ownerKey(caller));
  return r;
}

const failed = (code: string, message: string): { ok: false; error: Failure } => ({
  ok: false,
  error: { code, message },
});

export type ConsolePresences = ReturnType<typeof createConsolePresences>;
