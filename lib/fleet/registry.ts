/**
 * @module lib/fleet/registry — the fleet as it is now, in one place per process: its members (from
 * the fleet file, joins and `fleet remove`), the keys its ring pins for each, and a feed of what
 * changed. Every consumer reads `live` (or `current()`) instead of a copy taken at start, and
 * listens to `subscribe` to drop what it derived. The files are checked every `pollMs` (their
 * modification stamps only, so a quiet fleet costs two `stat` calls a second); a file that no
 * longer parses keeps the last good view, and `problem` says why.
 */

import { statSync } from 'node:fs';
import { fleetMember, loadFleet, type Fleet, type FleetMember } from '../config/fleet-file.ts';
import type { Log } from '../log.ts';
import type { PeerRing } from '../peer/signature.ts';

/** One change of the fleet, by member name. */
export interface FleetChange {
  kind: 'joined' | 'left' | 'moved' | 'changed' | 'rekeyed';
  name: string;
}

export interface FleetRegistryOptions {
  /** The fleet file this process follows; without one the fleet changes only through `replace`. */
  file?: string;
  /** Further files whose change means a new reading (the key ring). */
  alsoWatch?: readonly string[];
  /** The ring as last loaded, and how to load it again after its file changed. */
  ring?: { current: () => PeerRing | undefined; reload: () => Promise<void> };
  /** How often the files' stamps are compared (default 1,000 ms; 0: never, tests call `refresh`). */
  pollMs?: number;
  log?: Log;
}

type Listener = (changes: readonly FleetChange[], fleet: Fleet) => void;

/**
 * What a member is, every field of `FleetMember` in a fixed order (a reading from a file and one
 * made in code compare alike); a field left out here would be a change nobody hears of.
 */
const memberKey = (m: FleetMember) =>
  JSON.stringify([m.port, m.role, m.file, m.default, m.url, m.remote === true, m.relay === true]);

const keysOf = (ring: PeerRing | undefined, name: string) =>
  (ring?.get(name)?.ed25519 ?? []).join(',');

function stampOf(files: readonly string[]): string {
  return files
    .map((f) => {
      try {
        const s = statSync(f);
        return `${s.mtimeMs}:${s.size}`;
      } catch {
        return '-';
      }
    })
    .join(' ');
}

/** What differs between two readings of the fleet (and of its ring). */
export function fleetChanges(
  before: Fleet,
  after: Fleet,
  rings: { before?: PeerRing | undefined; after?: PeerRing | undefined } = {},
): FleetChange[] {
  const changes: FleetChange[] = [];
  const was = new Map([before.hub, ...before.nodes].map((m) => [m.name, m]));
  const is = new Map([after.hub, ...after.nodes].map((m) => [m.name, m]));
  for (const [name, m] of is) {
    const old = was.get(name);
    if (!old) changes.push({ kind: 'joined', name });
    else if (old.url !== m.url || old.port !== m.port) changes.push({ kind: 'moved', name });
    else if (memberKey(old) !== memberKey(m)) changes.push({ kind: 'changed', name });
    if (old && keysOf(rings.before, name) !== keysOf(rings.after, name))
      changes.push({ kind: 'rekeyed', name });
  }
  for (const name of was.keys()) if (!is.has(name)) changes.push({ kind: 'left', name });
  return changes;
}

/** A reading that no caller can change: the registry hands the same object to everyone. */
function frozen(fleet: Fleet): Fleet {
  const copy = (m: FleetMember) => Object.freeze({ ...m });
  return Object.freeze({
    hub: copy(fleet.hub),
    nodes: Object.freeze(fleet.nodes.map(copy)),
  }) as Fleet;
}

export class FleetRegistry {
  #fleet: Fleet;
  #version = 1;
  #problem: string | undefined;
  #stamp: string;
  #timer: ReturnType<typeof setInterval> | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #listeners = new Set<Listener>();
  readonly #o: FleetRegistryOptions;
  readonly #files: string[];

  /**
   * The fleet as it is at each read: `live.nodes` and `live.hub` always give the current
   * reading, so a part handed `live` at start never holds a stale picture.
   */
  readonly live: Fleet;

  constructor(initial: Fleet, o: FleetRegistryOptions = {}) {
    this.#o = o;
    this.#fleet = frozen(initial);
    this.#files = [...(o.file ? [o.file] : []), ...(o.alsoWatch ?? [])];
    this.#stamp = stampOf(this.#files);
    const self = this;
    this.live = {
      get hub() {
        return self.#fleet.hub;
      },
      get nodes() {
        return self.#fleet.nodes;
      },
    };
    const every = o.pollMs ?? 1000;
    if (every > 0 && this.#files.length) {
      this.#timer = setInterval(() => void this.refresh(), every);
      this.#timer.unref?.();
    }
  }

  /** The current reading (frozen). */
  current(): Fleet {
    return this.#fleet;
  }

  /** Grows by one with every reading that changed something. */
  get version(): number {
    return this.#version;
  }

  /** Why the last reading of the files failed (the view is the last good one), if it did. */
  get problem(): string | undefined {
    return this.#problem;
  }

  member(name: string): FleetMember | undefined {
    return fleetMember(this.#fleet, name);
  }

  /** Calls `fn` with each change set from now on; returns the unsubscribe. */
  subscribe(fn: Listener): () => void {
    this.#listeners.add(fn);
    return () => void this.#listeners.delete(fn);
  }

  /**
   * Reads the files again when their stamps moved (or always, with `force`), and applies what
   * changed. One reading at a time. Returns the changes (empty when none).
   */
  refresh(force = false): Promise<readonly FleetChange[]> {
    return this.#serial(async () => {
      const stamp = stampOf(this.#files);
      if (!force && stamp === this.#stamp) return [];
      this.#stamp = stamp;
      if (!this.#o.file) return [];
      try {
        const next = await loadFleet(this.#o.file);
        const ringBefore = this.#o.ring?.current();
        await this.#o.ring?.reload();
        this.#problem = undefined;
        return this.#apply(next, ringBefore);
      } catch (e) {
        // A file edited into something invalid: the last good view stays, and says why.
        this.#problem = e instanceof Error ? e.message : String(e);
        this.#o.log?.(
          'warn',
          'fleet: the fleet file changed but cannot be read; the last good view stays',
          {
            error: this.#problem,
          },
        );
        return [];
      }
    });
  }

  /** Takes a reading made here (a join just written): applied at once, in line with `refresh`. */
  replace(next: Fleet): Promise<readonly FleetChange[]> {
    return this.#serial(async () => {
      const ringBefore = this.#o.ring?.current();
      await this.#o.ring?.reload();
      this.#stamp = stampOf(this.#files);
      this.#problem = undefined;
      return this.#apply(next, ringBefore);
    });
  }

  /** Stops watching the files; listeners stay until they unsubscribe. */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #apply(next: Fleet, ringBefore: PeerRing | undefined): FleetChange[] {
    const changes = fleetChanges(this.#fleet, next, {
      before: ringBefore,
      after: this.#o.ring?.current(),
    });
    if (!changes.length) return changes;
    this.#fleet = frozen(next);
    this.#version++;
    for (const fn of [...this.#listeners]) {
      try {
        fn(changes, this.#fleet);
      } catch (e) {
        this.#o.log?.('warn', 'fleet: a listener of fleet changes failed', {
          error: (e as Error)?.name ?? 'unknown',
        });
      }
    }
    return changes;
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn);
    this.#queue = run.catch(() => {});
    return run;
  }
}
