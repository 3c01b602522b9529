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

/** Runs `npm run load -- <argv>` in-process against `prefix`; resolves with the summary. */
export async function load(prefix: string, argv: string[]): Promise<Record<string, unknown>> {
  return runCommand(
    parseArguments([
      ...argv,
      '--no-progress',
      '--rejects',
      join(tmpdir(), `chemxref-rejects-${prefix}-${Date.now()}.tsv`),
    ]),
    testConfig(prefix),
  );
}

/** Loads the fixture dump under `prefix` (a fresh one by default). */
export async function loadFixture(prefix: string): Promise<string> {
  await load(prefix, ['dump', fixtureDump]);
  return prefix;
}

let shared: Promise<string> | undefined;

/** The prefix holding the fixture dump and its fingerprints, loaded once per test run. Read-only for tests. */
export function fixturePrefix(): Promise<string> {
  shared ??= loadFixture(freshPrefix('fixture')).then(async (prefix) => {
    await load(prefix, ['fingerprints']);
    return prefix;
  });
  return shared;
}
