/** @module console/forms — the one way a page's input or select hands its value to the page's state. */

/**
 * An `onInput` / `onChange` handler that passes the field's current value to `set`.
 * @param {(value: string) => void} set
 * @returns {(e: import('./types').FieldEvent) => void}
 */
export const valueTo = (set) => (e) => set(e.currentTarget.value);
