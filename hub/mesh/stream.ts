/**
 * @module hub/mesh/stream — hands each project's committed messages to the hub's delivery in
 * sequence order, whichever hub committed them. This hub's own commits arrive as messages; other
 * hubs' commits arrive as "project P is committed up to S", and the missing rows are read from the
 * store. A project is followed only while this hub has presences in it.
 */

import type { Log } from '../../lib/log.ts';
import type { MeshStore } from '../../lib/mesh/store.ts';
import type { MeshMessage } from '../../lib/mesh/wire.ts';

/** A committed message to deliver, with what its sending hub knew at send time (absent for other hubs' messages). */
export interface StreamEntry<Local = unknown> {
  message: MeshMessage;
  local?: Local;
  /** The message's JSON when it is already encoded (its `message` frames reuse it). */
  json?: string;
}

export interface DeliveryStreamOptions<Local> {
  store: MeshStore;
  log: Log;
  /** Delivers one message on this hub; called once per sequence, in order. */
  deliver: (entry: StreamEntry<Local>) => void;
  /** This hub's presence ids in a project (the rows worth reading are broadcasts and messages to them). */
  presenceIds: (project: string) => string[];
  /** Most sequences read from the store at once. */
  readChunk?: number;
  /** Wait before reading again after a failed read. */
  retryMs?: number;
}

interface Tracker<Local> {
  /** Every sequence up to here was handed to `deliver` (or needed nothing on this hub). */
  delivered: number;
  /** The highest sequence known to be committed. */
  known: number;
  /** This hub's commits not yet handed on, by sequence. */
  local: Map<number, StreamEntry<Local>>;
  reading: boolean;
}

export function createDeliveryStream<Local>(o: DeliveryStreamOptions<Local>) {
  const trackers = new Map<string, Tracker<Local>>();
  const chunk = o.readChunk ?? 2_000;
  const retryMs = o.retryMs ?? 500;

  function pump(project: string): void {
    const t = trackers.get(project);
    if (!t) return;
    for (let e = t.local.get(t.delivered + 1); e; e = t.local.get(t.delivered + 1)) {
      t.local.delete(t.delivered + 1);
      t.delivered++;
      o.deliver(e);
    }
    if (t.delivered >= t.known || t.reading) return;
    // A gap: sequences committed by other hubs (or ours, seen elsewhere first) are read from the store.
    t.reading = true;
    const after = t.delivered;
    const upTo = Math.min(t.known, after + chunk);
    o.store.range(project, after, upTo, o.presenceIds(project)).then(
      (rows) => {
        t.reading = false;
        if (trackers.get(project) !== t) return;
        const read = new Map(rows.map((m) => [m.sequence, m]));
        for (let s = t.delivered + 1; s <= upTo; s++) {
          const mine = t.local.get(s);
          t.local.delete(s);
          t.delivered = s;
          const m = mine ?? (read.has(s) ? { message: read.get(s)! } : undefined);
          if (m) o.deliver(m);
        }
        pump(project);
      },
      (e) => {
        t.reading = false;
        o.log('error', 'mesh: reading committed messages failed; retrying', {
          project,
          error: String(e),
        });
        setTimeout(() => pump(project), retryMs);
      },
    );
  }

  return {
    /** Starts following a project from `head` (a presence claimed here); nothing happens when it is followed already. */
    follow(project: string, head: number): void {
      if (!trackers.has(project))
        trackers.set(project, { delivered: head, known: head, local: new Map(), reading: false });
    },
    /** Stops following a project (its last presence here left). */
    unfollow(project: string): void {
      trackers.delete(project);
    },
    /** This hub committed a message. */
    committedHere(entry: StreamEntry<Local>): void {
      const t = trackers.get(entry.message.project);
      if (!t || entry.message.sequence <= t.delivered) return;
      t.local.set(entry.message.sequence, entry);
      if (entry.message.sequence > t.known) t.known = entry.message.sequence;
      pump(entry.message.project);
    },
    /** Another hub committed `project` up to `sequence`. */
    committedElsewhere(project: string, sequence: number): void {
      const t = trackers.get(project);
      if (!t || sequence <= t.known) return;
      t.known = sequence;
      pump(project);
    },
    /** Every followed project, to re-read its head after notifications were missed. */
    projects: (): string[] => [...trackers.keys()],
  };
}
