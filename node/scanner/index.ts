/**
 * @module scanner — the node that watches sector movements: sectors, their stocks, change % and
 * signal flags, read from `fixtures/scanner/sectors.json` (re-read when the file changes).
 */

import { statSync, readFileSync } from 'node:fs';
import { Catalog } from '../../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../../lib/node/create-node.ts';
import { proposeCapability } from './negotiation-advisor.ts';

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
interface Snapshot {
  asOf: string;
  market: string;
  sectors: Sector[];
}

/** Loads the snapshot, reloading when the file's modification time changes (checked at most once a second). */
function snapshotSource(file: string): () => Snapshot {
  let cached: { mtimeMs: number; checkedAt: number; snap: Snapshot } | undefined;
  return () => {
    const now = Date.now();
    if (cached && now - cached.checkedAt < 1000) return cached.snap;
    const { mtimeMs } = statSync(file);
    if (!cached || cached.mtimeMs !== mtimeMs) cached = { mtimeMs, checkedAt: now, snap: JSON.parse(readFileSync(file, 'utf8')) as Snapshot };
    cached.checkedAt = now;
    return cached.snap;
  };
}

const round = (n: number) => Math.round(n * 100) / 100;

function sectorMovement(s: Sector) {
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

export default function scanner(opts: { fixturesDir: string }): NodeDefinition {
  const load = snapshotSource(`${opts.fixturesDir}/scanner/sectors.json`);
  const sectorIds = load().sectors.map((s) => s.id);
  const sectorArg = { type: 'string', description: 'Sector id', enum: sectorIds } as const;

  const catalog = new Catalog([
    {
      id: 'sector.movement',
      name: 'Sector movement',
      description: 'Sectors ranked by average change today, with advancers, decliners and how many stocks carry a signal.',
      tags: ['market', 'sectors'],
      examples: ['Which sectors moved most today?', 'How is the semiconductors sector doing?'],
      keywords: ['sector', 'movement', 'moved', 'move', 'industry', 'industries', 'today'],
      readOnly: true,
      args: { sector: sectorArg },
      run: (args) => {
        const snap = load();
        const rows = snap.sectors.filter((s) => !args.sector || s.id === args.sector).map(sectorMovement)
          .sort((a, b) => b.avgChangePct - a.avgChangePct);
        return { asOf: snap.asOf, sectors: rows };
      },
      summarize: (r) => {
        const { asOf, sectors } = r as { asOf: string; sectors: ReturnType<typeof sectorMovement>[] };
        const top = sectors[0];
        return top ? `${asOf}: ${top.name} leads at ${top.avgChangePct}% (${sectors.length} sector${sectors.length > 1 ? 's' : ''})` : `${asOf}: no sectors`;
      },
    },
    {
      id: 'sector.signals',
      name: 'Signal flags',
      description: 'Stocks carrying signal flags today (volume breakout, new high, limit up/down risk …), optionally for one sector.',
      tags: ['market', 'signals'],
      examples: ['Which stocks have signals?'],
      keywords: ['signal', 'signals', 'flag', 'flags', 'breakout', 'limit'],
      readOnly: true,
      args: { sector: sectorArg },
      run: (args) => {
        const snap = load();
        const stocks = snap.sectors.filter((s) => !args.sector || s.id === args.sector)
          .flatMap((s) => s.stocks.filter((st) => st.signals.length).map((st) => ({ ...st, sector: s.id })));
        return { asOf: snap.asOf, stocks };
      },
      summarize: (r) => `${(r as { stocks: unknown[] }).stocks.length} stocks carry signal flags`,
    },
    {
      id: 'stock.quote',
      name: 'Stock quote',
      description: 'One stock by its code: sector, change % and signal flags.',
      tags: ['market', 'stocks'],
      examples: ['{"skill":"stock.quote","args":{"code":"688981"}}'],
      keywords: ['stock', 'quote', 'code', 'price'],
      readOnly: true,
      args: { code: { type: 'string', description: 'Six-digit stock code', required: true } },
      run: (args) => {
        const snap = load();
        for (const s of snap.sectors) {
          const st = s.stocks.find((x) => x.code === args.code);
          if (st) return { asOf: snap.asOf, found: true, stock: { ...st, sector: s.id } };
        }
        return { asOf: snap.asOf, found: false };
      },
      summarize: (r) => {
        const q = r as { found: boolean; stock?: Stock };
        return q.found && q.stock ? `${q.stock.name} (${q.stock.code}) ${q.stock.changePct}%` : 'No such stock in today\'s snapshot';
      },
    },
    {
      id: 'sector.stocks',
      name: 'Sector stocks',
      description: 'Every stock the scanner watches, or one sector\'s: code, name, sector, change % and signal flags.',
      tags: ['market', 'stocks'],
      examples: ['{"skill":"sector.stocks","args":{"sector":"banking"}}'],
      keywords: ['constituents', 'all stocks', 'every stock'],
      readOnly: true,
      // The optional argument keeps it off the no-argument snapshot surface (a bulk read for entity alignment).
      args: { sector: sectorArg },
      run: (args) => {
        const snap = load();
        const stocks = snap.sectors.filter((s) => !args.sector || s.id === args.sector).flatMap((s) => s.stocks.map((st) => ({ ...st, sector: s.id })));
        return { asOf: snap.asOf, stocks };
      },
      summarize: (r) => `${(r as { stocks: unknown[] }).stocks.length} stocks`,
    },
    {
      id: 'scanner.status',
      name: 'Scanner status',
      description: 'Which snapshot the scanner holds: date, market, number of sectors and stocks.',
      tags: ['status'],
      keywords: ['status', 'snapshot', 'health'],
      readOnly: true,
      args: {},
      run: () => {
        const snap = load();
        return { asOf: snap.asOf, market: snap.market, sectors: snap.sectors.length, stocks: snap.sectors.reduce((n, s) => n + s.stocks.length, 0) };
      },
      summarize: (r) => {
        const s = r as { asOf: string; sectors: number; stocks: number };
        return `Snapshot ${s.asOf}: ${s.sectors} sectors, ${s.stocks} stocks`;
      },
    },
    {
      id: 'market.breadth',
      name: 'Market breadth',
      description: 'Across every stock the scanner watches: advancers, decliners, unchanged, average change and how many carry a signal.',
      tags: ['market', 'breadth'],
      keywords: ['breadth', 'advancers', 'decliners', 'market-wide', 'whole market'],
      readOnly: true,
      args: {},
      run: () => {
        const snap = load();
        const stocks = snap.sectors.flatMap((s) => s.stocks);
        return {
          asOf: snap.asOf,
          stocks: stocks.length,
          advancers: stocks.filter((st) => st.changePct > 0).length,
          decliners: stocks.filter((st) => st.changePct < 0).length,
          unchanged: stocks.filter((st) => st.changePct === 0).length,
          avgChangePct: round(stocks.reduce((n, st) => n + st.changePct, 0) / (stocks.length || 1)),
          signaled: stocks.filter((st) => st.signals.length > 0).length,
        };
      },
      summarize: (r) => {
        const b = r as { asOf: string; advancers: number; decliners: number; avgChangePct: number };
        return `${b.asOf}: ${b.advancers} up, ${b.decliners} down, average ${b.avgChangePct}%`;
      },
    },
    proposeCapability(load),
  ]);

  return {
    name: 'scanner',
    description: 'Watches sector movements: sectors, their stocks, change % and signal flags. Read-only; answers a text question by picking a tool by keyword, or a data part {"skill", "args"} by calling that capability.',
    catalog,
    agentBacked: false,
  };
}
