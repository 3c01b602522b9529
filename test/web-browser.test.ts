import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { browserOnFixture, findChromium } from './support/browser';
import { fixturesDir } from './support/fixture';
import { chromium } from 'playwright-core';

/**
 * Run in the page (as text: the tests are compiled without the DOM's types): each word of each
 * visible cell of the sources table that takes more than one line box, i.e. that is split.
 */
const splitWords = `(() => {
  const found = [];
  for (const cell of document.querySelectorAll('table.sources th, table.sources td')) {
    if (cell.offsetParent === null) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
        if (lines.size > 1) found.push(match[0] + ' (' + lines.size + ' lines)');
      }
    }
  }
  return found;
})()`;

/**
 * Run in the page: the width of main's content; of the list of similar structures, how far the right
 * edge of its last column is from its own, and each thumbnail's box with its cell's width, its
 * picture's own width (the SVG's) and how it fits it.
 */
const similarGrid = `(() => {
  const main = document.querySelector('main');
  const padding = parseFloat(getComputedStyle(main).paddingLeft) + parseFloat(getComputedStyle(main).paddingRight);
  const list = document.querySelector('#similar ~ ul.structures');
  const box = list.getBoundingClientRect();
  const items = [...list.querySelectorAll('li')].map((li) => li.getBoundingClientRect());
  return {
    content: main.clientWidth - padding,
    list: box.width,
    gapAfterLastColumn: box.right - Math.max(...items.map((item) => item.right)),
    scrollWidth: document.documentElement.scrollWidth,
    window: innerWidth,
    thumbnails: [...list.querySelectorAll('img.thumb')].map((img) => ({
      width: img.getBoundingClientRect().width,
      height: img.getBoundingClientRect().height,
      cell: img.closest('li').getBoundingClientRect().width,
      natural: img.naturalWidth,
      fit: getComputedStyle(img).objectFit,
    })),
  };
})()`;

/**
 * Run in the page: for each copy button, how far its middle is from the middle of the first line of
 * the value it copies, and whether it stands to the right of that line.
 */
const copyButtons = `(() => [...document.querySelectorAll('button.copy')].map((button) => {
  const code = button.parentElement.querySelector('code');
  const range = document.createRange();
  range.selectNodeContents(code);
  const first = range.getClientRects()[0];
  const own = button.getBoundingClientRect();
  return {
    name: button.textContent,
    offset: Math.abs((own.top + own.bottom) / 2 - (first.top + first.bottom) / 2),
    beside: own.left >= first.right - 1,
  };
}))()`;

