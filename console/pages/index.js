/**
 * @module console/pages/index — the console's pages in navigation order. Each loads its module when first
 * opened, so the first load carries the shell and one page.
 */

/** @type {import('../types').Page[]} */
export const PAGES = [
  { id: 'fleet', title: 'Fleet', load: () => import('./fleet.js').then((m) => m.Fleet) },
  { id: 'ask', title: 'Ask Agent', load: () => import('./ask.js').then((m) => m.Ask) },
  {
    id: 'customer-ops',
    title: 'Customer Ops',
    load: () => import('./customer-ops.js').then((m) => m.CustomerOps),
  },
  {
    id: 'entities',
    title: 'Entity Alignment',
    load: () => import('./entities.js').then((m) => m.Entities),
  },
  {
    id: 'negotiation',
    title: 'A2A Negotiation',
    load: () => import('./negotiation.js').then((m) => m.Negotiation),
  },
  { id: 'trace', title: 'Agent Process', load: () => import('./trace.js').then((m) => m.Trace) },
  { id: 'tasks', title: 'Tasks', load: () => import('./tasks.js').then((m) => m.Tasks) },
  { id: 'mesh', title: 'Mesh', load: () => import('./mesh.js').then((m) => m.Mesh) },
  {
    id: 'history',
    title: 'Projects & History',
    load: () => import('./history.js').then((m) => m.ProjectsHistory),
  },
];
