/**
 * The Chromium the browser tests drive: CHROMIUM_PATH when set, else the system's (Debian's
 * chromium), else the headless Chromium that the @sparticuz/chromium dev dependency ships inside its
 * npm tarball (unpacked under the OS temp folder on first use), so `npm ci && npm test` needs no
 * browser installed. CHROMIUM_PATH=bundled picks the bundled one even beside a system Chromium.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const systemChromiums = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const flags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where the Chromium comes from and its executable. */
export async function findChromium(): Promise<{ executablePath: string; args: string[]; origin: string }> {
  const asked = process.env.CHROMIUM_PATH;
  if (asked && asked !== 'bundled') {
    if (!existsSync(asked)) throw new Error(`CHROMIUM_PATH is ${asked}, which does not exist`);
    return { executablePath: asked, args: flags, origin: 'CHROMIUM_PATH' };
  }
  const system = asked === 'bundled' ? undefined : systemChromiums.find((path) => existsSync(path));
  if (system) return { executablePath: system, args: flags, origin: 'system' };
  const { default: bundled } = await import('@sparticuz/chromium');
  bundled.setGraphicsMode = false;
  return {
    executablePath: await bundled.executablePath(),
    args: [...new Set([...bundled.args, ...flags])],
    origin: '@sparticuz/chromium',
  };
}

/** A headless Chromium for a test file. */
export async function launchChromium(): Promise<Browser> {
  const found = await findChromium();
  return chromium.launch({ executablePath: found.executablePath, args: found.args });
}
