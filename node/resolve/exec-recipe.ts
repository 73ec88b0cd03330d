/**
 * @module node/resolve/exec-recipe — which recipe a job runs: the one named (only ever compared
 * with the allow-list), the model recipe when a model name is given, or the one the prompt picks;
 * a prompt, model name or recipe that does not fit is refused with its code.
 */

import { ok, type Result } from '../../lib/errors/result.ts';
import { type ExecFailure, execError } from './exec-errors.ts';
import { RECIPE_NAME, pickRecipe, type Recipe } from './recipes.ts';

/** Model names as OpenAI-compatible servers spell them (`gpt-4o-mini`, `qwen2.5:7b`, `org/model`). */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

/** The recipe a job of `prompt` runs, `name` and `model` as the caller gave them. */
export function chooseRecipe(
  recipes: readonly Recipe[],
  prompt: string,
  name: string | undefined,
  model: string | undefined,
): Result<Recipe, ExecFailure> {
  const names = () => recipes.map((r) => r.name).join(', ');
  if (!prompt.trim()) return execError('BAD_PROMPT', undefined, 'prompt');
  if (model !== undefined && !MODEL_NAME.test(model))
    return execError(
      'BAD_MODEL',
      `not a model name: ${JSON.stringify(model.slice(0, 64))}`,
      'model',
    );
  // A model name asks for the model recipe: it picks it when no recipe is named.
  if (model !== undefined && name === undefined) {
    if (!recipes.some((r) => r.kind === 'model'))
      return execError(
        'UNKNOWN_RECIPE',
        `this executor has no model recipe (no model endpoint is configured); recipes: ${names()}`,
        'model',
      );
    name = 'model';
  }
  let recipe: Recipe | undefined;
  if (name !== undefined) {
    // The name is only ever compared with the allow-list; it never reaches a path or argv.
    recipe = RECIPE_NAME.test(name) ? recipes.find((r) => r.name === name) : undefined;
    if (!recipe)
      return execError(
        'UNKNOWN_RECIPE',
        `unknown recipe ${JSON.stringify(name.slice(0, 64))}; recipes: ${names()}`,
        'recipe',
      );
  } else {
    recipe = pickRecipe(prompt, recipes);
    if (!recipe)
      return execError(
        'NO_RECIPE',
        `no recipe matches the prompt; name one of: ${names()}`,
        'prompt',
      );
  }
  if (model !== undefined && recipe.kind !== 'model')
    return execError(
      'MODEL_NOT_APPLICABLE',
      `recipe ${recipe.name} runs a process; a model name applies only to the model recipe`,
      'model',
    );
  return ok(recipe);
}
