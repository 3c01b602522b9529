/** The progress line of an export on stderr (on a terminal, or when asked). */

function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Counts rows per phase and redraws one status line at most five times a second. */
export class Progress {
  private phase = '';
  private phaseStarted = Date.now();
  private rows = 0;
  private total = 0;
  private lastDraw = 0;
  private readonly started = Date.now();

  constructor(private readonly enabled: boolean) {}

  /** Starts a phase ("snapshot 104", "pairs", "write mappings", ...); `total` rows when known. */
  begin(phase: string, total = 0): void {
    this.phase = phase;
    this.phaseStarted = Date.now();
    this.rows = 0;
    this.total = total;
    this.draw(true);
  }

  /** Adds `rows` to the phase's count. */
  tick(rows: number): void {
    this.rows += rows;
    this.draw(false);
  }

  private draw(force: boolean): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 200) return;
    this.lastDraw = now;
    const seconds = (now - this.phaseStarted) / 1000;
    const rate = Math.round(this.rows / Math.max(seconds, 0.001));
    let bar = '';
    if (this.total > 0) {
      const done = Math.min(this.rows / this.total, 1);
      const eta = done > 0 ? (seconds * (1 - done)) / done : Infinity;
      bar =
        `[${'#'.repeat(Math.round(done * 24)).padEnd(24, '.')}] ` +
        `${(done * 100).toFixed(1)}% ETA ` +
        `${Number.isFinite(eta) ? formatDuration(eta) : '--:--'} `;
    }
    const elapsed = formatDuration((now - this.started) / 1000);
    process.stderr.write(`\r\x1b[K${elapsed} ${this.phase} ${bar}${this.rows} rows ${rate} rows/s`);
  }

  /** Ends the status line. */
  done(): void {
    if (this.enabled) process.stderr.write('\n');
  }
}
