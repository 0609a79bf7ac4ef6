// Loads an HTML file in Debian's headless Chromium (playwright-core, no
// downloaded browser), prints what the page did as JSON on stdout: console
// errors, page errors, requests other than the file itself, the number of
// rendered <svg> elements, the text of elements matching a selector, the
// headline figures (label, note, estimate and its tooltip), and the
// rendered geometry of the per-warp heat map (its plot area, each row's
// band, each row tick's position, in CSS pixels); and takes a screenshot.
// Used by cmd/replay/report_test.go.
//
//   node tools/browser/check.mjs PAGE.html SHOT.png [SELECTOR]
//
// CHROMIUM overrides the browser's path (default /usr/bin/chromium);
// SHOT_MAX_HEIGHT crops the screenshot to that many pixels from the top.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [page_, shot, selector = '.num .value'] = process.argv.slice(2);
if (!page_ || !shot) {
  console.error('usage: node check.mjs PAGE.html SHOT.png [SELECTOR]');
  process.exit(2);
}
const userDataDir = mkdtempSync(join(tmpdir(), 'replay-chromium-'));
const ctx = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1100, height: 900 },
  deviceScaleFactor: 1,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const out = { consoleErrors: [], pageErrors: [], requests: [], svgs: 0, texts: [] };
try {
  const page = ctx.pages()[0] ?? await ctx.newPage();
  const url = pathToFileURL(resolve(page_)).href;
  page.on('console', (m) => { if (m.type() === 'error') out.consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => out.pageErrors.push(String(e)));
  page.on('request', (r) => { if (r.url() !== url && !r.url().startsWith('data:')) out.requests.push(r.url()); });
  await page.goto(url, { waitUntil: 'load' });
  // An SVG counts as rendered when the browser laid it out with a size.
  out.svgs = await page.$$eval('svg', (els) => els.filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width > 50 && r.height > 50 && e.querySelector('path, rect, text, image') !== null;
  }).length);
  out.texts = await page.$$eval(selector, (els) => els.map((e) => e.textContent.trim()));
  out.title = await page.title();
  out.numbers = await page.$$eval('.num', (els) => els.map((e) => {
    const a = e.querySelector('.approx');
    return {
      label: e.querySelector('.label')?.textContent ?? '',
      value: e.querySelector('.value')?.textContent ?? '',
      note: e.querySelector('.note')?.textContent ?? '',
      approx: a?.textContent ?? '',
      why: a?.getAttribute('title') ?? '',
    };
  }));
  // The heat map as drawn: null when the page has none (or draws it
  // otherwise than as rows of rectangles).
  out.heat = await page.evaluate(() => {
    const svg = document.querySelector('#activity svg');
    const area = svg?.querySelector('rect.area');
    if (!svg || !area) return null;
    const box = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
    return {
      area: box(area),
      rows: [...svg.querySelectorAll('g.hrow')].map((g) => ({ row: Number(g.dataset.row), cells: g.childElementCount, ...box(g) })),
      ticks: [...svg.querySelectorAll('g.ytick')].map((g) => {
        const b = box(g.querySelector('line'));
        return { row: Number(g.dataset.row), y: (b.top + b.bottom) / 2, label: g.textContent.trim() };
      }),
      images: svg.querySelectorAll('image').length,
    };
  });
  // SHOT_MAX_HEIGHT (CSS pixels) crops the full-page screenshot from the top.
  const maxH = Number(process.env.SHOT_MAX_HEIGHT || 0);
  const fullH = await page.evaluate(() => document.documentElement.scrollHeight);
  const opts = { path: shot, fullPage: true };
  if (maxH > 0 && fullH > maxH) opts.clip = { x: 0, y: 0, width: 1100, height: maxH };
  await page.screenshot(opts);
} finally {
  await ctx.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
