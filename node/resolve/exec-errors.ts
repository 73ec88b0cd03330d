/**
 * @module node/resolve/exec-errors — the executor's error codes, each with the situation it names,
 * and the coded failure it answers with (naming the field of the call when there is one).
 */

import { fail, type Err, type Failure } from '../../lib/errors/result.ts';

/** The executor's error codes, each with the situation it names. */
const EXEC_ERRORS = Object.freeze({
  NO_RECIPE: 'no recipe matches the prompt',
  UNKNOWN_RECIPE: 'the named recipe is not on the allow-list',
  BAD_PROMPT: 'the prompt is empty',
  JOB_NOT_FOUND: 'no job with that id',
  BUSY: 'too many jobs running',
  CALLER_BUSY: 'this caller has as many jobs running as one caller may',
  SPAWN_FAILED: 'the recipe could not be started',
  EXECUTOR_UNAVAILABLE: 'the executor has no data folder',
  MODEL_NOT_APPLICABLE: 'a model name applies only to the model recipe',
  BAD_MODEL: 'not a model name',
  BAD_CONTEXT: 'context must be a JSON list of earlier {prompt, output} turns',
});
type ExecErrorCode = keyof typeof EXEC_ERRORS;
/** An executor failure, with the field of the call it concerns when there is one. */
export type ExecFailure = Failure<ExecErrorCode>;
export const execError = (code: ExecErrorCode, detail?: string, field?: string): Err<ExecFailure> =>
  fail(code, detail ?? EXEC_ERRORS[code], field);
