/**
 * The layout of the indices behind ES_INDEX_PREFIX: a number recorded in the meta index (document
 * `layout`), raised by each step of migrations.ts. The API serves the current layout and the older
 * ones it can still read, and refuses a newer one at start; loads write only the current one; `npm
 * run migrate` brings an older one forward.
 */
import { Engine, IndexNames } from './client';
import { layoutCheckEveryMs, migrations } from './migrations';
import { ensureBaseIndices } from './schema';

/** The layout this version writes. */
export const currentLayout = migrations[migrations.length - 1].to;
/** The oldest layout this version's API still serves (layout 1: release names `{prefix}-xrefs*`). */
export const oldestServedLayout = 1;
/** The layout of indices written before layouts were recorded, unless they have release names of layout 1. */
const unrecordedLayout = 2;

const layoutId = 'layout';
/** How long the API's start tries the first check of the layout again while the engine is slow to answer. */
const startCheckWithinMs = 8_000;
/** How long one check of the layout waits for the engine. */
const checkTimeoutMs = 4_000;

/** How long the API's start tries its first check of the layout, and each try's timeout. */
export interface LayoutStartCheck {
  withinMs: number;
  requestTimeoutMs: number;
}

/** Indices of a layout this version cannot serve or write. */
export class LayoutMismatch extends Error {}

/**
 * The layout of the indices: the recorded one, else what their names say (layout 1 when any
 * `{prefix}-xrefs*` index or alias exists, else 2); undefined when there are none yet.
 */
export async function readLayout(engine: Engine, deadline: RequestDeadline = {}): Promise<number | undefined> {
  const recorded = await engine.client.get<{ layout?: number }>(
    { index: engine.names.meta, id: layoutId },
    { ignore: [404], ...deadline },
  );
  if (recorded.found && recorded._source?.layout) return recorded._source.layout;
  const old = await engine.client.indices.resolveIndex(
    { name: `${engine.names.prefix}-xrefs*` },
    { ignore: [404], ...deadline },
  );
  if ((old.indices?.length ?? 0) + (old.aliases?.length ?? 0) > 0) return 1;
  return (await engine.client.indices.exists({ index: engine.names.meta }, deadline)) ? unrecordedLayout : undefined;
}

/** Per-request transport options of the API's checks: their own deadline, no retry. */
type RequestDeadline = { requestTimeout?: number; maxRetries?: number };

/** Records `layout` in the meta index (its mapping must have the field: layout 2 on). */
export async function recordLayout(engine: Engine, layout: number): Promise<void> {
  await engine.client.index({
    index: engine.names.meta,
    id: layoutId,
    document: { kind: 'layout', layout, ended: new Date().toISOString() },
    refresh: true,
  });
}

const prefixOf = (engine: Engine): string => `ES_INDEX_PREFIX "${engine.names.prefix}"`;

function newerMessage(engine: Engine, layout: number): string {
  return (
    `the indices of ${prefixOf(engine)} have layout ${layout}, newer than this chemxref reads ` +
    `(layouts ${oldestServedLayout} to ${currentLayout}): run the chemxref that wrote them, or a newer one`
  );
}

/**
 * Before a load writes: the indices are of the current layout (recorded when they are new, or were
 * written before layouts were recorded), else LayoutMismatch saying what to run.
 */
export async function requireCurrentLayout(engine: Engine): Promise<{ record: boolean }> {
  const layout = await readLayout(engine);
  if (layout !== undefined && layout > currentLayout) throw new LayoutMismatch(newerMessage(engine, layout));
  if (layout !== undefined && layout < currentLayout)
    throw new LayoutMismatch(
      `the indices of ${prefixOf(engine)} have layout ${layout}; this chemxref writes layout ${currentLayout}: ` +
        'run `npm run migrate` first (the API serves meanwhile)',
    );
  const recorded = await engine.client.get({ index: engine.names.meta, id: layoutId }, { ignore: [404] });
  return { record: !recorded.found };
}

/**
 * The release names to read at `layout`: an API of this version serving layout 1 reads
 * `{prefix}-xrefs*` until a migration has added the new names beside them.
 */
