/** @module pages/workbench — the workbench pages: Ask Agent, Customer Ops, Entity Alignment, A2A Negotiation. */
import { Ask } from './ask.js';
import { CustomerOps } from './customer-ops.js';
import { Entities } from './entities.js';
import { Negotiation } from './negotiation.js';

/** @type {import('../types').Page[]} */
export const WORKBENCH_PAGES = [
  { id: 'ask', title: 'Ask Agent', component: Ask },
  { id: 'customer-ops', title: 'Customer Ops', component: CustomerOps },
  { id: 'entities', title: 'Entity Alignment', component: Entities },
  { id: 'negotiation', title: 'A2A Negotiation', component: Negotiation },
];
