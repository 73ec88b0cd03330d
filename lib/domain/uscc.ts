/**
 * @module lib/domain/uscc — the Unified Social Credit Code (统一社会信用代码, GB 32100-2015): 18 characters
 * that identify a company in China, the entity key crm and the hub's entity alignment share.
 *
 * Layout: 1 registration authority, 2 entity type, 3-8 administrative division (GB/T 2260),
 * 9-17 organization code (GB 11714), 18 check character. The alphabet is the 31 characters
 * below (digits and upper-case letters without I, O, S, V, Z); each character's value is its
 * index. Check character: C18 = 31 - (Σ Ci·Wi mod 31) for i = 1..17 with Wi = 3^(i-1) mod 31,
 * a result of 31 written as 0.
 *
 * Pure functions; bad input is a value (`ok: false` with a code), never a throw.
 */

const USCC_ALPHABET = '0123456789ABCDEFGHJKLMNPQRTUWXY';
/** What a USCC looks like (18 characters of the alphabet), as a capability's argument pattern. */
export const USCC_PATTERN = '[0-9A-HJ-NPQRTUWXY]{18}';

/** Wi = 3^(i-1) mod 31, as printed in the standard's table. */
export const USCC_WEIGHTS: readonly number[] = [
  1, 3, 9, 27, 19, 26, 16, 17, 20, 29, 25, 13, 8, 24, 10, 30, 28,
];

export type UsccErrorCode = 'USCC_LENGTH' | 'USCC_CHARSET' | 'USCC_CHECK_DIGIT';
export type UsccCheck = { ok: true } | { ok: false; code: UsccErrorCode; message: string };

/**
 * The check character for the first 17 characters of a code, or undefined when they are not
 * 17 characters of the alphabet.
 */
export function usccCheckChar(first17: string): string | undefined {
  if (typeof first17 !== 'string' || first17.length !== 17) return undefined;
  let sum = 0;
  for (let i = 0; i < 17; i++) {
    const v = USCC_ALPHABET.indexOf(first17[i]!);
    if (v < 0) return undefined;
    sum += v * USCC_WEIGHTS[i]!;
  }
  return USCC_ALPHABET[(31 - (sum % 31)) % 31];
}

/** Checks length, alphabet and check character; the code must already be upper case. */
export function checkUscc(code: unknown): UsccCheck {
  if (typeof code !== 'string' || code.length !== 18)
    return { ok: false, code: 'USCC_LENGTH', message: 'a USCC has 18 characters' };
  const expected = usccCheckChar(code.slice(0, 17));
  if (expected === undefined || !USCC_ALPHABET.includes(code[17]!))
    return { ok: false, code: 'USCC_CHARSET', message: `a USCC uses only ${USCC_ALPHABET}` };
  if (code[17] !== expected)
    return { ok: false, code: 'USCC_CHECK_DIGIT', message: 'the check character does not match' };
  return { ok: true };
}

export const isValidUscc = (code: unknown): boolean => checkUscc(code).ok;
