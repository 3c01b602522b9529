/**
 * `npm run docs:screenshots`: the web pages' screenshots in docs/ (docs/web.md shows them), taken in
 * headless Chromium (as the browser tests find it) at 1280 px (the whole page) and 390 px (a phone's
 * first screen) from the API serving the demo data. The demo dump is loaded under SCREENSHOTS_PREFIX
 * (default docs-screenshots) when missing, and deleted at the end unless SCREENSHOTS_KEEP=1.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArguments, runCommand } from '../loaders/cli';
import { readConfig } from '../src/config';
import { Engine } from '../src/engine/client';
import { startServer } from '../src/server';
import type { Page } from 'playwright-core';
import { launchChromium } from './browser';
import { deleteIndicesByPrefix } from '../scripts/engine';

const prefix = process.env.SCREENSHOTS_PREFIX || 'docs-screenshots';
const root = join(__dirname, '..');
const docs = join(root, 'docs');

/** What a screenshot shows: its file, the page's path, the window's width, what is done before it. */
interface Shot {
  file: string;
  path: string;
  width: number;
  prepare?: (page: Page) => Promise<void>;
}

/** Types a SMILES beside the editor and waits until the editor has drawn it. */
async function typeInEditor(page: Page): Promise<void> {
  await page.waitForSelector('iframe.editor[data-ready="true"]');
  await page.getByLabel('SMILES', { exact: true }).pressSequentially('CC(=O)Nc1ccc(OCC)cc1');
  const frame = page.frames().find((candidate) => candidate.url().endsWith('/editor'))!;
  await frame.waitForFunction('window.chemxrefEditor.smiles() !== ""');
  await page.evaluate("document.querySelector('section.draw').scrollIntoView()");
}

const shots: Shot[] = [
  { file: 'search-paracetamol.png', path: '/search?q=RZVAJINKPMORJF-UHFFFAOYSA-N', width: 1280 },
  { file: 'compound-relatives.png', path: '/search?q=chembl%3ACHEMBL75', width: 1280 },
  { file: 'similar-structures.png', path: '/search?q=chembl%3ACHEMBL75&mode=similar&threshold=0.5', width: 1280 },
  { file: 'editor.png', path: '/', width: 1280, prepare: typeInEditor },
  { file: 'sources.png', path: '/sources', width: 1280 },
  { file: 'bad-input.png', path: '/search?q=CC(%3DO)Nc1ccc(O', width: 1280 },
  { file: 'search-phone.png', path: '/search?q=CHEMBL112&source=1', width: 390 },
  { file: 'similar-phone.png', path: '/search?q=chembl%3ACHEMBL75#similar', width: 390 },
  { file: 'editor-phone.png', path: '/', width: 390, prepare: typeInEditor },
];

/** Loads every picture of the page now (they load lazily, as they near the window), and waits for them. */
async function loadPictures(page: Page): Promise<void> {
  await page.evaluate(`(async () => {
    const images = [...document.images];
    for (const image of images) image.loading = 'eager';
    await Promise.all(images.map((image) => image.decode().catch(() => undefined)));
  })()`);
}

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
    for (const { file, path, width, prepare } of shots) {
      const page = await browser.newPage({ viewport: { width, height: width < 600 ? 844 : 900 } });
      await page.goto(`${url}${path}`, { waitUntil: 'networkidle' });
      await loadPictures(page);
      await prepare?.(page);
      // A phone's shot is its first screen (of the part the path's #fragment scrolls to); a desktop's the whole page.
      await page.screenshot({ path: join(docs, file), fullPage: width >= 600 && !prepare });
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
