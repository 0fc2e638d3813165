// Loads a Chrome trace into the Chrome DevTools Performance panel's trace engine
// (@paulirish/trace_engine, the panel's model as an npm package) and checks that it draws all of it:
// no console warning or error while parsing, every complete (X) slice kept in its thread's tree (the
// engine drops slices that partially overlap another on their thread), and every flow arrow bound to
// two slices (the engine binds a flow end to the slice with the same ts, pid, tid and category).
// Usage: node devtools_trace.mjs TRACE.json   (exit 0 when all holds; prints counts)
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine';

const file = process.argv[2];
if (!file) {
  console.log('usage: node devtools_trace.mjs TRACE.json');
  process.exit(2);
}
// The engine uses DOMRect, which node lacks.
globalThis.DOMRect = class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) { Object.assign(this, {x, y, width, height}); }
  static fromRect(r = {}) { return new DOMRect(r.x, r.y, r.width, r.height); }
};
const complaints = [];
for (const level of ['warn', 'error']) {
  console[level] = (...args) => complaints.push(`${level}: ${args.join(' ')}`);
}

const json = JSON.parse(fs.readFileSync(file, 'utf8'));
const events = json.traceEvents ?? json;
const slices = events.filter(e => e.ph === 'X');
const arrowsIn = events.filter(e => e.ph === 's').length;

const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const parsed = model.parsedTrace().data;
let kept = 0;
for (const [entry] of parsed.Renderer.entryToNode) {
  if (entry.ph === 'X') ++kept;
}
const flows = parsed.Flows.flows;
const bound = flows.filter(f => f.length === 2 && f.every(e => e.ph === 'X')).length;

console.log(`${file}: ${slices.length} slices, ${kept} kept; ${arrowsIn} arrows, ${bound} bound; ` +
            `${complaints.length} warnings`);
for (const c of complaints.slice(0, 10)) console.log(`  ${c}`);
const ok = complaints.length === 0 && kept === slices.length && bound === arrowsIn && flows.length === arrowsIn;
process.exit(ok ? 0 : 1);
