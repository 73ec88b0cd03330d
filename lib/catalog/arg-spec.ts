/**
 * @module lib/catalog/arg-spec — how a capability declares one argument: its type, whether it is
 * required, and what lets a text message name it (enum values and synonyms, a pattern, names from
 * the node's data). The catalog checks calls against it; lib/catalog/text-args.ts reads texts by it.
 */

export interface ArgSpec {
  type: 'string' | 'number' | 'integer' | 'boolean';
  description: string;
  required?: boolean;
  /** Allowed values for a string argument; a text message naming one fills it in. */
  enum?: readonly string[];
  /** Longest string accepted (default 1024 characters). */
  maxLength?: number;
  /**
   * What a string value looks like in a text, as a regular expression source (no anchors, no
   * flags; matched case-insensitively as a whole token inside one word of at most 64 characters,
   * so no whitespace; at most 200 characters), e.g. `\\d{6}` for a six-digit stock code. It reads texts only: a data part's value goes to the capability, which checks its own.
   */
  pattern?: string;
  /** Other words a text may use for an enum value: value → words (`{"new-energy": ["EV"]}`). */
  synonyms?: Readonly<Record<string, readonly string[]>>;
  /** Names the node's data gives this argument (companies, logins), which a text may mention. */
  known?: () => readonly string[];
}