async function releaseNames(
  engine: Engine,
  layout: number | undefined,
  deadline: RequestDeadline,
): Promise<IndexNames['releases']> {
  if (layout === undefined || layout >= 2) return 'assignments';
  const migrated = await engine.client.indices.existsAlias({ name: `${engine.names.prefix}-assignments` }, deadline);
  return migrated ? 'assignments' : 'xrefs';
}

/**
 * For the API: checks the layout at start (LayoutMismatch for a newer one, or one older than it
 * serves), reads the release names of the layout it serves, and checks again every few seconds, so
 * that it follows a migration. An engine that does not answer yet is checked on the next round.
 * Returns the function that stops the checks.
 */
export async function watchLayout(
  engine: Engine,
  log: {
    info: (message: string, fields: Record<string, unknown>) => void;
    error: (message: string, fields: Record<string, unknown>) => void;
  },
  start: LayoutStartCheck = { withinMs: startCheckWithinMs, requestTimeoutMs: checkTimeoutMs },
): Promise<() => void> {
  let told: number | undefined;
  // A client of its own: its checks neither wait behind nor count in the serving client's breaker, and a check of a
  // frozen engine gives up after its own deadline.
  const reader = new Engine(engine.config);
  const deadline = { requestTimeout: checkTimeoutMs, maxRetries: 0 };
  const check = async (starting: boolean): Promise<void> => {
    const layout = await readLayout(
      reader,
      starting ? { requestTimeout: start.requestTimeoutMs, maxRetries: 0 } : deadline,
    );
    if (layout !== undefined && (layout > currentLayout || layout < oldestServedLayout)) {
      const message =
        layout > currentLayout
          ? newerMessage(engine, layout)
          : `the indices of ${prefixOf(engine)} have layout ${layout}, older than this chemxref serves ` +
            `(${oldestServedLayout} to ${currentLayout}): migrate them with an older chemxref first`;
      if (starting) throw new LayoutMismatch(message);
      if (told !== layout) log.error('index layout not served', { layout, message });
      told = layout;
      return;
    }
    const releases = await releaseNames(reader, layout, deadline);
    if (releases !== engine.names.releases) {
      engine.names = new IndexNames(engine.names.prefix, releases);
      log.info('index layout', { layout, releases: engine.names.assignments });
    }
  };
  // A first request that times out (an engine busy, connections opening) is tried again for a while; an engine that
  // does not answer at all does not hold the start up: the checks go on every few seconds.
  const startDeadline = Date.now() + start.withinMs;
  for (;;) {
    try {
      await check(true);
      break;
    } catch (error) {
      if (error instanceof LayoutMismatch) {
        await reader.close();
        throw error;
      }
      if ((error as Error).name !== 'TimeoutError' || Date.now() > startDeadline) break;
    }
  }
  const timer = setInterval(() => void check(false).catch(() => undefined), layoutCheckEveryMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    void reader.close();
  };
}

/**
 * Runs every step from the indices' layout to the current one, recording each as it ends; `note`
 * hears what each does. Returns the layouts before and after and the steps run.
 */
export async function migrate(
  engine: Engine,
  note: (message: string) => void,
  { dryRun = false } = {},
): Promise<{ from: number | undefined; to: number | undefined; steps: string[] }> {
  const from = await readLayout(engine);
  if (from === undefined) return { from, to: from, steps: [] };
  if (from > currentLayout) throw new LayoutMismatch(newerMessage(engine, from));
  const steps = migrations.filter((step) => step.from >= from);
  if (steps.length > 0 && steps[0].from !== from)
    throw new LayoutMismatch(`no migration step starts from layout ${from} (steps: ${describeSteps()})`);
  const done: string[] = [];
  let layout = from;
  for (const step of steps) {
    done.push(`${step.from} -> ${step.to}: ${step.what}`);
    if (dryRun) continue;
    note(`layout ${step.from} -> ${step.to}: ${step.what}`);
    await step.run(engine, note);
    await recordLayout(engine, step.to);
    layout = step.to;
  }
  if (!dryRun && steps.length === 0) {
    // Indices written before layouts were recorded: their meta index gains the field first.
    await ensureBaseIndices(engine);
    await recordLayout(engine, from);
  }
  return { from, to: dryRun ? from : layout, steps: done };
}

function describeSteps(): string {
  return migrations.map((step) => `${step.from} -> ${step.to}`).join(', ');
}
