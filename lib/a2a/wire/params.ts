/**
 * @module lib/a2a/wire/params — field readers for incoming JSON-RPC params. A reader throws `Invalid`
 * only inside a parser; `parseWith` turns it into an INVALID_PARAMS value at the boundary, so
 * no bad input escapes as an exception.
 */

import {
  boolean,
  boundedString,
  count,
  listOf,
  optional,
  plainObject,
  ShapeError,
  type JsonObject,
} from '../../json/guards.ts';
import { a2aError, type A2AError } from '../errors.ts';
import type { Message, SendParams } from '../types.ts';

/** The readers' refusal: the guards' `ShapeError`, under the name the wire parsers throw it by. */
export { ShapeError as Invalid };

/** Runs a parser; an `Invalid` becomes INVALID_PARAMS naming the field. Other throws are bugs. */
export function parseWith<T>(parse: () => T): T | A2AError {
  try {
    return parse();
  } catch (e) {
    if (e instanceof ShapeError) return a2aError('INVALID_PARAMS', e.message, e.path);
    throw e;
  }
}

export type Obj = JsonObject;

/** ProtoJSON lets a reader accept both the camelCase and the snake_case field name. */
const snakeNames = new Map<string, string>();

function get(o: Obj, name: string): unknown {
  const v = o[name];
  if (v !== undefined || Object.hasOwn(o, name)) return v;
  let snake = snakeNames.get(name);
  if (snake === undefined)
    snakeNames.set(name, (snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)));
  return snake !== name ? o[snake] : undefined;
}

export function obj(v: unknown, field: string): Obj {
  return plainObject(v, field);
}

export function optObj(o: Obj, name: string, path: string): Obj | undefined {
  return optional(plainObject)(get(o, name), `${path}.${name}`);
}

export function str(o: Obj, name: string, path: string, maxLength = 1024): string {
  return boundedString(maxLength)(get(o, name), `${path}.${name}`);
}

/** An optional string; the empty string counts as absent (ProtoJSON default value). */
export function optStr(o: Obj, name: string, path: string, maxLength = 1024): string | undefined {
  const v = get(o, name);
  if (v === '') return undefined;
  return optional(boundedString(maxLength, { empty: true }))(v, `${path}.${name}`);
}

export function optBool(o: Obj, name: string, path: string): boolean | undefined {
  return optional(boolean)(get(o, name), `${path}.${name}`);
}

export function optInt(
  o: Obj,
  name: string,
  path: string,
  min: number,
  max: number,
): number | undefined {
  const v = get(o, name);
  // ProtoJSON may carry integers as strings.
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  return optional(count(max, min))(n, `${path}.${name}`);
}

/** Each item is checked at its own path (`params.configuration.acceptedOutputModes[2]`). */
export function optStrArray(
  o: Obj,
  name: string,
  path: string,
  maxItems = 64,
): string[] | undefined {
  const item = boundedString(1024, { empty: true });
  return optional(listOf(item, maxItems))(get(o, name), `${path}.${name}`);
}

export function array(o: Obj, name: string, path: string, maxItems: number): unknown[] {
  return listOf((v) => v, maxItems, { nonEmpty: true })(get(o, name), `${path}.${name}`);
}

export function optMetadata(o: Obj, name: string, path: string): Obj | undefined {
  return optObj(o, name, path);
}

/** Base64 (standard or URL alphabet, padding optional): what ProtoJSON `bytes` may carry. */
export function base64(o: Obj, name: string, path: string): string {
  const v = get(o, name);
  const field = `${path}.${name}`;
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(v))
    throw new ShapeError(field, `${field} must be base64`);
  return v;
}

/** A client-chosen identifier (contextId, messageId): at most 256 characters, no control characters. */
export function identifier(
  o: Obj,
  name: string,
  path: string,
  required: boolean,
): string | undefined {
  const v = required ? str(o, name, path, 256) : optStr(o, name, path, 256);
  if (v !== undefined && /[\x00-\x1f\x7f]/.test(v))
    throw new ShapeError(`${path}.${name}`, `${path}.${name} must not contain control characters`);
  return v;
}

