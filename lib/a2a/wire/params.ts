/**
 * @module lib/a2a/wire/params — field readers for incoming JSON-RPC params. A reader throws `Invalid`
 * only inside a parser; `parseWith` turns it into an INVALID_PARAMS value at the boundary, so
 * no bad input escapes as an exception.
 */

import { a2aError, type A2AError } from '../errors.ts';
import type { Message, SendParams } from '../types.ts';

export class Invalid extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Runs a parser; an `Invalid` becomes INVALID_PARAMS naming the field. Other throws are bugs. */
export function parseWith<T>(parse: () => T): T | A2AError {
  try {
    return parse();
  } catch (e) {
    if (e instanceof Invalid) return a2aError('INVALID_PARAMS', e.message, e.field);
    throw e;
  }
}

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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
  if (!isObj(v)) throw new Invalid(field, `${field} must be an object`);
  return v;
}

export function optObj(o: Obj, name: string, path: string): Obj | undefined {
  const v = get(o, name);
  if (v === undefined || v === null) return undefined;
  return obj(v, `${path}.${name}`);
}

export function str(o: Obj, name: string, path: string, maxLength = 1024): string {
  const v = get(o, name);
  const field = `${path}.${name}`;
  if (typeof v !== 'string' || v.length === 0)
    throw new Invalid(field, `${field} is required and must be a non-empty string`);
  if (v.length > maxLength)
    throw new Invalid(field, `${field} is longer than ${maxLength} characters`);
  return v;
}

/** An optional string; the empty string counts as absent (ProtoJSON default value). */
export function optStr(o: Obj, name: string, path: string, maxLength = 1024): string | undefined {
  const v = get(o, name);
  if (v === undefined || v === null || v === '') return undefined;
  const field = `${path}.${name}`;
  if (typeof v !== 'string') throw new Invalid(field, `${field} must be a string`);
  if (v.length > maxLength)
    throw new Invalid(field, `${field} is longer than ${maxLength} characters`);
  return v;
}

export function optBool(o: Obj, name: string, path: string): boolean | undefined {
  const v = get(o, name);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean')
    throw new Invalid(`${path}.${name}`, `${path}.${name} must be a boolean`);
  return v;
}

export function optInt(
  o: Obj,
  name: string,
  path: string,
  min: number,
  max: number,
): number | undefined {
  let v = get(o, name);
  if (v === undefined || v === null) return undefined;
  // ProtoJSON may carry integers as strings.
  if (typeof v === 'string' && /^-?\d+$/.test(v)) v = Number(v);
  const field = `${path}.${name}`;
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new Invalid(field, `${field} must be an integer`);
  if (v < min || v > max) throw new Invalid(field, `${field} must be between ${min} and ${max}`);
  return v;
}

export function optStrArray(
  o: Obj,
  name: string,
  path: string,
  maxItems = 64,
): string[] | undefined {
  const v = get(o, name);
  if (v === undefined || v === null) return undefined;
  const field = `${path}.${name}`;
  if (
    !Array.isArray(v) ||
    v.length > maxItems ||
    !v.every((x) => typeof x === 'string' && x.length <= 1024)
  )
    throw new Invalid(field, `${field} must be an array of at most ${maxItems} strings`);
  return v as string[];
}

export function array(o: Obj, name: string, path: string, maxItems: number): unknown[] {
  const v = get(o, name);
  const field = `${path}.${name}`;
  if (!Array.isArray(v) || v.length === 0)
    throw new Invalid(field, `${field} is required and must be a non-empty array`);
  if (v.length > maxItems) throw new Invalid(field, `${field} has more than ${maxItems} items`);
  return v;
}

export function optMetadata(o: Obj, name: string, path: string): Obj | undefined {
  return optObj(o, name, path);
}

/** Base64 (standard or URL alphabet, padding optional): what ProtoJSON `bytes` may carry. */
export function base64(o: Obj, name: string, path: string): string {
  const v = get(o, name);
  const field = `${path}.${name}`;
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(v))
    throw new Invalid(field, `${field} must be base64`);
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
    throw new Invalid(`${path}.${name}`, `${path}.${name} must not contain control characters`);
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

/** What differs between the versions' send params: the message form, the blocking flag and the push config. */
export interface SendWire {
  message(raw: unknown, path: string): Message;
  /** Reads the configuration's blocking flag as `returnImmediately`. */
  returnImmediately(c: Obj, path: string): boolean;
  /** The configuration member holding the push config, and its reader. */
  pushKey: string;
  push(c: Obj, path: string): NonNullable<SendParams['configuration']['pushConfig']>;
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
    if (push)
      out.configuration.pushConfig = wire.push(push, `params.configuration.${wire.pushKey}`);
    if (metadata) out.metadata = metadata;
    return out;
  });
}
