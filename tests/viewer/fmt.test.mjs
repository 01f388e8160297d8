// fmt.test.mjs — the viewer's number texts (viewer/fmt.js), run by node
// without a browser: durations in the unit that fits them with three
// significant digits (never "0.0001 ms"), numbers by their site's unit
// (bytes, ns, ms, percent, plain) and nothing guessed from a name. The same
// rules as src/analyze/units.c (tests/test_units_format.c).
//
// viewer/ is plain ES modules without a package.json of its own, so the
// module is copied to a temporary .mjs and imported from there.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'strobe-fmt-'));
let failed = 0;
try {
  copyFileSync(join(here, '..', '..', 'viewer', 'fmt.js'), join(dir, 'fmt.mjs'));
  const fmt = await import(pathToFileURL(join(dir, 'fmt.mjs')).href);
  const eq = (got, want, what) => {
    if (got !== want) {
      console.error(`FAIL ${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
      failed++;
    }
  };
  const durations = [
    [712, '712 ns'], [5, '5 ns'], [0, '0 ns'], [0.27, '0.27 ns'], [19.5, '19.5 ns'], [100, '100 ns'],
    [1000, '1.00 µs'], [14200, '14.2 µs'], [999600, '1.00 ms'], [3.1e6, '3.10 ms'], [250.272e6, '250 ms'],
    [1.25e9, '1.25 s'], [-3.1e6, '-3.10 ms'], [NaN, '—'], [null, '—'],
  ];
  for (const [ns, want] of durations) eq(fmt.dur(ns), want, `dur(${ns})`);
  eq(fmt.signedDur(-3.1e6), '−3.10 ms', 'signedDur');
  const units = [
    [512, 'bytes', '512 B'], [1536, 'bytes', '1.50 KiB'], [3.2 * 1024 * 1024, 'bytes', '3.20 MiB'],
    [1023.9 * 1024, 'bytes', '1.00 MiB'], [712, 'ns', '712 ns'], [14200, 'ns', '14.2 µs'], [3.1, 'ms', '3.10 ms'],
    [0.0001, 'ms', '100 ns'], [99.5, 'percent', '99.5%'], [100, 'percent', '100%'], [42, 'count', '42'],
    [1536, 'none', '1,536'], [1536, null, '1,536'], [0.25, 'none', '0.2500'],
  ];
  for (const [v, u, want] of units) eq(fmt.unit(v, u), want, `unit(${v}, ${u})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failed) {
  console.error(`${failed} failed`);
  process.exit(1);
}
console.log('fmt.test.mjs: ok');
