/**
 * What a load leaves when it fails, is refused or is killed, swept: its release index, its locks,
 * the changes it recorded, the structures only it created, and the compounds index's refresh it
 * paused. A failing or refused load sweeps its own; every writing load and `npm run load -- doctor`
 * sweep those of killed loads (their process gone, or no heartbeat for 30 s; a rollback killed after
 * its alias swap is finished instead) and replaced releases no source can roll back to, past
 * RELEASE_GRACE.
 */
import type { Config } from '../src/config';
import type { LoadRecord } from '../src/engine/documents';
import type { Engine } from '../src/engine/client';
import { deleteChangesOf } from '../src/engine/changes';
import { removeOrphanStructuresOf } from '../src/engine/compounds';
import { finishInterruptedRollback } from './rollback';
import { indicesOf, releaseLocksOf, runningLoads, saveLoadRecord } from '../src/engine/loads';
import {
  refreshIndex,
  refreshPaused,
  removeAllLeftoverReleases,
  removeExpiredPreviousReleases,
  resumeRefresh,
} from '../src/engine/schema';

/** What a sweep did, for the summary line and `doctor`. */
export interface SweepReport {
  /** Loads found killed: marked failed and swept, or (a rollback killed after its alias swap) `finished`. */
  interruptedLoads: { loadId: string; command: string; why: string; sourceId?: number; finished?: boolean }[];
  releaseIndicesRemoved: string[];
  previousReleasesExpired: string[];
  structuresRemoved: number;
  refreshRestored: boolean;
  /** Why structures of interrupted loads were kept, when they were. */
  note?: string;
}

/**
 * Removes what one failed or refused load created: its release index (never a published one) and
 * the structures that only it created (when no other load is running, which could be about to
 * refer to them). Returns how many structures went.
 */
export async function sweepOwnLeftovers(engine: Engine, loadId: string): Promise<number> {
  const { alive } = await runningLoads(engine);
  await removeAllLeftoverReleases(engine, indicesOf(alive.filter((record) => record.loadId !== loadId)));
  if (alive.some((record) => record.loadId !== loadId)) return 0;
  await refreshIndex(engine, engine.names.compounds);
  return removeOrphanStructuresOf(engine, loadId);
}

/** Finds loads that were killed and sweeps what they left, with previous releases past the grace. */
export async function sweepInterruptedLoads(engine: Engine, config: Config): Promise<SweepReport> {
  const { alive, interrupted } = await runningLoads(engine);
  const report: SweepReport = {
    interruptedLoads: [],
    releaseIndicesRemoved: [],
    previousReleasesExpired: [],
    structuresRemoved: 0,
    refreshRestored: false,
  };
  for (const { record, why } of interrupted) {
    if (await finishInterruptedRollback(engine, record, why)) {
      await releaseLocksOf(engine, record.loadId);
      report.interruptedLoads.push({
        loadId: record.loadId,
        command: record.command,
        why,
        sourceId: record.sourceId ?? undefined,
        finished: true,
      });
      continue;
    }
    const failed: LoadRecord = {
      ...record,
      status: 'failed',
      ended: new Date().toISOString(),
      message: `interrupted: ${why}`,
    };
    await saveLoadRecord(engine, failed);
    await releaseLocksOf(engine, record.loadId);
    await deleteChangesOf(engine, record.loadId);
    report.interruptedLoads.push({ loadId: record.loadId, command: record.command, why });
  }
  report.releaseIndicesRemoved = await removeAllLeftoverReleases(engine, indicesOf(alive));
  report.previousReleasesExpired = await removeExpiredPreviousReleases(engine, config.RELEASE_GRACE);
  if (alive.length === 0) {
    // A killed structures or source load leaves the compounds index with refresh off.
    if (await refreshPaused(engine, engine.names.compounds)) {
      await resumeRefresh(engine, engine.names.compounds, 'compounds');
      report.refreshRestored = true;
    }
  }
  if (interrupted.length > 0) {
    if (alive.length === 0) {
      await refreshIndex(engine, engine.names.compounds);
      for (const { record } of interrupted)
        report.structuresRemoved += await removeOrphanStructuresOf(engine, record.loadId);
    } else {
      report.note =
        `structures of interrupted loads kept while load ` +
        `${alive.map((record) => record.loadId).join(', ')} runs; run \`npm ` +
        `run load -- doctor\` later`;
    }
  }
  return report;
}
