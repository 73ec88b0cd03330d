/**
 * @module lib/a2a/wire/v1-types — the A2A 1.0 objects as this kit writes them on the wire (ProtoJSON
 * of a2a.proto: `TASK_STATE_*` and `ROLE_*` enum names, one member per part kind): what
 * lib/a2a/wire/v1.ts serialises to, and what the console (console/types.d.ts) reads.
 */

import type { Metadata, TaskState } from '../types.ts';

/** A task state's ProtoJSON name. */
export type TaskStateV1 =
  `TASK_STATE_${Uppercase<TaskState extends infer S extends string ? (S extends `${infer A}-${infer B}` ? `${A}_${B}` : S) : never>}`;

export interface PartV1 {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  mediaType?: string;
  filename?: string;
  metadata?: Metadata;
}

export interface MessageV1 {
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: PartV1[];
  metadata?: Metadata;
  extensions?: string[];
  referenceTaskIds?: string[];
}

export interface TaskStatusV1 {
  state: TaskStateV1;
  message?: MessageV1;
  timestamp: string;
}

export interface ArtifactV1 {
  artifactId: string;
  name?: string;
  description?: string;
  parts: PartV1[];
  metadata?: Metadata;
  extensions?: string[];
}

export interface TaskV1 {
  id: string;
  contextId: string;
  status: TaskStatusV1;
  artifacts?: ArtifactV1[];
  history?: MessageV1[];
  metadata?: Metadata;
  /** A2A 1.1: an int64, so a decimal string in ProtoJSON ("3"). */
  generation?: string;
}

/** A `ListTasksResponse`. */
export interface ListTasksPageV1 {
  tasks: TaskV1[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}
