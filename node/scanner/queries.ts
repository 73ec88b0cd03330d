/**
 * @module node/scanner/queries — what the scanner answers, computed from one snapshot of
 * `fixtures/scanner/sectors.json`: sector movement, signal flags, quotes, breadth and status.
 */

import { readFileSync, statSync } from 'node:fs';

interface Stock {
  code: string;
  name: string;
  changePct: number;
  signals: string[];
}
interface Sector {
  id: string;
  name: string;
  stocks: Stock[];
}
export interface Snapshot {
  asOf: string;
  market: string;
  sectors: Sector[];
}
/** A stock with the id of its sector. */
type SectorStock = Stock & { sector: string };
interface Movement {
  sector: string;
  name: string;
  avgChangePct: number;
  advancers: number;
  decliners: number;
  signaled: number;
}
type Quote = { asOf: string; found: true; stock: SectorStock } | { asOf: string; found: false };

/** Loads the snapshot, reloading when the file's modification time changes (checked at most once a second). */
export function snapshotSource(file: string): () => Snapshot {
  let cached: { mtimeMs: number; checkedAt: number; snap: Snapshot } | undefined;
  return () => {
    const now = Date.now();
    if (cached && now - cached.checkedAt < 1000) return cached.snap;
    const { mtimeMs } = statSync(file);
    if (!cached || cached.mtimeMs !== mtimeMs)
      cached = { mtimeMs, checkedAt: now, snap: JSON.parse(readFileSync(file, 'utf8')) };
    cached.checkedAt = now;
    return cached.snap;
  };
}

const round = (n: number) => Math.round(n * 100) / 100;
const inSector = (snap: Snapshot, sector?: string) =>
  snap.sectors.filter((s) => !sector || s.id === sector);
const withSector = (s: Sector, st: Stock): SectorStock => ({ ...st, sector: s.id });

function sectorMovement(s: Sector): Movement {
  const avg = s.stocks.reduce((sum, st) => sum + st.changePct, 0) / s.stocks.length;
  return {
    sector: s.id,
    name: s.name,
    avgChangePct: round(avg),
    advancers: s.stocks.filter((st) => st.changePct > 0).length,
    decliners: s.stocks.filter((st) => st.changePct < 0).length,
    signaled: s.stocks.filter((st) => st.signals.length > 0).length,
  };
}

type Movements = { asOf: string; sectors: Movement[] };
/** Each snapshot's movements by sector asked (at most one per sector id and the whole market). */
const movements = new WeakMap<Snapshot, Map<string, Movements>>();

/**
 * Sectors (all, or one) ranked by average change, strongest first. Computed once per snapshot
 * and sector; the answer is shared by every call on that snapshot, so callers only read it.
 */
export function movement(snap: Snapshot, sector?: string): Movements {
  let bySector = movements.get(snap);
  if (!bySector) movements.set(snap, (bySector = new Map()));
  const key = sector ?? '';
  let answer = bySector.get(key);
  if (!answer) {
    answer = {
      asOf: snap.asOf,
      sectors: inSector(snap, sector)
        .map(sectorMovement)
        .sort((a, b) => b.avgChangePct - a.avgChangePct),
    };
    if (bySector.size <= snap.sectors.length) bySector.set(key, answer);
  }
  return answer;
}

/** Stocks carrying at least one signal flag. */
export function signals(snap: Snapshot, sector?: string): { asOf: string; stocks: SectorStock[] } {
  return {
    asOf: snap.asOf,
    stocks: inSector(snap, sector).flatMap((s) =>
      s.stocks.filter((st) => st.signals.length).map((st) => withSector(s, st)),
    ),
  };
}

/** Every stock (of one sector, or all). */
export function stocks(snap: Snapshot, sector?: string): { asOf: string; stocks: SectorStock[] } {
  return {
    asOf: snap.asOf,
    stocks: inSector(snap, sector).flatMap((s) => s.stocks.map((st) => withSector(s, st))),
  };
}

/** One stock by its code. */
export function quote(snap: Snapshot, code: string): Quote {
  for (const s of snap.sectors) {
    const st = s.stocks.find((x) => x.code === code);
    if (st) return { asOf: snap.asOf, found: true, stock: withSector(s, st) };
  }
  return { asOf: snap.asOf, found: false };
}

/** Which snapshot is held. */
export function status(snap: Snapshot) {
  return {
    asOf: snap.asOf,
    market: snap.market,
    sectors: snap.sectors.length,
    stocks: snap.sectors.reduce((n, s) => n + s.stocks.length, 0),
  };
}

/** Advancers, decliners and average change across every stock. */
export function breadth(snap: Snapshot) {
  const all = snap.sectors.flatMap((s) => s.stocks);
  return {
    asOf: snap.asOf,
    stocks: all.length,
    advancers: all.filter((st) => st.changePct > 0).length,
    decliners: all.filter((st) => st.changePct < 0).length,
    unchanged: all.filter((st) => st.changePct === 0).length,
    avgChangePct: round(all.reduce((n, st) => n + st.changePct, 0) / (all.length || 1)),
    signaled: all.filter((st) => st.signals.length > 0).length,
  };
}
