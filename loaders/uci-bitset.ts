/**
 * A set of UCIs as a growable bitset: one bit per UCI, so 160 million structures take 20 MB. A dry
 * run of a dump writes nothing, so the reference table is checked against the UCIs the structure
 * table would have created.
 */
export class UciBitset {
  private bits = new Uint8Array(1024);

  add(uci: number): void {
    const byte = uci >>> 3;
    if (byte >= this.bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[byte] |= 1 << (uci & 7);
  }

  has(uci: number): boolean {
    const byte = uci >>> 3;
    return byte < this.bits.length && (this.bits[byte] & (1 << (uci & 7))) !== 0;
  }
}

/** What a dry run of a dump would have written, for checking the later tables of the same dump. */
export interface DryRunMemory {
  ucis: UciBitset;
  sourceIds: Set<number>;
}
