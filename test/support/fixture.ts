/**
 * The fixture dump (test/fixtures/dump: real molecules of test/fixtures/chemistry) loaded into the real
 * engine. `fixturePrefix()` is loaded once per test run and shared read-only by every test file;
 * a test that changes data loads its own copy under `freshPrefix(name)`.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfig, type Config } from '../../src/config';
import { parseArguments, runCommand } from '../../loaders/cli';

export const fixturesDir = join(__dirname, '..', 'fixtures');
export const fixtureDump = join(fixturesDir, 'dump');

/** The configuration of a test, with its own index prefix (below the run's prefix, so it is cleaned up). */
export function testConfig(prefix: string, overrides: Record<string, string> = {}): Config {
  return readConfig({ ...process.env, ES_INDEX_PREFIX: prefix, ...overrides });
}

/** A new index prefix under this run's prefix. */
export function freshPrefix(name: string): string {
  return `${readConfig().ES_INDEX_PREFIX}-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

/**
 * Runs `npm run load -- <argv>` in-process against `prefix`; resolves with the summary. A load that
 * adds structures (`dump`, `structures`, `source`) runs with --no-fingerprints unless `fingerprints`
 * asks for them: most tests never search by structure, and computing them takes seconds a load.
 */
export async function load(
  prefix: string,
  argv: string[],
  { fingerprints = false } = {},
): Promise<Record<string, unknown>> {
  const deferred = ['dump', 'structures', 'source'].includes(argv[0]) && !fingerprints;
  return runCommand(
    parseArguments([
      ...argv,
      ...(deferred && !argv.includes('--no-fingerprints') ? ['--no-fingerprints'] : []),
      '--no-progress',
      '--rejects',
      join(tmpdir(), `chemxref-rejects-${prefix}-${Date.now()}.tsv`),
    ]),
    testConfig(prefix),
  );
}

/** Loads the fixture dump under `prefix`, without fingerprints unless `fingerprints` asks for them (as `load`). */
export async function loadFixture(prefix: string, { fingerprints = false } = {}): Promise<string> {
  await load(prefix, ['dump', fixtureDump], { fingerprints });
  return prefix;
}

let shared: Promise<string> | undefined;

/** The prefix holding the fixture dump and its fingerprints, loaded once per test run. Read-only for tests. */
export function fixturePrefix(): Promise<string> {
  shared ??= loadFixture(freshPrefix('fixture'), { fingerprints: true });
  return shared;
}
