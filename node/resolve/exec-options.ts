/**
 * @module node/resolve/exec-options — what an executor is made with (its data folder, recipes,
 * model endpoint and bounds) and what a job may carry besides its prompt.
 */

import type { ModelEndpoint, PriorTurn } from './model.ts';
import type { Recipe } from './recipes.ts';

export interface ExecutorOptions {
  dataDir: string;
  recipes: readonly Recipe[];
  /** Needed only when `recipes` holds the `model` recipe. */
  model?: ModelEndpoint;
  fetch?: typeof fetch;
  now?: () => number;
  /** Between SIGTERM and SIGKILL of a group being stopped. */
  killGraceMs?: number;
  /** Jobs running at once, all callers together (default 8). */
  maxRunning?: number;
  /** Jobs one caller may have running at once (default 3), so no caller can take every slot. */
  maxRunningPerCaller?: number;
  childPath?: string;
  /** Job records kept (default LIMITS.jobMaxStored) and their age in hours (default LIMITS.jobMaxAgeHours). */
  maxJobRecords?: number;
  maxJobAgeHours?: number;
}

/** What a job may carry besides its prompt: a model for the model recipe, earlier turns of a continued delegation. */
export interface SubmitExtras {
  /** A model name for the model recipe (giving one without naming a recipe picks that recipe). */
  model?: string;
  /** Earlier turns, oldest first; the model recipe sends them before the prompt, process recipes ignore them. */
  prior?: readonly PriorTurn[];
  /** Whose job it is: the key the per-caller limit counts under (default `anonymous`). */
  caller?: string;
}
