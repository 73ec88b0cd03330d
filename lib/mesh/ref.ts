/** @module lib/mesh/ref — message references `<project>:<sequence>`. */

import { isProjectName } from './names.ts';

export interface MessageRef {
  project: string;
  sequence: number;
}

export const formatRef = (project: string, sequence: number): string => `${project}:${sequence}`;

/** Parses a reference; splits on the last `:`; the sequence is a positive safe integer without a leading zero. */
export function parseRef(ref: unknown): MessageRef | undefined {
  if (typeof ref !== 'string') return undefined;
  const at = ref.lastIndexOf(':');
  if (at <= 0) return undefined;
  const project = ref.slice(0, at);
  const digits = ref.slice(at + 1);
  if (!isProjectName(project) || !/^[1-9][0-9]*$/.test(digits)) return undefined;
  const sequence = Number(digits);
  return Number.isSafeInteger(sequence) ? { project, sequence } : undefined;
}
