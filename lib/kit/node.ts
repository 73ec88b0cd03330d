/**
 * @module lib/kit/node — the package's node library (`lume-a2a/node`): declare a node and its
 * capabilities, then serve it on its own port or mount it inside an existing server.
 */

export { capability, type ArgsOf } from '../catalog/capability.ts';
export { fail, ok, type Failure, type Result } from '../errors/result.ts';
export {
  Catalog,
  type ArgSpec,
  type Capability,
  type CapabilityDescriptor,
  type Skill,
} from '../catalog/catalog.ts';
export {
  defineNode,
  isNodeFactory,
  type ModelEndpoint,
  type NodeFactory,
  type NodeSetup,
  type NodeSpec,
} from '../node/define-node.ts';
export { createNode } from '../node/create-node.ts';
export type {
  NodeApp,
  NodeDefinition,
  NodeOptions,
  RunningNode,
} from '../node/node-types.ts';
export {
  mountNode,
  prepareNode,
  serveNode,
  type NodeSource,
  type PreparedNode,
  type ServeNodeOptions,
} from '../node/serve-node.ts';
export { importNode, loadNode } from '../node/load-node.ts';
export type { Agent } from '../a2a/agent.ts';
export { activeExtensions, extensionActive } from '../a2a/extensions.ts';
export type { AgentExtension } from '../a2a/card/types.ts';
export { TokenBook, addToken, listTokens, revokeToken } from '../auth/tokens.ts';
export type { Principal } from '../auth/principal.ts';
export type { AnonymousAccess } from '../auth/access.ts';
export type { CallContext } from '../catalog/catalog.ts';
export {
  consoleLog,
  memoryLog,
  silentLog,
  type Log,
  type LogFields,
  type LogLevel,
} from '../log.ts';
