/**
 * @module lib/config/model-settings — the model of one process (a node or the hub): each field
 * from `MODEL_<NAME>_<FIELD>`, then `MODEL_<FIELD>`, then the file's `models.<name>`, then
 * `models.default`; the API key may sit in a variable the file names, so the file holds no secret.
 */

import { isPlainObject } from '../json/guards.ts';
import { convert, type AgentMode } from './convert.ts';
import type { Doc } from './config-file.ts';
import type { Kind } from './settings-table.ts';

/** One node's (or the hub's) model: an OpenAI-compatible endpoint and how its agent uses it. */
export interface ModelSettings {
  baseUrl?: string;
  model: string;
  /** Never logged or shown; from `apiKey`, the variable `apiKeyEnv` names, or MODEL_API_KEY. */
  apiKey?: string;
  /** Absent: the node's own default (see each node file). */
  agent?: AgentMode;
  /** How often the model is pinged to tell whether it answers (ms). */
  pingMs: number;
}

const envName = (node: string) => node.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/** @throws Error naming the variable or file key whose value is malformed */
export function modelSettingsFor(
  name: string,
  env: Record<string, string | undefined>,
  models: Doc,
  file: string | undefined,
): ModelSettings {
  const own = isPlainObject(models[name]) ? models[name] : {};
  const shared = isPlainObject(models.default) ? models.default : {};
  const pick = (field: string, variable: string, kind: Kind): unknown => {
    for (const v of [`MODEL_${envName(name)}_${variable}`, `MODEL_${variable}`]) {
      const raw = env[v];
      if (raw !== undefined && raw !== '') return convert(kind, raw, true, v);
    }
    for (const [d, label] of [
      [own, `models.${name}`],
      [shared, 'models.default'],
    ] as const) {
      if (d[field] !== undefined)
        return convert(kind, d[field], false, `${file}: ${label}.${field}`);
    }
    return undefined;
  };
  // The key may sit in another variable the file names, so the file itself holds no secret.
  const keyVar = pick('apiKeyEnv', 'API_KEY_ENV', 'string') as string | undefined;
  const apiKey =
    (pick('apiKey', 'API_KEY', 'string') as string | undefined) ??
    (keyVar ? env[keyVar] || undefined : undefined);
  const baseUrl = pick('baseUrl', 'BASE_URL', 'string') as string | undefined;
  const agent = pick('agent', 'AGENT', 'agent') as AgentMode | undefined;
  return {
    ...(baseUrl ? { baseUrl } : {}),
    model: (pick('model', 'NAME', 'string') as string | undefined) ?? 'gpt-4o-mini',
    ...(apiKey ? { apiKey } : {}),
    ...(agent ? { agent } : {}),
    pingMs: (pick('pingMs', 'PING_MS', 'integer') as number | undefined) ?? 30_000,
  };
}
