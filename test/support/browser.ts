/** The hooks of the browser tests: the API on the fixture and a headless Chromium (scripts/browser.ts). */
import type { Browser } from 'playwright-core';
import { findChromium, launchChromium } from '../../scripts/browser';
import { startApi, type RunningApi } from './api';
import { fixturePrefix, testConfig } from './fixture';

export { findChromium, launchChromium };

/**
 * The hooks of a browser test file: the API on the fixture and a Chromium, both started before its
 * tests and closed after them. Read them through the returned object once the tests run.
 */
export function browserOnFixture(): { readonly api: RunningApi; readonly browser: Browser } {
  let api: RunningApi | undefined;
  let browser: Browser | undefined;
  before(async () => {
    api = await startApi(testConfig(await fixturePrefix()));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await api?.stop();
  });
  return {
    get api() {
      return api!;
    },
    get browser() {
      return browser!;
    },
  };
}
