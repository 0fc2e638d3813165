// Headless Debian Chromium through playwright-core, with the flags that keep it off the network and
// out of the user's profile: the one way the tests in this folder start a browser.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {chromium} from 'playwright-core';

export const kChromium = process.env.HETSIM_CHROMIUM || '/usr/bin/chromium';

// A persistent context in a new temporary profile directory; `close()` removes the directory.
export async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hetsim-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: kChromium,
    headless: true,
    viewport: {width: 1600, height: 1000},
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'],
  });
  // Nothing leaves the machine: every request but file:// and data: is refused.
  await context.route(url => !/^(file|data|about|blob):/.test(url.protocol ?? String(url)), route => route.abort());
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, {recursive: true, force: true});
    },
  };
}

// Console warnings and errors, and uncaught page errors, of a page.
export function collectComplaints(page) {
  const complaints = [];
  page.on('console', m => {
    // Chromium's software GL reports its own stalls ("[.WebGL-...] GL Driver Message"): not the page's.
    if (/^\[\.WebGL-/.test(m.text())) return;
    if (m.type() === 'warning' || m.type() === 'error') complaints.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', e => complaints.push(`pageerror: ${e.message}`));
  return complaints;
}
