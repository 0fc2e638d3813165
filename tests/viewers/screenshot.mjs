// A screenshot of an HTML report as a reader sees it at 1600 x 1000, for docs/report.md
// (scripts/report_screenshots.sh). With --gantt X STEPS: only the schedule, after STEPS wheel steps
// of zoom at X (0..1 of its width). Exits 1 on any console warning or error.
// Usage: node screenshot.mjs PAGE.html OUT.png [--gantt X STEPS]
import path from 'node:path';
import {collectComplaints, launch} from './browser.mjs';

const [html, out, flag, x, steps] = process.argv.slice(2);
if (!out) {
  console.log('usage: node screenshot.mjs PAGE.html OUT.png [--gantt X STEPS]');
  process.exit(2);
}
const browser = await launch();
let complaints = [];
try {
  const page = await browser.context.newPage();
  complaints = collectComplaints(page);
  await page.goto(`file://${path.resolve(html)}`);
  if (flag === '--gantt') {
    const gantt = page.locator('#gantt');
    const box = await gantt.boundingBox();
    await page.mouse.move(box.x + box.width * Number(x), box.y + box.height / 2);
    for (let i = 0; i < Number(steps); ++i) await page.mouse.wheel(0, -300);
    await page.mouse.move(0, 0);
    await gantt.screenshot({path: out});
  } else {
    await page.screenshot({path: out, fullPage: true});
  }
} finally {
  await browser.close();
}
for (const c of complaints) console.log(c);
process.exit(complaints.length ? 1 : 0);
