/**
 * @module lib/config/config-file — the configuration file itself: which one is read (LUME_CONFIG,
 * or the first of the usual names in the working folder), within a size bound, parsed by Bun's
 * own JSON, YAML and TOML parsers, and refused when it names a setting the table does not know.
 */

import { isPlainObject } from '../json/guards.ts';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { SETTINGS } from './settings-table.ts';

/** The largest config file read (1 MiB). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** Names looked for in the working folder, in this order, when LUME_CONFIG names none. */
const CONFIG_FILES = [
  'lume.config.json',
  'lume.config.yaml',
  'lume.config.yml',
  'lume.config.toml',
];
const MODEL_FIELDS = new Set(['baseUrl', 'model', 'apiKey', 'apiKeyEnv', 'agent', 'pingMs']);

export type Doc = Record<string, unknown>;

/** Parses a config file's text by its extension. @throws Error naming the file and the problem */
function parseConfigText(text: string, file: string): Doc {
  const ext = extname(file).toLowerCase();
  let doc: unknown;
  try {
    doc =
      ext === '.json'
        ? JSON.parse(text)
        : ext === '.toml'
          ? Bun.TOML.parse(text)
          : ext === '.yaml' || ext === '.yml'
            ? Bun.YAML.parse(text)
            : undefined;
  } catch (e) {
    throw new Error(`${file}: cannot parse: ${(e as Error)?.message ?? 'unknown error'}`);
  }
  if (doc === undefined) throw new Error(`${file}: use .json, .yaml, .yml or .toml`);
  if (doc === null || doc === '') return {};
  if (!isPlainObject(doc)) throw new Error(`${file}: the top level must be a mapping of settings`);
  return doc;
}

/**
 * The file named by LUME_CONFIG, or the first of CONFIG_FILES in `cwd`, read and checked; no file
 * is an empty document.
 * @throws Error when the named file is missing, too large, unreadable or names unknown settings
 */
export function readConfigFile(
  env: Record<string, string | undefined>,
  cwd: string,
): { file?: string; doc: Doc } {
  const named = env.LUME_CONFIG;
  const file = named
    ? resolve(cwd, named)
    : CONFIG_FILES.map((f) => resolve(cwd, f)).find((f) => existsSync(f));
  if (named && !existsSync(file!))
    throw new Error(`LUME_CONFIG names ${named}, which does not exist`);
  // A config file is a page of settings: one far larger is a mistake, refused before it is read.
  if (file && statSync(file).size > MAX_CONFIG_BYTES)
    throw new Error(
      `${file}: larger than ${MAX_CONFIG_BYTES} bytes; a config file holds settings only`,
    );
  const doc = file ? parseConfigText(readFileSync(file, 'utf8'), file) : {};
  checkKeys(doc, file ?? 'config');
  return file ? { file, doc } : { doc };
}

/** Refuses keys the table does not know, so a misspelt setting is not silently ignored. */
function checkKeys(doc: Doc, file: string): void {
  const known = new Set(SETTINGS.map((r) => r.key).filter((k) => !k.startsWith('models.')));
  const sections = new Set([...known].filter((k) => k.includes('.')).map((k) => k.split('.')[0]!));
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'models') {
      if (!isPlainObject(v))
        throw new Error(`${file}: models must map node names to model settings`);
      for (const [node, m] of Object.entries(v)) {
        if (!isPlainObject(m)) throw new Error(`${file}: models.${node} must be a mapping`);
        for (const field of Object.keys(m))
          if (!MODEL_FIELDS.has(field))
            throw new Error(
              `${file}: unknown setting models.${node}.${field}; known: ${[...MODEL_FIELDS].join(', ')}`,
            );
      }
    } else if (sections.has(k)) {
      if (!isPlainObject(v)) throw new Error(`${file}: ${k} must be a mapping`);
      for (const field of Object.keys(v))
        if (!known.has(`${k}.${field}`)) throw new Error(`${file}: unknown setting ${k}.${field}`);
    } else if (!known.has(k)) throw new Error(`${file}: unknown setting ${k}`);
  }
}
