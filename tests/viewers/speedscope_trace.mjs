// Imports a Chrome trace into speedscope (the npm package's own page, in headless Chromium, through
// its file input, as a user would) and checks it imports with no console warning: speedscope warns
// for every slice it cannot nest ("Tried to end X when Y was on the top of the stack") and for every
// slice left open. Prints the number of threads (profiles) it shows, which must equal the number of
// threads with slices in the file. Usage: node speedscope_trace.mjs TRACE.json [SCREENSHOT.png]
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {collectComplaints, launch} from './browser.mjs';

const [file, screenshot] = process.argv.slice(2);
if (!file) {
  console.log('usage: node speedscope_trace.mjs TRACE.json [SCREENSHOT.png]');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const index = path.join(here, 'node_modules/speedscope/dist/release/index.html');
const events = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents;
const threads = new Set(events.filter(e => e.ph === 'X').map(e => `${e.pid}:${e.tid}`));

const browser = await launch();
let ok = false;
try {
  const page = await browser.context.newPage();
  const complaints = collectComplaints(page);
  await page.goto(`file://${index}`);
  await page.locator('input[type=file]').setInputFiles(path.resolve(file));
  // The profile selector names the thread shown and "N/M" with M the number of profiles.
  const counter = page.getByText(new RegExp(`^\\(\\d+/${threads.size}\\)$`));
  let shown = 0;
  try {
    await counter.first().waitFor({timeout: 120000});
    shown = threads.size;
  } catch {
    console.log(`no "(1/${threads.size})" profile counter in the page: ${(await page.innerText('body')).slice(0, 300)}`);
  }
  if (screenshot) {
    // Zoomed on the warm-up, as a reader would look at it (ctrl + wheel zooms in speedscope).
    const size = page.viewportSize();
    await page.mouse.move(size.width * 0.005, size.height * 0.5);
    await page.keyboard.down('Control');
    for (let i = 0; i < 4; ++i) await page.mouse.wheel(0, -200);
    await page.keyboard.up('Control');
    await page.screenshot({path: screenshot});
  }
  console.log(`${file}: ${threads.size} threads with slices, ${shown} shown; ${complaints.length} warnings`);
  for (const c of complaints.slice(0, 10)) console.log(`  ${c}`);
  ok = shown === threads.size && complaints.length === 0;
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
