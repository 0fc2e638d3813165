// Opens an HTML report of `hetsim run --html` in headless Chromium and checks what a reader sees:
// no console warning or error, one schedule row per stage, one forward and one backward block per
// stage and microbatch (counts from the run's report JSON), hover titles on the blocks, and a wheel
// zoom that widens the blocks. Writes a full-page screenshot.
// Usage: node report_browser.mjs REPORT.html REPORT.json SCREENSHOT.png
import fs from 'node:fs';
import path from 'node:path';
import {collectComplaints, launch} from './browser.mjs';

const [html, reportJson, screenshot] = process.argv.slice(2);
if (!screenshot) {
  console.log('usage: node report_browser.mjs REPORT.html REPORT.json SCREENSHOT.png');
  process.exit(2);
}
const report = JSON.parse(fs.readFileSync(reportJson, 'utf8'));
const stages = report.num_stages, microbatches = report.num_microbatches;
const problems = [];
const browser = await launch();
try {
  const page = await browser.context.newPage();
  const complaints = collectComplaints(page);
  await page.goto(`file://${path.resolve(html)}`);
  await page.waitForLoadState('load');
  const counts = await page.evaluate(() => ({
    rows: document.querySelectorAll('#gantt g.stage').length,
    forwards: document.querySelectorAll('#gantt rect.F').length,
    backwards: document.querySelectorAll('#gantt rect.B').length,
    titled: document.querySelectorAll('#gantt rect.F > title').length,
    charts: document.querySelectorAll('svg.chart').length,
    width: +document.querySelector('#gantt rect.F').getAttribute('width'),
  }));
  // Zoom in around the middle of the schedule: blocks must get wider.
  const box = await page.locator('#gantt').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  for (let i = 0; i < 5; ++i) await page.mouse.wheel(0, -400);
  const zoomed = await page.evaluate(() => Math.max(...[...document.querySelectorAll('#gantt rect.F')]
                                                      .map(e => +e.getAttribute('width'))));
  await page.dblclick('#gantt');
  await page.screenshot({path: screenshot, fullPage: true});
  console.log(`${html}: ${JSON.stringify(counts)}, widest forward after zoom ${zoomed}; ` +
              `${complaints.length} console messages`);
  for (const c of complaints) problems.push(c);
  if (counts.rows !== stages) problems.push(`${counts.rows} stage rows, expected ${stages}`);
  if (counts.forwards !== stages * microbatches) problems.push(`${counts.forwards} forwards, expected ${stages * microbatches}`);
  if (counts.backwards !== stages * microbatches) problems.push(`${counts.backwards} backwards, expected ${stages * microbatches}`);
  if (counts.titled !== counts.forwards) problems.push('forward blocks without a hover title');
  if (counts.charts < stages + 1) problems.push(`${counts.charts} charts: expected memory per stage and links`);
  if (!(zoomed > counts.width * 2)) problems.push(`zoom did not widen the blocks (${counts.width} -> ${zoomed})`);
} finally {
  await browser.close();
}
for (const p of problems) console.log(`  ${p}`);
process.exit(problems.length ? 1 : 0);
