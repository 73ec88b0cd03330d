/**
 * @module lib/node/define-node — the contract of a node file: it default-exports
 * `defineNode((opts) => ({ name, description, capabilities: [capability({...}), …] }))`, and
 * every loader calls that factory with the same `NodeSetup`.
 */

import type { Limits } from '../limits.ts';
import { Catalog, type Capability } from '../catalog/catalog.ts';
import type { NodeDefinition } from './node-types.ts';

/** An OpenAI-compatible chat endpoint (models.<node> in the config file, MODEL_* variables). */
export type { ModelEndpoint } from '../model/chat.ts';
import type { ModelEndpoint } from '../model/chat.ts';

/** What every node factory is given; a node reads only the fields it needs. */
export interface NodeSetup {
  /** The fixtures folder; a node's data is under `<fixturesDir>/<name>/`. */
  fixturesDir: string;
  /** The fleet file the node was started with. */
  fleetFile: string;
  /**
   * DATA_DIR, for state a node keeps besides its tasks (createNode keeps those). Absent when a
   * node is built only to read its declarations (resolve's fleet catalog): it then keeps no state.
   */
  dataDir?: string;
  /** Set when a model endpoint is configured. */
  model?: ModelEndpoint;
  /** The bounds an operator set (lib/limits.ts), for state a node keeps besides its tasks. */
  limits?: Partial<Limits>;
}

/** What a node file says: its definition with the capabilities listed instead of a catalog. */
export interface NodeSpec extends Omit<NodeDefinition, 'catalog'> {
  capabilities: readonly Capability[];
}

/** Marks a factory made by `defineNode`, so a loader can tell a node file from any other module. */
const NODE_FACTORY: unique symbol = Symbol.for('lume-a2a.node-factory');

/** A node file's default export: builds the node's definition; callable without options when it needs none. */
// biome-ignore lint/complexity/noBannedTypes: `{} extends O` asks whether every field of O is optional
export type NodeFactory<O = NodeSetup> = ({} extends O
  ? (opts?: O) => NodeDefinition
  : (opts: O) => NodeDefinition) & { readonly [NODE_FACTORY]: true };

/** The definition a spec stands for; the catalog is built (and checked) here. */
export function toDefinition({ capabilities, ...rest }: NodeSpec): NodeDefinition {
  return { ...rest, catalog: new Catalog(capabilities) };
}

/**
 * Declares a node. `O` is what the node reads: the fields of `NodeSetup` it needs, plus options of
 * its own that tests may pass (optional ones, since loaders pass only the setup).
 */
// biome-ignore lint/complexity/noBannedTypes: a node that reads no options
export function defineNode<O extends Partial<NodeSetup> = {}>(
  build: (opts: O) => NodeSpec,
): NodeFactory<O> {
  // The factory's type makes options required unless every field of O is optional, so an
  // absent `opts` can only stand for an empty one.
  const factory = (opts?: O) => toDefinition(build(opts ?? ({} as O)));
  return Object.assign(factory, { [NODE_FACTORY]: true as const }) as NodeFactory<O>;
}

/** Whether a value is a factory made by `defineNode` (what a loader checks a node file exports). */
export function isNodeFactory(value: unknown): value is NodeFactory {
  return typeof value === 'function' && NODE_FACTORY in value && value[NODE_FACTORY] === true;
}