/** Reads `key` from an object accepting ProtoJSON's snake_case form too. */
export function field(o: Obj, name: string): unknown {
  return get(o, name);
}

/** Reads the optional members a Message has in both wire forms into `message`. */
export function messageExtras(m: Obj, path: string, message: Message): Message {
  const contextId = identifier(m, 'contextId', path, false);
  const taskId = optStr(m, 'taskId', path, 256);
  const metadata = optMetadata(m, 'metadata', path);
  const extensions = optStrArray(m, 'extensions', path);
  const referenceTaskIds = optStrArray(m, 'referenceTaskIds', path);
  if (contextId) message.contextId = contextId;
  if (taskId) message.taskId = taskId;
  if (metadata) message.metadata = metadata;
  if (extensions?.length) message.extensions = extensions;
  if (referenceTaskIds?.length) message.referenceTaskIds = referenceTaskIds;
  return message;
}

/** `{id, historyLength?}` of get, cancel and (re)subscribe, the same in both versions. */
export function parseTaskQuery(params: unknown): { id: string; historyLength?: number } | A2AError {
  return parseWith(() => {
    const p = obj(params, 'params');
    const id = str(p, 'id', 'params', 256);
    const historyLength = optInt(p, 'historyLength', 'params', 0, 1_000_000);
    return historyLength === undefined ? { id } : { id, historyLength };
  });
}

/**
 * GetTask's query: `parseTaskQuery`'s, and A2A 1.1's long-poll `currentGeneration` (an int64: a
 * string in ProtoJSON, a number accepted).
 */
export function parseGetTask(
  params: unknown,
): { id: string; historyLength?: number; currentGeneration?: number } | A2AError {
  const q = parseTaskQuery(params);
  if ('code' in q) return q;
  return parseWith(() => {
    const g = optInt(
      obj(params, 'params'),
      'currentGeneration',
      'params',
      0,
      Number.MAX_SAFE_INTEGER,
    );
    return g === undefined ? q : { ...q, currentGeneration: g };
  });
}

/** What differs between the versions' send params: the message form, the blocking flag and the push config. */
export interface SendWire {
  message(raw: unknown, path: string): Message;
  /** Reads the configuration's blocking flag as `returnImmediately`. */
  returnImmediately(c: Obj, path: string): boolean;
  /** The configuration member holding the push config, and its reader. */
  pushKey: string;
  push(c: Obj, path: string): NonNullable<SendParams['configuration']['pushConfig']>;
  /** Reads `ifGenerationMatch` (A2A 1.1), in a form that has it. */
  ifGenerationMatch?(c: Obj, path: string): number | undefined;
}

/** Send params (`message`, `configuration`, `metadata`) in either version's wire form. */
export function parseSendParams(params: unknown, wire: SendWire): SendParams | A2AError {
  return parseWith(() => {
    const p = obj(params, 'params');
    const message = wire.message(field(p, 'message'), 'params.message');
    const c = optObj(p, 'configuration', 'params') ?? {};
    const push = optObj(c, wire.pushKey, 'params.configuration');
    const historyLength = optInt(c, 'historyLength', 'params.configuration', 0, 1_000_000);
    const accepted = optStrArray(c, 'acceptedOutputModes', 'params.configuration');
    const metadata = optMetadata(p, 'metadata', 'params');
    const out: SendParams = {
      message,
      configuration: { returnImmediately: wire.returnImmediately(c, 'params.configuration') },
    };
    if (historyLength !== undefined) out.configuration.historyLength = historyLength;
    if (accepted?.length) out.configuration.acceptedOutputModes = accepted;
    const match = wire.ifGenerationMatch?.(c, 'params.configuration');
    if (match !== undefined) out.configuration.ifGenerationMatch = match;
    if (push)
      out.configuration.pushConfig = wire.push(push, `params.configuration.${wire.pushKey}`);
    if (metadata) out.metadata = metadata;
    return out;
  });
}
