/**
 * @module lib/node/load-node — the one place a node file is loaded: its default export must be a
 * `defineNode` factory, which is called with the standard `NodeSetup`. node/main.ts, resolve's
 * fleet catalog and the test fleets all load nodes through here.
 */

import { isAbsolute, resolve } from 'node:path';
import { isNodeFactory, type NodeFactory, type NodeSetup } from './define-node.ts';
import type { NodeDefinition } from './node-types.ts';
// Node files in a fleet file are named relative to the project root.
import { PROJECT_ROOT } from '../project-root.ts';

/**
 * Imports a node file (absolute, or relative to `root`) and returns its factory.
 * @throws Error when the file cannot be imported or does not default-export `defineNode(...)`.
 */
export async function importNode(file: string, root = PROJECT_ROOT): Promise<NodeFactory> {
  const mod: { default?: unknown } = await import(isAbsolute(file) ? file : resolve(root, file));
  if (!isNodeFactory(mod.default))
    throw new Error(`${file} is not a node file: its default export must be defineNode(...)`);
  return mod.default;
}

/** Builds the node a file declares, with the standard setup. */
export async function loadNode(
  file: string,
  setup: NodeSetup,
  root = PROJECT_ROOT,
): Promise<NodeDefinition> {
  return (await importNode(file, root))(setup);
}
