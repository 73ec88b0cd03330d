/** @module pages — the console's pages after Fleet, in navigation order. */
import { WORKBENCH_PAGES } from './workbench.js';
import { OPERATIONS_PAGES } from './operations.js';

export const PAGES = [...WORKBENCH_PAGES, ...OPERATIONS_PAGES];