describe('the search pages in a real browser', function () {
  this.timeout(180_000);
  const fixture = browserOnFixture();

  /** A page that records console errors, failed requests and uncaught exceptions. */
  async function watchedPage(javaScriptEnabled = true): Promise<{ page: Page; problems: string[] }> {
    const context = await fixture.browser.newContext({ javaScriptEnabled });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    // A page left while its thumbnails load aborts them: that is the browser's doing, not a fault.
    page.on('requestfailed', (request) => {
      if (request.failure()?.errorText !== 'net::ERR_ABORTED')
        problems.push(`${request.url()}: ${request.failure()?.errorText}`);
    });
    return { page, problems };
  }

  /** Waits, a tenth of a second at a time, until `done` holds (within 10 s). */
  async function until(done: () => Promise<boolean>, what: string): Promise<void> {
    for (const started = Date.now(); !(await done()); await new Promise((resolve) => setTimeout(resolve, 100)))
      if (Date.now() - started > 10_000) throw new Error(`not within 10 s: ${what}`);
  }

  async function search(page: Page, text: string, source = ''): Promise<void> {
    await page.goto(`${fixture.api.url}/`);
    await page.getByLabel('InChIKey, InChI, UCI').fill(text);
    await page.getByLabel('in source').selectOption(source);
    await Promise.all([page.waitForURL(/\/search\?/), page.getByRole('button', { name: 'Search' }).click()]);
  }

  it(
    'searches paracetamol by key, by CHEMBL112 with ChEMBL, by InChI; the ' + 'depiction loads; no console error',
    async () => {
      const { page, problems } = await watchedPage();
      const depiction = page.waitForResponse((response) => response.url().endsWith('/api/v1/images/614'));
      await search(page, 'RZVAJINKPMORJF-UHFFFAOYSA-N');
      expect(await page.locator('h1').textContent()).to.equal('UCI 614');
      expect(await page.locator('table.assignments').textContent()).to.contain('CHEMBL112');
      expect((await depiction).status(), 'the depiction loads').to.equal(200);
      expect((await depiction).headers()['content-type']).to.match(/^image\/svg\+xml/);
      await search(page, 'CHEMBL112', '1');
      expect(await page.locator('.understood').textContent()).to.equal('Searched: compound id CHEMBL112 in ChEMBL.');
      await search(page, 'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)');
      expect(await page.locator('h1').textContent()).to.equal('UCI 614');
      expect(await page.locator('button.copy').first().isVisible(), 'copy buttons shown with JavaScript').to.equal(
        true,
      );
      expect(problems, problems.join('\n')).to.deep.equal([]);
    },
  );

  it('follows a source link and a stereoisomer to its own page', async () => {
    const { page, problems } = await watchedPage();
    await page.goto(`${fixture.api.url}/compound/229`);
    await Promise.all([page.waitForURL(/\/compound\/230$/), page.locator('#stereo a[href="/compound/230"]').click()]);
    expect(await page.locator('h1').textContent()).to.equal('UCI 230');
    await Promise.all([
      page.waitForURL(/\/sources\/\d+$/),
      page.locator('table.assignments a[href^="/sources/"]').first().click(),
    ]);
    expect(await page.locator('h2').first().textContent()).to.equal('Loads');
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('a bad input shows its message', async () => {
    const { page } = await watchedPage();
    await search(page, 'CC(=O)Nc1ccc(O');
    expect(await page.getByRole('alert').textContent()).to.contain('the SMILES could not be read');
  });

  it('runs in the Chromium the dev dependencies ship, so a machine without a browser passes `npm test`', async () => {
    const asked = process.env.CHROMIUM_PATH;
    process.env.CHROMIUM_PATH = 'bundled';
    try {
      const bundled = await findChromium();
      expect(bundled.origin).to.equal('@sparticuz/chromium');
      const own = await chromium.launch({ executablePath: bundled.executablePath, args: bundled.args });
      try {
        const page = await own.newPage();
        await page.goto(`${fixture.api.url}/search?q=CHEMBL112&source=1`);
        expect(await page.locator('h1').textContent()).to.equal('UCI 614');
      } finally {
        await own.close();
      }
    } finally {
      if (asked === undefined) delete process.env.CHROMIUM_PATH;
      else process.env.CHROMIUM_PATH = asked;
    }
  });

  for (const width of [1280, 390])
    it(`at ${width} px a compound page's similar structures fill the page's width, each picture legible`, async () => {
      // Left open, as watchedPage's are (below).
      const context = await fixture.browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${fixture.api.url}/compound/229`);
      // Thumbnails load as they come near the window: scroll to each one not drawn yet.
      await until(
        async () =>
          (await page.evaluate(`(() => {
            const waiting = [...document.querySelectorAll('#similar ~ ul.structures img')].filter(
              (image) => !image.complete || image.naturalWidth === 0,
            );
            waiting[0]?.scrollIntoView();
            return waiting.length === 0;
          })()`)) as boolean,
        'the similar structures are drawn',
      );
      // SCREENSHOT_DIR=folder keeps what the browser shows, to look at.
      if (process.env.SCREENSHOT_DIR)
        await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/compound-${width}.png`, fullPage: true });
      const grid = (await page.evaluate(similarGrid)) as {
        content: number;
        list: number;
        gapAfterLastColumn: number;
        scrollWidth: number;
        window: number;
        thumbnails: { width: number; height: number; cell: number; natural: number; fit: string }[];
      };
      expect(grid.list, 'the grid is as wide as the column').to.be.at.least(grid.content * 0.9);
      expect(grid.gapAfterLastColumn, 'no empty column at the right').to.be.below(2);
      expect(grid.scrollWidth, 'nothing wider than the window').to.equal(grid.window);
      expect(grid.thumbnails.length).to.be.above(3);
      for (const thumbnail of grid.thumbnails) {
        expect(thumbnail.width, 'a picture fills its cell').to.be.closeTo(thumbnail.cell, 1);
        expect(thumbnail.width, 'wide enough to read its labels').to.be.at.least(280);
        expect(thumbnail.height).to.be.closeTo((thumbnail.width * 3) / 4, 1);
        // Scaled down into its box, whole, never up: its bonds at least a third of their 50 px.
        expect(thumbnail.fit).to.equal('scale-down');
        expect(Math.min(1, thumbnail.width / thumbnail.natural), 'drawn at a third of its size or more').to.be.at.least(
          1 / 3,
        );
      }
    });

  for (const width of [1280, 390])
    it(`at ${width} px each copy button stands beside the first line of what it copies, the InChI's too`, async () => {
      const context = await fixture.browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${fixture.api.url}/compound/229`);
      const buttons = (await page.evaluate(copyButtons)) as { name: string; offset: number; beside: boolean }[];
      expect(buttons.map((button) => button.name)).to.deep.equal(['Copy InChIKey', 'Copy InChI', 'Copy UCI']);
      for (const button of buttons) {
        expect(button.offset, `${button.name} on the value's first line`).to.be.below(8);
        expect(button.beside, `${button.name} to the right of it`).to.equal(true);
      }
    });

  it('the threshold of the similar structures sits under their heading, above the grid it filters', async () => {
    const { page } = await watchedPage();
    await page.goto(`${fixture.api.url}/search?q=CHEMBL112&source=1`);
    const top = async (selector: string, edge: 'top' | 'bottom' = 'top'): Promise<number> =>
      (await page.evaluate(
        `document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect().${edge}`,
      )) as number;
    expect(await page.locator('#threshold').count(), 'one threshold control').to.equal(1);
    expect(await top('#threshold')).to.be.above(await top('h2#similar', 'bottom'));
    await page.goto(`${fixture.api.url}/compound/229`);
    expect(await top('#threshold')).to.be.above(await top('h2#similar', 'bottom'));
    expect(await top('#threshold', 'bottom')).to.be.below(await top('#similar ~ ul.structures'));
    await page.getByLabel('Tanimoto at least').fill('0.5');
    await Promise.all([
      page.waitForURL(/q=229&mode=similar&threshold=0\.5$/),
      page.getByRole('button', { name: 'Search at this threshold' }).click(),
    ]);
    expect(await page.locator('h1').textContent()).to.equal('Similar structures');
  });

  it('/sources on a 390 px phone: no word of a cell split over two lines, secondary columns hidden', async () => {
    // Left open, as watchedPage's are: closing a context takes the single-process Chromium down with it.
    const context = await fixture.browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${fixture.api.url}/sources`);
    // SCREENSHOT_DIR=folder keeps what the phone shows, to look at.
    const folder = process.env.SCREENSHOT_DIR;
    if (folder) await page.screenshot({ path: `${folder}/sources-390.png`, fullPage: true });
    const split = await page.evaluate(splitWords);
    expect(split).to.deep.equal([]);
    // Ids of three digits (101 to 104) are words too: whole on one line.
    expect(await page.locator('table.sources td.id').allTextContents()).to.include.members(['101', '104']);
    expect(await page.locator('table.sources th.secondary').first().isVisible()).to.equal(false);
    // Nothing wider than the screen: the table reads without scrolling sideways.
    const widths = (await page.evaluate('[document.documentElement.scrollWidth, innerWidth]')) as number[];
    expect(widths[0]).to.equal(widths[1]);
  });

  it(
    "the structure editor loads from this service alone, under the pages' Content-Security-Policy; a drawing " +
      'fills the SMILES field and searches the structures containing it',
    async () => {
      const { page, problems } = await watchedPage();
      const elsewhere: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(fixture.api.url) && !request.url().startsWith('data:'))
          elsewhere.push(request.url());
      });
      const violations: string[] = [];
      await page.exposeFunction('reportViolation', (text: string) => {
        violations.push(text);
      });
      await page.addInitScript({
        content:
          "document.addEventListener('securitypolicyviolation', (e) => " +
          'window.reportViolation(`${e.violatedDirective}: ${e.blockedURI}`));',
      });
      await page.goto(`${fixture.api.url}/`);
      await page.waitForSelector('iframe.editor[data-ready="true"]');
      // The editor's default tool draws a bond on an empty canvas (ethane), and a bond from an atom clicked.
      const canvas = (await page.locator('iframe.editor').boundingBox())!;
      for (let click = 0; click < 2; click += 1)
        await page.mouse.click(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
      await until(async () => (await page.inputValue('#drawn')) === 'CCC', 'the drawing is in the SMILES field');
      await Promise.all([
        page.waitForURL(/mode=substructure/),
        page.getByRole('button', { name: 'Structures containing it' }).click(),
      ]);
      expect(await page.locator('.understood').textContent()).to.contain('containing the SMILES CCC');
      expect(await page.locator('ul.structures li').count()).to.be.above(0);
      expect(elsewhere, 'requests to other sites').to.deep.equal([]);
      expect(violations, violations.join('\n')).to.deep.equal([]);
      expect(problems, problems.join('\n')).to.deep.equal([]);
    },
  );

  /** What the editor holds, as JSME's own SMILES (the frame's policy lets a test evaluate text there). */
  async function drawn(page: Page): Promise<string> {
    const frame = page.frames().find((candidate) => candidate.url().endsWith('/editor'))!;
    return (await frame.evaluate('window.chemxrefEditor.smiles()')) as string;
  }

  it(
    'a SMILES typed beside the editor is drawn as it is typed, before the field loses focus; an unfinished ' +
      'one leaves the drawing; it searches its similar structures',
    async () => {
      const { page, problems } = await watchedPage();
      await page.goto(`${fixture.api.url}/`);
      await page.waitForSelector('iframe.editor[data-ready="true"]');
      const field = page.getByLabel('SMILES', { exact: true });
      await field.pressSequentially('CC(=O)Nc1ccc(OCC)cc1');
      await until(async () => (await drawn(page)) === 'CCOc1ccc(NC(C)=O)cc1', 'the typed SMILES is drawn');
      expect(await page.evaluate('document.activeElement.id'), 'the field still has the focus').to.equal('drawn');
      // An open branch, bracket and ring bond, each unfinished from its first key: JSME would draw `…cc1(` as the
      // SMILES without the branch.
      for (const unfinished of ['(', '[N', '%1']) {
        await field.pressSequentially(unfinished);
        await new Promise((resolve) => setTimeout(resolve, 600));
        expect(await drawn(page), `after typing ${unfinished}`).to.equal('CCOc1ccc(NC(C)=O)cc1');
        expect(await field.inputValue(), 'the field keeps what is typed').to.equal(`CC(=O)Nc1ccc(OCC)cc1${unfinished}`);
        for (let key = 0; key < unfinished.length; key += 1) await field.press('Backspace');
      }
      await page.getByLabel('similar at Tanimoto').fill('0.4');
      await Promise.all([
        page.waitForURL(/mode=similar/),
        page.getByRole('button', { name: 'Similar structures' }).click(),
      ]);
      expect(await page.locator('h1').textContent()).to.equal('Similar structures');
      expect(await page.locator('ul.structures li').first().textContent()).to.contain('UCI 614');
      expect(await page.locator('ul.structures li').first().textContent()).to.contain('Tanimoto 0.53');
      expect(problems, problems.join('\n')).to.deep.equal([]);
    },
  );

  it("every SMILES of the fixture's molecules reads as whole to the editor's page, so each is drawn as typed", async () => {
    const smiles = gunzipSync(readFileSync(join(fixturesDir, 'chemistry', 'molecules.tsv.gz')))
      .toString('utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.split('\t')[2])
      .filter(Boolean);
    const { page } = await watchedPage();
    await page.goto(`${fixture.api.url}/`);
    // wholeSmiles is the check of chemxref.js, a global of the page.
    const refused = await page.evaluate(`${JSON.stringify(smiles)}.filter((text) => !wholeSmiles(text))`);
    expect(smiles.length).to.be.above(1000);
    expect(refused).to.deep.equal([]);
  });

  it('Back and a reload keep the drawing and its SMILES, typed or drawn by hand', async () => {
    const { page, problems } = await watchedPage();
    await page.goto(`${fixture.api.url}/`);
    await page.waitForSelector('iframe.editor[data-ready="true"]');
    const field = page.getByLabel('SMILES', { exact: true });
    await field.pressSequentially('c1ccc2ncccc2c1');
    // Its nitrogen comes late: what is drawn before (`c`) is not yet quinoline.
    await until(async () => (await drawn(page)).includes('n'), 'the typed SMILES is drawn');
    // Quinoline, in JSME's own words.
    const quinoline = await drawn(page);
    const containing = page.getByRole('button', { name: 'Structures containing it' });
    await Promise.all([page.waitForURL(/mode=substructure/), containing.click()]);
    await page.goBack();
    await page.waitForSelector('iframe.editor[data-ready="true"]');
    await until(async () => (await drawn(page)) === quinoline, 'the drawing is back after Back');
    expect(await field.inputValue()).to.equal('c1ccc2ncccc2c1');
    await page.reload();
    await page.waitForSelector('iframe.editor[data-ready="true"]');
    await until(async () => (await drawn(page)) === quinoline, 'the drawing is back after a reload');
    expect(await field.inputValue()).to.equal('c1ccc2ncccc2c1');

    // Drawn by hand: ethane on an empty canvas, propane with a bond from one of its atoms.
    await field.fill('');
    await until(async () => (await drawn(page)) === '', 'an emptied field empties the editor');
    const canvas = (await page.locator('iframe.editor').boundingBox())!;
    for (let click = 0; click < 2; click += 1)
      await page.mouse.click(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
    await until(async () => (await field.inputValue()) === 'CCC', 'the drawing is in the SMILES field');
    await Promise.all([page.waitForURL(/mode=substructure/), containing.click()]);
    await page.goBack();
    await page.waitForSelector('iframe.editor[data-ready="true"]');
    await until(async () => (await drawn(page)) === 'CCC', 'the hand drawing is back after Back');
    expect(await field.inputValue()).to.equal('CCC');
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('the basic search works with JavaScript off (no copy buttons then)', async () => {
    const { page, problems } = await watchedPage(false);
    await search(page, 'chembl:CHEMBL112');
    expect(await page.locator('h1').textContent()).to.equal('UCI 614');
    expect(await page.locator('button.copy').first().isVisible()).to.equal(false);
    expect(problems).to.deep.equal([]);
  });
});
