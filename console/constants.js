/**
 * @module constants — values the pages share, spelled once: the A2A version the console speaks,
 * task states, the executor's recipes, trace outcomes and how often live pages re-read.
 */

/** The A2A version of every request to the hub's HTTP+JSON binding (`A2A-Version` header). */
export const A2A_VERSION = '1.0';

/** @type {import('./types').TaskState} */
export const TASK_COMPLETED = 'TASK_STATE_COMPLETED';

/**
 * States in which a task is still running: the Tasks page re-reads these (a read advances a
 * delegated task) and offers to cancel them.
 * @type {ReadonlySet<import('./types').TaskState>}
 */
export const RUNNING_TASK_STATES = new Set(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']);

/** The executor's recipes (`fixtures/resolve/recipes.json`), offered when delegating a job. */
export const RECIPES = /** @type {const} */ (['fleet-report', 'git-history', 'disk-usage', 'demo']);

/** What a traced call came to. @type {readonly import('./types').TraceOutcome[]} */
export const TRACE_OUTCOMES = ['ok', 'failed', 'empty'];

/** How often the Fleet page re-reads the fleet, in ms. */
export const FLEET_REFRESH_MS = 5000;
/** How often the Tasks and Mesh pages re-read what is live (running tasks, the roster), in ms. */
export const LIVE_REFRESH_MS = 2000;
