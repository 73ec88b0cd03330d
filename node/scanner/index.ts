/**
 * @module node/scanner/index — the node that watches sector movements: sectors, their stocks, change % and
 * signal flags, read from `fixtures/scanner/sectors.json` (re-read when the file changes).
 */

import type { ArgSpec } from '../../lib/catalog/catalog.ts';
import { capability } from '../../lib/catalog/capability.ts';
import { defineNode, type NodeSetup } from '../../lib/node/define-node.ts';
import { proposeCapability } from './negotiation-advisor.ts';
import * as q from './queries.ts';

/** A six-digit A-share stock code, as a text may carry it. */
const STOCK_CODE = '\\d{6}';

const plural = (n: number, word: string) => `${n} ${word}${n > 1 ? 's' : ''}`;

// long: the node's catalog, one capability per entry: a table, read top to bottom
export default defineNode((opts: Pick<NodeSetup, 'fixturesDir' | 'model'>) => {
  const load = q.snapshotSource(`${opts.fixturesDir}/scanner/sectors.json`);
  const sector = {
    type: 'string',
    description: 'Sector id',
    enum: load().sectors.map((s) => s.id),
    // A text may name a sector as the snapshot does ("Robotics & Automation").
    synonyms: Object.fromEntries(load().sectors.map((s) => [s.id, [s.name]])),
  } satisfies ArgSpec;

  return {
    name: 'scanner',
    dataPaths: [`${opts.fixturesDir}/scanner/sectors.json`],
    // Agent-backed while its model answers a ping; the keyword agent otherwise.
    modelMode: 'dynamic',
    description:
      'Watches sector movements: sectors, their stocks, change % and signal flags. Read-only; answers a text question by picking a tool by keyword, or a data part {"skill", "args"} by calling that capability.',
    capabilities: [
      capability({
        id: 'sector.movement',
        name: 'Sector movement',
        description:
          'Sectors ranked by average change today, with advancers, decliners and how many stocks carry a signal.',
        tags: ['market', 'sectors'],
        examples: ['Which sectors moved most today?', 'How is the semiconductors sector doing?'],
        keywords: ['sector', 'movement', 'moved', 'move', 'industry', 'industries', 'today'],
        readOnly: true,
        args: { sector },
        run: (args) => q.movement(load(), args.sector),
        summarize: ({ asOf, sectors }) =>
          sectors[0]
            ? `${asOf}: ${sectors[0].name} leads at ${sectors[0].avgChangePct}% (${plural(sectors.length, 'sector')})`
            : `${asOf}: no sectors`,
      }),
      capability({
        id: 'sector.signals',
        name: 'Signal flags',
        description:
          'Stocks carrying signal flags today (volume breakout, new high, limit up/down risk …), optionally for one sector.',
        tags: ['market', 'signals'],
        examples: ['Which stocks have signals?'],
        keywords: ['signal', 'signals', 'flag', 'flags', 'breakout', 'limit'],
        readOnly: true,
        args: { sector },
        run: (args) => q.signals(load(), args.sector),
        summarize: (r) => `${r.stocks.length} stocks carry signal flags`,
      }),
      capability({
        id: 'stock.quote',
        name: 'Stock quote',
        description: 'One stock by its code: sector, change % and signal flags.',
        tags: ['market', 'stocks'],
        examples: ['Quote stock 688981', '{"skill":"stock.quote","args":{"code":"688981"}}'],
        keywords: ['stock', 'quote', 'code', 'price'],
        readOnly: true,
        args: {
          code: {
            type: 'string',
            description: 'Six-digit stock code',
            required: true,
            pattern: STOCK_CODE,
          },
        },
        run: (args) => q.quote(load(), args.code),
        summarize: (r) =>
          r.found
            ? `${r.stock.name} (${r.stock.code}) ${r.stock.changePct}%`
            : "No such stock in today's snapshot",
      }),
      capability({
        id: 'sector.stocks',
        name: 'Sector stocks',
        description:
          "Every stock the scanner watches, or one sector's: code, name, sector, change % and signal flags.",
        tags: ['market', 'stocks'],
        examples: [
          'List all stocks in banking',
          '{"skill":"sector.stocks","args":{"sector":"banking"}}',
        ],
        keywords: ['constituents', 'all stocks', 'every stock', 'stocks in', 'stocks of'],
        readOnly: true,
        // The optional argument keeps it off the no-argument snapshot surface (a bulk read for entity alignment).
        args: { sector },
        run: (args) => q.stocks(load(), args.sector),
        summarize: (r) => `${r.stocks.length} stocks`,
      }),
      capability({
        id: 'scanner.status',
        name: 'Scanner status',
        description:
          'Which snapshot the scanner holds: date, market, number of sectors and stocks.',
        tags: ['status'],
        keywords: ['status', 'snapshot', 'health'],
        readOnly: true,
        args: {},
        run: () => q.status(load()),
        summarize: (s) => `Snapshot ${s.asOf}: ${s.sectors} sectors, ${s.stocks} stocks`,
      }),
      capability({
        id: 'market.breadth',
        name: 'Market breadth',
        description:
          'Across every stock the scanner watches: advancers, decliners, unchanged, average change and how many carry a signal.',
        tags: ['market', 'breadth'],
        keywords: ['breadth', 'advancers', 'decliners', 'market-wide', 'whole market'],
        readOnly: true,
        args: {},
        run: () => q.breadth(load()),
        summarize: (b) =>
          `${b.asOf}: ${b.advancers} up, ${b.decliners} down, average ${b.avgChangePct}%`,
      }),
      proposeCapability(load, opts.model),
    ],
  };
});
