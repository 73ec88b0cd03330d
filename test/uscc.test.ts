/**
 * USCC (GB 32100-2015) check characters against codes worked by hand from the standard's
 * algorithm and against widely published codes of well-known companies.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { checkUscc, isValidUscc, usccCheckChar, USCC_WEIGHTS } from '../lib/domain/uscc.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

test('the weights are 3^(i-1) mod 31', () => {
  expect(USCC_WEIGHTS).toEqual(Array.from({ length: 17 }, (_, i) => 3 ** i % 31));
});

test('a digit check character, worked by hand', () => {
  // 91440300192203821 ·  values 9 1 4 4 0 3 0 0 1 9 2 2 0 3 8 2 1
  // weights               1 3 9 27 19 26 16 17 20 29 25 13 8 24 10 30 28
  // products              9 3 36 108 0 78 0 0 20 261 50 26 0 72 80 60 28 = 831
  // 831 mod 31 = 25, 31 - 25 = 6  ->  '6'
  expect(usccCheckChar('91440300192203821')).toBe('6');
});

test('a letter check character, worked by hand', () => {
  // 91440300708461136 ·   values 9 1 4 4 0 3 0 0 7 0 8 4 6 1 1 3 6
  // products              9 3 36 108 0 78 0 0 140 0 200 52 48 24 10 90 168 = 966
  // 966 mod 31 = 5, 31 - 5 = 26  ->  alphabet[26] = 'T' (I, O, S, V, Z are skipped)
  expect(usccCheckChar('91440300708461136')).toBe('T');
});

test('a remainder of 0 gives the check character 0, not the 31st', () => {
  // '0…0' sums to 0 -> (31 - 0) mod 31 = 0; '10…0' sums to 1·W1 = 1 -> 30.
  expect(usccCheckChar('00000000000000000')).toBe('0');
  expect(usccCheckChar('10000000000000000')).toBe('Y'); // 31 - 1 = 30 -> 'Y'
});

test('published codes of well-known companies are valid', () => {
  for (const code of [
    '914403001922038216', // Huawei Technologies Co., Ltd.
    '91440300708461136T', // Shenzhen Tencent Computer Systems Co., Ltd.
    '91520000214434146R', // Kweichow Moutai Co., Ltd.
    '91440300192317458F', // BYD Co., Ltd.
    '91110108551385082Q', // Beijing Xiaomi Technology Co., Ltd.
  ])
    expect([code, isValidUscc(code)]).toEqual([code, true]);
});

test('bad input is a coded value, never a throw', () => {
  expect(checkUscc('914403001922038217')).toMatchObject({ ok: false, code: 'USCC_CHECK_DIGIT' });
  expect(checkUscc('91440300192203821')).toMatchObject({ ok: false, code: 'USCC_LENGTH' });
  // biome-ignore lint/correctness/noPrecisionLoss: a number where a string belongs is the case under test
  expect(checkUscc(914403001922038216)).toMatchObject({ ok: false, code: 'USCC_LENGTH' });
  expect(checkUscc('91440300192203821I')).toMatchObject({ ok: false, code: 'USCC_CHARSET' });
  expect(checkUscc('9144030019220382o6')).toMatchObject({ ok: false, code: 'USCC_CHARSET' });
  expect(usccCheckChar('9144030019220382')).toBeUndefined();
});
