// What the browser scripts of tests/interop/inspect.rs share: Chromium
// through playwright-core, bounded waits, screenshots, and the one JSON
// line each script prints for the Rust test to assert on.
//
// A script is run as `node SCRIPT.mjs PAGE_URL SCREENSHOT_DIR [MORE...]`
// with MCP_PLAYWRIGHT_DIR (the playwright-core package folder) and
// MCP_CHROMIUM (the browser) set. It prints, last on stdout, one line of
// JSON: `{"script", "ok", "error"?, "steps", "screenshots", ...facts}`,
// and exits 0 when ok, 1 when a step failed, 3 when its watchdog fired.
// Progress goes to stderr.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

function required(name) {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`${name} is not set: run through scripts/interop.sh\n`);
    process.exit(2);
  }
  return value;
}

const { chromium } = require(required('MCP_PLAYWRIGHT_DIR'));

// The flags every launch gets: headless, no sandbox (a container), and no
// background connections of Chromium's own (refused here, and slow).
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// The longest any one wait of a script may take.
export const WAIT_MS = 30_000;

// Resolves when `promise` does, or rejects after `ms` naming `what`.
export function bounded(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class Run {
  // `name`: the script's name (its screenshots are prefixed with it);
  // `limitMs`: its watchdog, after which it prints what it has and exits 3.
  constructor(name, limitMs) {
    const [url, shots, ...rest] = process.argv.slice(2);
    if (!url || !shots) {
      process.stderr.write(`usage: node ${name}.mjs PAGE_URL SCREENSHOT_DIR\n`);
      process.exit(2);
    }
    this.name = name;
    this.started = Date.now();
    this.page0 = new URL(url);
    this.token = this.page0.searchParams.get('token');
    this.origin = this.page0.origin;
    this.shots = shots;
    this.rest = rest;
    this.report = { script: name, ok: false, steps: [], screenshots: [] };
    this.printed = false;
    mkdirSync(shots, { recursive: true });
    const watchdog = setTimeout(() => {
      this.report.error = `watchdog: the script ran over ${limitMs} ms (last step: ${this.report.steps.at(-1)})`;
      this.print();
      process.exit(3);
    }, limitMs);
    watchdog.unref();
  }

  // A URL of the inspector with the token and `params` (values that are
  // not strings are sent as JSON).
  view(params = {}) {
    const url = new URL('/', this.origin);
    url.searchParams.set('token', this.token);
    for (const [key, value] of Object.entries(params)) {
      url.searchParams.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    }
    return url.toString();
  }

  step(text) {
    const line = `${((Date.now() - this.started) / 1000).toFixed(1)}s ${text}`;
    this.report.steps.push(line);
    process.stderr.write(`[${this.name}] ${line}\n`);
  }

  // Saves a screenshot of `target` (a page or a locator) as
  // SCREENSHOT_DIR/<script>-<file>.png; gives its bytes.
  async shot(target, file) {
    const path = join(this.shots, `${this.name}-${file}.png`);
    const png = await target.screenshot({ path, timeout: WAIT_MS });
    this.report.screenshots.push(path);
    return png;
  }

  print() {
    if (this.printed) return;
    this.printed = true;
    process.stdout.write(`${JSON.stringify(this.report)}\n`);
  }

  // Launches Chromium (a fresh temporary profile of playwright's), runs
  // `body(context)`, and prints the report whatever happens.
  async main(body) {
    let browser;
    let context;
    let code = 1;
    try {
      this.step('launch chromium');
      browser = await chromium.launch({
        executablePath: required('MCP_CHROMIUM'),
        args: CHROMIUM_ARGS,
        timeout: WAIT_MS,
      });
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      // A context of its own for decoding screenshots: its pages are no
      // popups of the pages under test.
      this.scratch = await browser.newContext();
      context.setDefaultTimeout(WAIT_MS);
      context.setDefaultNavigationTimeout(WAIT_MS);
      await body(context);
      this.report.ok = true;
      code = 0;
    } catch (error) {
      this.report.error = String((error && error.stack) || error).slice(0, 4000);
      this.step(`failed: ${String(error && error.message).split('\n')[0]}`);
      for (const [i, page] of (context ? context.pages() : []).entries()) {
        try {
          await bounded(this.shot(page, `failure-${i}`), 10_000, 'failure screenshot');
        } catch {
          // The report says what failed; the screenshot is a help.
        }
      }
    }
    try {
      if (browser) await bounded(browser.close(), 10_000, 'closing chromium');
    } catch (error) {
      this.report.closeError = String(error);
    }
    this.print();
    process.exit(code);
  }
}

// Waits until `selector` is attached in `page` (or frame).
export async function waitFor(page, selector, ms = WAIT_MS) {
  await page.locator(selector).first().waitFor({ state: 'attached', timeout: ms });
  return page.locator(selector).first();
}

// Polls `locator`'s text (bounded) until `accept(text)`; gives the text.
export async function textUntil(locator, accept, what, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  let text = null;
  while (Date.now() < deadline) {
    text = await locator.textContent({ timeout: Math.max(1, deadline - Date.now()) }).catch(() => null);
    if (text !== null && accept(text)) return text;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not seen in ${ms} ms (last text: ${JSON.stringify(text && text.slice(0, 500))})`);
}

// The frame of the iframe `selector` in `frame` (cross-origin too), once
// it exists and has loaded something (bounded).
export async function childFrame(frame, selector, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const handle = await frame.$(selector).catch(() => null);
    const child = handle && (await handle.contentFrame().catch(() => null));
    if (child && child.url() && child.url() !== 'about:blank') return child;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no frame ${selector} with a document in ${ms} ms`);
}

// The app's frame of an app view: iframe#app-frame (the sandbox proxy, on
// the sandbox origin), then its iframe#app (the app). Gives both.
export async function appFrames(page, ms = WAIT_MS) {
  const proxy = await childFrame(page, 'iframe#app-frame', ms);
  const app = await childFrame(proxy, 'iframe#app', ms);
  return { proxy, app };
}

// What a PNG's pixels show, decoded by the browser in a blank page of its
// own (no page's policy in the way), in `run`'s scratch context: its size,
// how many distinct colours (5 bits a channel), and the share of pixels
// not of its commonest colour.
export async function pixels(run, png) {
  const page = await run.scratch.newPage();
  try {
    return await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.width;
      canvas.height = img.height;
      const g = canvas.getContext('2d');
      g.drawImage(img, 0, 0);
      const data = g.getImageData(0, 0, canvas.width, canvas.height).data;
      const counts = new Map();
      for (let i = 0; i < data.length; i += 4) {
        const key = ((data[i] >> 3) << 10) | ((data[i + 1] >> 3) << 5) | (data[i + 2] >> 3);
        counts.set(key, (counts.get(key) || 0) + 1);
      }
      let commonest = 0;
      for (const n of counts.values()) commonest = Math.max(commonest, n);
      const total = data.length / 4;
      return {
        width: canvas.width,
        height: canvas.height,
        colours: counts.size,
        nonBackground: total ? (total - commonest) / total : 0,
      };
    }, png.toString('base64'));
  } finally {
    await page.close();
  }
}

// The HTTP status of a GET of `url` from Node (no browser), bounded.
export async function status(url, headers = {}) {
  const response = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(WAIT_MS) });
  await response.arrayBuffer().catch(() => null);
  return response.status;
}

// A GET of the inspector's API with the token header, as JSON (bounded).
export async function api(run, path) {
  const response = await fetch(new URL(path, run.origin), {
    headers: { 'X-Mcp-Inspect-Token': run.token },
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const text = await response.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text.slice(0, 500);
  }
  return { status: response.status, body };
}

// The texts of the elements `selector` matches, now.
export async function texts(page, selector) {
  return page.locator(selector).allTextContents();
}

// The values of attribute `name` of the elements `selector` matches, now.
export async function attributes(page, selector, name) {
  const all = await page.locator(selector).all();
  const values = [];
  for (const element of all) values.push(await element.getAttribute(name, { timeout: WAIT_MS }));
  return values;
}

// Every navigation of `page`'s top frame and every page the context opens
// (a popup), recorded from now on.
export function watchNavigations(context, page) {
  const seen = { topNavigations: [], popups: [] };
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) seen.topNavigations.push(frame.url());
  });
  context.on('page', (opened) => seen.popups.push(opened.url()));
  return seen;
}
