/**
 * `npm run migrate`: brings the indices behind ES_INDEX_PREFIX from the layout they have to the
 * one this version writes (src/engine/migrations.ts), inside the engine, while the API serves.
 * Prints what each step does on stderr and one JSON summary line on stdout. Safe to run again,
 * after a kill too. Exit codes: 0 done (or nothing to do), 1 failed, 2 wrong usage.
 */
import { commandFailed, parseCommandLine, readCommandConfig, runCli, UsageError, type CliSpec } from './cli';
import { Engine } from './engine/client';
import { currentLayout, LayoutMismatch, migrate } from './engine/layout';
import { migrations } from './engine/migrations';

export const migrateCli = {
  name: 'migrate',
  usage: 'npm run migrate [-- options]',
  commandsTitle: 'steps',
  commands: migrations.map((step) => [`${step.from} -> ${step.to}`, step.what]),
  options: {
    'dry-run': { type: 'boolean', help: 'say which steps would run, change nothing' },
  },
} satisfies CliSpec;

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommandLine(migrateCli, argv);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const engine = new Engine(readCommandConfig());
  try {
    const started = Date.now();
    const result = await migrate(engine, (message) => process.stderr.write(`[migrate] ${message}\n`), {
      dryRun: values['dry-run'] ?? false,
    });
    process.stdout.write(
      `${JSON.stringify({
        command: 'migrate',
        status: 'done',
        dryRun: values['dry-run'] ?? false,
        layoutBefore: result.from ?? null,
        layout: result.to ?? null,
        current: currentLayout,
        steps: result.steps,
        ...(result.from === undefined
          ? { note: 'no indices yet: a first load creates them at the current layout' }
          : {}),
        seconds: Math.round((Date.now() - started) / 10) / 100,
      })}\n`,
    );
  } catch (error) {
    throw commandFailed('migrate', error, [LayoutMismatch]);
  } finally {
    await engine.close();
  }
}

if (require.main === module) runCli(migrateCli, main);
