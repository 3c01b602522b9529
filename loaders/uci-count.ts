/**
 * The exact UCICount of each source of a reference table, counted as its rows go by when the table
 * is ordered by UCI (UniChem's dumps are): no pass over the index afterwards. A row out of order
 * makes it give up, and the engine counts instead.
 */
export class StreamingUciCount {
  private uci = -1;
  /** The last assignment of each (source, compound id) of the current UCI. */
  private readonly group = new Map<string, 0 | 1>();
  private readonly totals = new Map<number, number>();
  private ordered = true;
  /** The sources with a current assignment of the UCI being flushed (one set, reused). */
  private readonly current = new Set<number>();

  /** A row that is written to the index. */
  add(sourceId: number, uci: number, compoundId: string, assignment: 0 | 1): void {
    if (!this.ordered) return;
    if (uci < this.uci) {
      this.ordered = false;
      this.group.clear();
      return;
    }
    if (uci !== this.uci) this.flush(uci);
    this.group.set(`${sourceId}\t${compoundId}`, assignment);
  }

  /** Per source, the structures with a current assignment; undefined when the rows were not in UCI order. */
  counts(): Map<number, number> | undefined {
    if (!this.ordered) return undefined;
    this.flush(-1);
    return this.totals;
  }

  private flush(next: number): void {
    const current = this.current;
    for (const [key, assignment] of this.group) {
      if (assignment === 1) current.add(Number(key.slice(0, key.indexOf('\t'))));
    }
    for (const sourceId of current) this.totals.set(sourceId, (this.totals.get(sourceId) ?? 0) + 1);
    current.clear();
    this.group.clear();
    this.uci = next;
  }
}
