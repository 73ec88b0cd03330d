/**
 * @module console/constants — values the pages share, spelled once: the A2A version the console speaks,
 * task states, the executor's recipes and trace outcomes.
 */

/**
 * The mesh project the console watches: the header badge shows it and the Mesh page opens on it
 * (the hub's default, mesh.project).
 */
export const MESH_PROJECT = 'main';

/** The A2A version of every request to the hub's HTTP+JSON binding (`A2A-Version` header). */
export const A2A_VERSION = '1.0';

/** @type {import('./types').TaskState} */
export const TASK_COMPLETED = 'TASK_STATE_COMPLETED';
/** @type {import('./types').TaskState} */
export const TASK_INPUT_REQUIRED = 'TASK_STATE_INPUT_REQUIRED';

/**
 * States in which a task is still running: the Tasks page offers to cancel these.
 * @type {ReadonlySet<import('./types').TaskState>}
 */
export const RUNNING_TASK_STATES = new Set(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']);

/** The executor's recipes (`fixtures/resolve/recipes.json`), offered when delegating a job. */
export const RECIPES = /** @type {const} */ (['fleet-report', 'git-history', 'disk-usage', 'demo']);

/** What a traced call came to. @type {readonly import('./types').TraceOutcome[]} */
export const TRACE_OUTCOMES = ['ok', 'failed', 'empty'];
