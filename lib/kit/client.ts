/**
 * @module lib/kit/client — the package's A2A client (`lume-a2a/client`): call any A2A node in the
 * 1.0 or 0.3 wire form, typed with the internal A2A model.
 */

export {
  createA2AClient,
  type A2AClient,
  type A2AClientOptions,
  type ClientResult,
  type ListOptions,
  type MessageInput,
  type SendOptions,
  type StreamItem,
} from '../a2a/client/client.ts';
export type {
  Artifact,
  ListTasksPage,
  Message,
  Metadata,
  Part,
  ProtocolVersion,
  Role,
  Task,
  TaskEvent,
  TaskState,
  TaskStatus,
} from '../a2a/types.ts';
export type { CallFailure, CallFailureKind, Failure, Result } from '../errors/result.ts';
