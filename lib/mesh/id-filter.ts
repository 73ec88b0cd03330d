/**
 * @module lib/mesh/id-filter — the message ids a SQLite mesh store holds, as a Bloom filter in
 * memory: "not there" is certain, so a new message's id needs no lookup in the database (the
 * SELECT that took a fifth of the hub's time per message), and only an id the filter may hold (a
 * retry, or about one new id in 700) is looked up. Built from the table when the store opens;
 * it grows by adding a layer of twice the size when its newest one is full, so it never needs
 * rebuilding and costs about 2 bytes per stored message.
 */

/** Bits per id in each layer and probes per id: a false positive about once in 700 lookups. */
const BITS_PER_ID = 16;
const PROBES = 5;
const SMALLEST = 1 << 16;

interface Layer {
  bits: Uint32Array;
  /** Bit count minus one (a power of two minus one). */
  mask: number;
  capacity: number;
  count: number;
}

export interface IdFilter {
  add(id: string): void;
  /** False: the id was never added. True: it may have been. */
  mayHave(id: string): boolean;
  /** Memory the filter holds, in bytes. */
  readonly bytes: number;
}

function layer(capacity: number): Layer {
  let size = 32;
  while (size < capacity * BITS_PER_ID) size *= 2;
  return { bits: new Uint32Array(size / 32), mask: size - 1, capacity, count: 0 };
}

/** Two independent 32-bit hashes of the id; the probes are h1 + i * h2 (double hashing). */
const hashes = (id: string): [number, number] => [
  Bun.hash.xxHash32(id, 0),
  Bun.hash.xxHash32(id, 0x9e3779b9) | 1,
];

function holds(l: Layer, h1: number, h2: number): boolean {
  for (let i = 0; i < PROBES; i++) {
    const bit = (h1 + Math.imul(i, h2)) & l.mask;
    if ((l.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
  }
  return true;
}

/** A filter sized for `expected` ids (at least 65,536) before it adds a layer. */
export function createIdFilter(expected = 0): IdFilter {
  const layers: Layer[] = [layer(Math.max(SMALLEST, expected * 2))];
  return {
    add(id) {
      let l = layers[layers.length - 1]!;
      if (l.count >= l.capacity) layers.push((l = layer(l.capacity * 2)));
      const [h1, h2] = hashes(id);
      for (let i = 0; i < PROBES; i++) {
        const bit = (h1 + Math.imul(i, h2)) & l.mask;
        l.bits[bit >>> 5]! |= 1 << (bit & 31);
      }
      l.count++;
    },
    mayHave(id) {
      const [h1, h2] = hashes(id);
      for (const l of layers) if (holds(l, h1, h2)) return true;
      return false;
    },
    get bytes() {
      return layers.reduce((n, l) => n + l.bits.byteLength, 0);
    },
  };
}
