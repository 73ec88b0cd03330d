/**
 * @module hub/mesh/postgres-cluster-context — what the parts of the PostgreSQL cluster share: the
 * database, this hub's id and lease, the view of the other hubs' presences with the hub's event
 * handlers, and the one line this hub's claims, takeovers and releases run in (made in
 * hub/mesh/postgres-cluster.ts).
 */

import type { SQL } from 'bun';
import type { Log } from '../../lib/log.ts';
import type { ClusterEvent, RemotePeer } from './cluster.ts';

export interface PgClusterContext {
  readonly sql: SQL;
  readonly log: Log;
  readonly hubId: string;
  /** This hub's address, recorded with its lease for operators. */
  readonly url?: string;
  readonly leaseSecs: number;
  readonly view: RemoteView;
  /** Runs `fn` after this hub's earlier claims, takeovers and releases. */
  readonly serial: <T>(fn: () => Promise<T>) => Promise<T>;
}

/** Other hubs' presences (project -> name -> peer), and who hears of their changes. */
export interface RemoteView {
  emit(e: ClusterEvent): void;
  onEvent(h: (e: ClusterEvent) => void): void;
  get(project: string, name: string): RemotePeer | undefined;
  /** A project's presences on other hubs, in join order. */
  list(project: string): RemotePeer[];
  /** Every presence of every project (a copy, safe to change the view while reading it). */
  all(): RemotePeer[];
  put(peer: RemotePeer): void;
  /** Removes the presence if the view still has that one under the name; answers it. */
  drop(project: string, name: string, presenceId: string): RemotePeer | undefined;
}

export function createRemoteView(): RemoteView {
  const handlers: ((e: ClusterEvent) => void)[] = [];
  const remote = new Map<string, Map<string, RemotePeer>>();
  return {
    emit(e) {
      for (const h of handlers) h(e);
    },
    onEvent: (h) => void handlers.push(h),
    get: (project, name) => remote.get(project)?.get(name),
    list: (project) =>
      [...(remote.get(project)?.values() ?? [])].sort((a, b) => a.joinedAt - b.joinedAt),
    all: () => [...remote.values()].flatMap((names) => [...names.values()]),
    put(peer) {
      let names = remote.get(peer.project);
      if (!names) remote.set(peer.project, (names = new Map()));
      names.set(peer.name, peer);
    },
    drop(project, name, presenceId) {
      const names = remote.get(project);
      const peer = names?.get(name);
      if (!peer || peer.presenceId !== presenceId) return undefined;
      names!.delete(name);
      if (names!.size === 0) remote.delete(project);
      return peer;
    },
  };
}

/** One line of work: each `fn` starts when the one before it has settled. */
export function serialLine(): <T>(fn: () => Promise<T>) => Promise<T> {
  let chain: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => {});
    return run;
  };
}
