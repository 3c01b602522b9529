/**
 * `npm run test:examples`: every shell example of README.md and docs/*.md runs as written against
 * the demo data. Each Markdown file gets its own index prefix holding the demo dump
 * (examples/demo) and its own API on a free port; its `sh` blocks then run with bash, in order
 * (a later block may rely on what an earlier one loaded), with `API` pointing at that API and
 * ES_INDEX_PREFIX at those indices, so `npm run load`, `map` and `export` act on them too.
 *
 * The conventions, as docs/testing.md states them: a fenced block whose language is `sh` is run
 * and must exit 0; the comment `<!-- example: not run, <why> -->` on the line before it shows it
 * without running it (Docker, a cluster, a benchmark, the demo itself); the comment
 * `<!-- example: answers errors -->` lets its answers be errors (it shows them), otherwise an
 * error or "Not found" answer in what it prints fails it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Engine } from '../../src/engine/client';
import { startApi, type RunningApi } from '../support/api';
import { freshPrefix, load, testConfig } from '../support/fixture';
import { repoRoot, runToEnd, type Finished } from '../support/run';

const demoDump = join(repoRoot, 'examples', 'demo');

interface ShellExample {
  /** The block's first line, which names its test. */
  title: string;
  script: string;
  /** Why the block is shown but not run, when it is not. */
  notRun?: string;
  answersErrors: boolean;
  line: number;
}

const marker = /^<!--\s*example:\s*(.*?)\s*-->$/;

/** The `sh` blocks of a Markdown text, in order, with the marker comment that precedes each. */
function shellExamples(markdown: string): ShellExample[] {
  const lines = markdown.split('\n');
  const examples: ShellExample[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]);
    if (!fence) continue;
    const [, , ticks, language] = fence;
    let end = i + 1;
    while (end < lines.length && !lines[end].trimStart().startsWith(ticks)) end += 1;
    if (language === 'sh') {
      let before = i - 1;
      while (before >= 0 && lines[before].trim() === '') before -= 1;
      const note = before >= 0 ? marker.exec(lines[before].trim())?.[1] : undefined;
      const script = lines.slice(i + 1, end).join('\n');
      const title =
        script
          .split('\n')
          .find((line) => line.trim() !== '')
          ?.trim() ?? '(empty)';
      examples.push({
        title,
        script,
        line: i + 1,
        notRun: note?.startsWith('not run') ? note.replace(/^not run[,:]?\s*/, '') || 'marked not run' : undefined,
        answersErrors: note === 'answers errors',
      });
    }
    i = end;
  }
  return examples;
}

/** Runs one example with bash (-euo pipefail); resolves with its exit code and output. */
function runExample(script: string, env: Record<string, string>): Promise<Finished> {
  return runToEnd('bash', ['-c', `set -euo pipefail\n${script}`], env);
}

const errorAnswer = /"response":\s*"(Error|Not found)"|^\{"error":|<error>/m;

before(function () {
  // The examples are written for a reader's shell: curl for the requests, jq to pick fields out of the answers.
  for (const tool of ['curl', 'jq']) {
    const found = spawnSync('bash', ['-c', `command -v ${tool}`]);
    if (found.status !== 0) throw new Error(`the examples of the documents need ${tool} on PATH`);
  }
});

let demoFingerprints: Promise<string> | undefined;

/**
 * The fingerprints index of the demo, computed once a run under a prefix of its own (the demo's
 * 28,437 structures take a minute or more) and made read-only, so that it can be cloned.
 */
function sharedDemoFingerprints(): Promise<string> {
  demoFingerprints ??= (async () => {
    const prefix = freshPrefix('examples-fingerprints');
    await load(prefix, ['dump', demoDump], { fingerprints: true });
    const engine = new Engine(testConfig(prefix));
    try {
      await engine.client.indices.putSettings({
        index: engine.names.fingerprints,
        settings: { 'index.blocks.write': true },
      });
      return engine.names.fingerprints;
    } finally {
      await engine.close();
    }
  })();
  return demoFingerprints;
}

/**
 * Gives `prefix`, which holds the demo dump (the same UCIs wherever it is loaded), the demo's
 * fingerprints: a clone of the shared index, whose segments the engine hard-links in a second.
 */
async function cloneDemoFingerprints(prefix: string): Promise<void> {
  const source = await sharedDemoFingerprints();
  const engine = new Engine(testConfig(prefix));
  try {
    const target = engine.names.fingerprints;
    await engine.client.indices.delete({ index: target });
    await engine.client.indices.clone({ index: source, target, wait_for_active_shards: 1 });
    await engine.client.indices.putSettings({ index: target, settings: { 'index.blocks.write': false } });
  } finally {
    await engine.close();
  }
}

const documents = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join('docs', name)),
];

for (const document of documents) {
  const examples = shellExamples(readFileSync(join(repoRoot, document), 'utf8'));
  if (examples.length === 0) continue;

  describe(`the examples of ${document}`, function () {
    this.timeout(300_000);
    let server: RunningApi | undefined;
    let prefix = '';

    before(async function () {
      if (examples.every((example) => example.notRun)) return;
      prefix = freshPrefix(`examples-${document}`);
      await load(prefix, ['dump', demoDump]);
      // Where an example searches by structure, or runs a load that adds structures (which would compute
      // every fingerprint the demo's load left), the demo's fingerprints.
      if (
        examples.some(
          (example) =>
            !example.notRun &&
            /similarity|substructure|npm run (--silent )?load -- (dump|structures|source) /.test(example.script),
        )
      )
        await cloneDemoFingerprints(prefix);
      server = await startApi(testConfig(prefix));
    });

    after(async () => {
      await server?.stop();
    });

    for (const example of examples) {
      const title = `${document}:${example.line} ${example.title}`;
      if (example.notRun) {
        it.skip(`${title} (not run: ${example.notRun})`);
        continue;
      }
      it(title, async () => {
        const { code, stdout, stderr } = await runExample(example.script, {
          API: server!.url,
          ES_INDEX_PREFIX: prefix,
        });
        const shown =
          `${document} line ${example.line}:\n${example.script}\n--- stdout ` +
          `---\n${stdout.slice(-3000)}\n--- stderr ---\n${stderr.slice(-3000)}`;
        expect(code, shown).to.equal(0);
        if (!example.answersErrors)
          expect(
            errorAnswer.test(stdout),
            `an error or Not found answer, and the block is not marked "answers errors"\n${shown}`,
          ).to.equal(false);
      });
    }
  });
}
