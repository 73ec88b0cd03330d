/** @module pages/operations — the operations pages: Agent Process (trace), Tasks, Mesh, Projects and History. */
export const OPERATIONS_PAGES = [];
