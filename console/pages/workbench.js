/** @module pages/workbench — the workbench pages: Ask Agent, Customer Ops, Entity Alignment, A2A Negotiation. */
export const WORKBENCH_PAGES = [];
