import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { browserOnFixture, findChromium } from './support/browser';
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
 * Run in the page: the width of main's content, of the first list of structures, how far the right
 * edge of its last column is from its own, and the box of each of the first ten thumbnails with its
 * cell's width and how it fits its picture.
 */
const thumbnailLayout = `(() => {
  const main = document.querySelector('main');
  const padding = parseFloat(getComputedStyle(main).paddingLeft) + parseFloat(getComputedStyle(main).paddingRight);
  const list = document.querySelector('ul.structures').getBoundingClientRect();
  const items = [...document.querySelectorAll('ul.structures li')].map((li) => li.getBoundingClientRect());
  return {
    window: document.documentElement.clientWidth,
    content: main.clientWidth - padding,
    list: list.width,
    gapAfterLastColumn: list.right - Math.max(...items.map((item) => item.right)),
    thumbnails: [...document.querySelectorAll('img.thumb')].slice(0, 10).map((img) => ({
      width: img.getBoundingClientRect().width,
      height: img.getBoundingClientRect().height,
      cell: img.closest('li').getBoundingClientRect().width,
      fit: getComputedStyle(img).objectFit,
    })),
  };
})()`;

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

  it(
    'a list of structures fills a 1440 px window: thumbnails fill their cells, over 200 px wide, each ' +
      'molecule scaled to its box undistorted',
    async () => {
      // Left open, as watchedPage's are (below).
      const context = await fixture.browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${fixture.api.url}/search?q=c1ccccc1&mode=substructure`);
      await until(
        async () =>
          (await page.evaluate(
            '[...document.images].slice(0, 10).every((image) => image.complete && image.naturalWidth > 0)',
          )) as boolean,
        'the first thumbnails are drawn',
      );
      const layout = (await page.evaluate(thumbnailLayout)) as {
        window: number;
        content: number;
        list: number;
        gapAfterLastColumn: number;
        thumbnails: { width: number; height: number; cell: number; fit: string }[];
      };
      expect(layout.content, 'the page spans the window, less its padding').to.be.closeTo(layout.window - 32, 1);
      expect(layout.list).to.be.closeTo(layout.content, 1);
      expect(layout.gapAfterLastColumn, 'the columns reach the right edge').to.be.closeTo(0, 1);
      expect(layout.thumbnails).to.have.length(10);
      for (const thumbnail of layout.thumbnails) {
        expect(thumbnail.width).to.be.closeTo(thumbnail.cell, 1).and.above(200);
        expect(thumbnail.height).to.be.closeTo((thumbnail.width * 3) / 4, 1);
        expect(thumbnail.fit).to.equal('contain');
      }
    },
  );

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

  it('a SMILES typed beside the editor is drawn in it, and searches its similar structures', async () => {
    const { page, problems } = await watchedPage();
    await page.goto(`${fixture.api.url}/`);
    await page.waitForSelector('iframe.editor[data-ready="true"]');
    await page.getByLabel('SMILES', { exact: true }).fill('CC(=O)Nc1ccc(OCC)cc1');
    await page.getByLabel('SMILES', { exact: true }).dispatchEvent('change');
    // What JSME holds, as its own SMILES (the frame's policy lets a test evaluate text there).
    const frame = page.frames().find((candidate) => candidate.url().endsWith('/editor'))!;
    await until(
      async () => (await frame.evaluate('window.chemxrefEditor.smiles()')) === 'CCOc1ccc(NC(C)=O)cc1',
      'the typed SMILES is drawn',
    );
    await page.getByLabel('similar at Tanimoto').fill('0.4');
    await Promise.all([
      page.waitForURL(/mode=similar/),
      page.getByRole('button', { name: 'Similar structures' }).click(),
    ]);
    expect(await page.locator('h1').textContent()).to.equal('Similar structures');
    expect(await page.locator('ul.structures li').first().textContent()).to.contain('UCI 614');
    expect(await page.locator('ul.structures li').first().textContent()).to.contain('Tanimoto 0.53');
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
