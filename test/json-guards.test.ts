/**
 * The JSON guards every parser checks shapes with (lib/json/guards.ts): each guard's verdict, and
 * the path of the offending field in its error, down a list into an object.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import {
  boolean,
  boundedString,
  checkShape,
  count,
  isPlainObject,
  listOf,
  member,
  oneOf,
  optional,
  pathOf,
  plainObject,
  ShapeError,
  type Guard,
} from '../lib/json/guards.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

/** What a guard said about `v` at `path`: its value, or the path and message of its refusal. */
const verdict = <T>(guard: Guard<T>, v: unknown, path = 'params.x') =>
  checkShape(() => guard(v, path));

describe('plain object', () => {
  test('an object passes; null, an array, a string and a number do not', () => {
    expect(isPlainObject({ a: 1 })).toBe(true);
    for (const v of [null, undefined, [], 'x', 1]) expect(isPlainObject(v)).toBe(false);
    expect(verdict(plainObject, [])).toEqual({
      ok: false,
      path: 'params.x',
      message: 'params.x must be an object',
    });
  });
});

describe('bounded string', () => {
  test('required by default, within its bound', () => {
    expect(verdict(boundedString(3), 'abc')).toEqual({ ok: true, value: 'abc' });
    expect(verdict(boundedString(3), '')).toMatchObject({
      message: 'params.x is required and must be a non-empty string',
    });
    expect(verdict(boundedString(3), 7)).toMatchObject({
      message: 'params.x is required and must be a non-empty string',
    });
    expect(verdict(boundedString(3), 'abcd')).toMatchObject({
      message: 'params.x is longer than 3 characters',
    });
  });
  test('with empty allowed, "" passes and a number is "must be a string"', () => {
    expect(verdict(boundedString(3, { empty: true }), '')).toEqual({ ok: true, value: '' });
    expect(verdict(boundedString(3, { empty: true }), 1)).toMatchObject({
      message: 'params.x must be a string',
    });
  });
});

describe('count', () => {
  test('an integer within its bounds; a fraction, a string or a negative is refused', () => {
    expect(verdict(count(10), 0)).toEqual({ ok: true, value: 0 });
    expect(verdict(count(10), 1.5)).toMatchObject({ message: 'params.x must be an integer' });
    expect(verdict(count(10), '3')).toMatchObject({ message: 'params.x must be an integer' });
    expect(verdict(count(10), -1)).toMatchObject({ message: 'params.x must be between 0 and 10' });
    expect(verdict(count(10, 1), 11)).toMatchObject({
      message: 'params.x must be between 1 and 10',
    });
  });
});

describe('boolean, optional, one of', () => {
  test('boolean', () => {
    expect(verdict(boolean, false)).toEqual({ ok: true, value: false });
    expect(verdict(boolean, 'true')).toMatchObject({ message: 'params.x must be a boolean' });
  });
  test('optional: undefined and null are absent, anything else meets the guard', () => {
    expect(verdict(optional(boolean), undefined)).toEqual({ ok: true, value: undefined });
    expect(verdict(optional(boolean), null)).toEqual({ ok: true, value: undefined });
    expect(verdict(optional(boolean), 1)).toMatchObject({ message: 'params.x must be a boolean' });
  });
  test('one of lists the values it takes', () => {
    expect(verdict(oneOf(['a', 'b']), 'b')).toEqual({ ok: true, value: 'b' });
    expect(verdict(oneOf(['a', 'b']), 'c')).toMatchObject({
      message: 'params.x must be one of a, b',
    });
  });
});

describe('list of', () => {
  const parts = listOf(
    (v, path) => member(plainObject(v, path), 'text', path, boundedString(5)),
    3,
    { nonEmpty: true },
  );
  test('each item is checked at its own path, down into its members', () => {
    expect(verdict(parts, [{ text: 'a' }, { text: 'b' }], 'params.message.parts')).toEqual({
      ok: true,
      value: ['a', 'b'],
    });
    expect(
      verdict(parts, [{ text: 'a' }, { text: 'b' }, { text: 9 }], 'params.message.parts'),
    ).toEqual({
      ok: false,
      path: 'params.message.parts[2].text',
      message: 'params.message.parts[2].text is required and must be a non-empty string',
    });
    expect(verdict(parts, [{ text: 'a' }, 'x'], 'params.message.parts')).toMatchObject({
      path: 'params.message.parts[1]',
    });
  });
  test('its size: required non-empty, at most max', () => {
    expect(verdict(parts, [])).toMatchObject({
      message: 'params.x is required and must be a non-empty array',
    });
    expect(verdict(parts, [{}, {}, {}, {}])).toMatchObject({
      message: 'params.x has more than 3 items',
    });
    expect(verdict(listOf(boolean, 2), 'x')).toMatchObject({
      message: 'params.x must be an array',
    });
  });
});

test('paths: a member of the root has no leading dot; a list index is bracketed', () => {
  expect(pathOf('', 'name')).toBe('name');
  expect(pathOf('a.b', 'c')).toBe('a.b.c');
  expect(pathOf('a', 2)).toBe('a[2]');
});

test('checkShape turns only a ShapeError into a value; a bug still throws', () => {
  expect(checkShape(() => plainObject({}, 'p'))).toEqual({ ok: true, value: {} });
  expect(() =>
    checkShape(() => {
      throw new TypeError('bug');
    }),
  ).toThrow(TypeError);
  expect(new ShapeError('a.b', 'a.b must be an object').path).toBe('a.b');
});
