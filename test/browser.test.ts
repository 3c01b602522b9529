import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { browserOnFixture } from './support/browser';

describe('the interactive docs page in a real browser', function () {
  this.timeout(180_000);
  const fixture = browserOnFixture();

  /** A new page that collects every Content-Security-Policy violation it meets. */
  async function watchedPage(): Promise<{ page: Page; violations: string[] }> {
    const page = await fixture.browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.exposeFunction('reportViolation', (text: string) => {
      violations.push(text);
    });
    // Page code, as text: the tests are compiled without the DOM's types.
    await page.addInitScript({
      content:
        "document.addEventListener('securitypolicyviolation', (e) => " +
        'window.reportViolation(`${e.violatedDirective}: ${e.blockedURI} ${e.sample}`));',
    });
    return { page, violations };
  }

  it(
    '"Try it out" on POST /compounds finds paracetamol in ChEMBL ' +
      '(CHEMBL112) and NCI/DTP (3991), without a Content-Security-Policy violation',
    async () => {
      const { page, violations } = await watchedPage();
      await page.goto(`${fixture.api.url}/api/docs/`);
      const operation = page.locator('#operations-compounds-postCompounds');
      await operation.locator('.opblock-summary').click();
      // The page opens operations ready to try (tryItOutEnabled); click "Try it out" only if it is offered.
      const tryItOut = operation.locator('button.try-out__btn', { hasText: 'Try it out' });
      if (await tryItOut.count()) await tryItOut.click();
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/v1/compounds') && r.request().method() === 'POST'),
        operation.locator('button.execute').click(),
      ]);
      expect(response.status()).to.equal(200);
      const body = await response.json();
      expect(body.compounds[0].standardInchiKey).to.equal('RZVAJINKPMORJF-UHFFFAOYSA-N');
      const table = operation.locator('.live-responses-table');
      await table.locator('.response-col_status').first().waitFor();
      const shown = await table.innerText();
      expect(shown).to.contain('200');
      expect(shown).to.contain('CHEMBL112');
      expect(shown).to.contain('3991');
      // The sprite sheet the page hides with an inline style is hidden: its style attribute was allowed.
      expect(await page.evaluate("getComputedStyle(document.querySelector('body > svg')).position")).to.equal(
        'absolute',
      );
      expect(violations).to.deep.equal([]);
    },
  );

  it('the home page links to the docs, without a Content-Security-Policy violation', async () => {
    const { page, violations } = await watchedPage();
    await page.goto(`${fixture.api.url}/`);
    await page.locator('a[href="/api/docs"]').click();
    await page.locator('#operations-compounds-postCompounds').waitFor();
    expect(violations).to.deep.equal([]);
  });

  it('the docs page credits the data licences', async () => {
    const page = await fixture.browser.newPage();
    await page.goto(`${fixture.api.url}/api/docs/`);
    await page.locator('.information-container').waitFor();
    expect(await page.locator('.information-container').innerText()).to.contain('CC BY-SA 3.0');
  });
});
