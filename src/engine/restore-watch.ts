/**
 * How a running API learns that its data is being restored: `npm run restore` writes a marker
 * document, `{prefix}-restoring/_doc/restore`, before it touches any index, and deletes it once every
 * restored primary shard serves. Each API reads it every second and answers 503 meanwhile.
 */
import type { Engine, IndexNames } from './client';
import { EngineUnavailable } from './errors';

/** How often an API reads the restore marker. */
export const restoreWatchEveryMs = 1_000;

/** What a restore marker says: which backup is being restored, since when. */
export interface RestoreMarker {
  snapshot: string;
  repository: string;
  started: string;
  replace: boolean;
}

/** Where a prefix's restore marker lives: the one document of `{prefix}-restoring`. */
export function markerDocument(names: IndexNames): { index: string; id: string } {
  return { index: names.restoring, id: 'restore' };
}

/** The restore in progress on the engine's prefix, or undefined. */
export async function restoreMarker(engine: Engine): Promise<RestoreMarker | undefined> {
  const found = await engine.client.get<RestoreMarker>(markerDocument(engine.names), { ignore: [404] });
  return found.found ? found._source : undefined;
}

/**
 * An API's view of the restore marker: read every `everyMs` (each read waits at most `everyMs`),
 * kept as it was when the engine cannot be read. `check` throws EngineUnavailable while a restore
 * runs; `onChange` hears each start and end of one (the API then forgets what it cached).
 */
export class RestoreWatch {
  private marker?: RestoreMarker;
  private timer?: NodeJS.Timeout;
  private reading = false;
  private readonly listeners: (() => void)[] = [];
  /** Settles once the marker has been read once (or could not be). */
  readonly firstRead: Promise<void>;

  constructor(
    private readonly read: () => Promise<RestoreMarker | undefined>,
    readonly everyMs = restoreWatchEveryMs,
  ) {
    this.firstRead = this.poll();
    this.timer = setInterval(() => void this.poll(), everyMs);
    this.timer.unref();
  }

  /** The restore in progress, as last read. */
  get current(): RestoreMarker | undefined {
    return this.marker;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Throws EngineUnavailable while a restore runs. */
  check(): void {
    if (!this.marker) return;
    throw Object.assign(
      new EngineUnavailable(
        `the data is being restored from the backup ${this.marker.snapshot} (since ${this.marker.started}); ` +
          'try again shortly',
      ),
      { retryAfter: 5 },
    );
  }

  private async poll(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const marker = await this.read();
      const changed = (marker === undefined) !== (this.marker === undefined);
      this.marker = marker;
      if (changed) for (const listener of this.listeners) listener();
    } catch {
      // The engine cannot be read: the last state stands (requests fail on their own meanwhile).
    } finally {
      this.reading = false;
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
