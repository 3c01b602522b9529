/**
 * `npm run docs:screenshots`: the web pages' screenshots in docs/ (the README shows them), taken in
 * headless Chromium (as the browser tests find it) from the API serving the demo data. The demo
 * dump is loaded under SCREENSHOTS_PREFIX (default docs-screenshots) when missing, and deleted at
 * the end unless SCREENSHOTS_KEEP=1.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArguments, runCommand } from '../loaders/cli';
import { readConfig } from '../src/config';
import { Engine } from '../src/engine/client';
import { startServer } from '../src/server';
import { launchChromium } from './browser';
import { deleteIndicesByPrefix } from '../scripts/engine';

const prefix = process.env.SCREENSHOTS_PREFIX || 'docs-screenshots';
const root = join(__dirname, '..');
const docs = join(root, 'docs');

/** What each screenshot shows: file, path, viewport width. */
const shots: [string, string, number][] = [
  ['search-paracetamol.png', '/search?q=RZVAJINKPMORJF-UHFFFAOYSA-N', 1200],
  ['compound-relatives.png', '/search?q=chembl%3ACHEMBL75', 1200],
  ['sources.png', '/sources', 1200],
  ['search-phone.png', '/search?q=CHEMBL112&source=1', 390],
  ['bad-input.png', '/search?q=CC(%3DO)Nc1ccc(O', 1200],
];

async function main(): Promise<void> {
  const config = readConfig({ ...process.env, ES_INDEX_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const engine = new Engine(config);
  const loaded = await engine.client.count({ index: engine.names.compounds }).then(
    (r) => r.count,
    () => 0,
  );
  await engine.close();
  if (loaded === 0)
    await runCommand(
      parseArguments(['dump', join(root, 'examples', 'demo'), '--no-progress', '--rejects', '/dev/null']),
      config,
    );
  const { url, stop } = await startServer(config, {}, 0);
  const browser = await launchChromium();
  try {
    mkdirSync(docs, { recursive: true });
    for (const [file, path, width] of shots) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.goto(`${url}${path}`, { waitUntil: 'networkidle' });
      await page.screenshot({ path: join(docs, file), fullPage: width < 600 ? false : true });
      // Left open until the browser closes: closing it takes a single-process Chromium (the bundled one) down.
      process.stdout.write(`docs/${file}: ${path}\n`);
    }
  } finally {
    await browser.close();
    await stop();
    if (!process.env.SCREENSHOTS_KEEP) await deleteIndicesByPrefix(config.ES_URL, prefix);
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
