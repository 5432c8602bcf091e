// The published MCP Apps examples rendered by the inspector in Chromium
// (tests/interop/inspect.rs): server-basic-vanillajs's get-time app and
// server-system-monitor's app, each ready, screenshotted and its pixels
// counted; the vanilla app's link and message shown as the host's
// decisions (never opened); the monitor's app-only poll-system-stats
// called from its app (its stats in the app, the call in the traffic
// view) and absent from the tools a model is offered.
//
// node apps.mjs PAGE_URL SCREENSHOT_DIR: prints the report (lib.mjs).
import {
  Run,
  WAIT_MS,
  api,
  appFrames,
  attributes,
  pixels,
  textUntil,
  waitFor,
  watchNavigations,
} from './lib.mjs';

const run = new Run('apps', 150_000);
const facts = run.report;
const SETTLED = '#app-frame-container:is([data-app-status="ready"], [data-app-status="error"])';

// Opens the app view of `server`'s `tool`; gives its frames once the
// container says ready (or the report says why not).
async function openApp(page, server, tool, args) {
  const url = run.view({ server, tool, view: 'app', args });
  await page.goto(url);
  await waitFor(page, 'body[data-ready="true"]');
  const container = await waitFor(page, SETTLED, 45_000);
  const state = await container.getAttribute('data-app-status');
  if (state !== 'ready') {
    const why = await page.locator('#app-error').textContent({ timeout: 2_000 }).catch(() => '');
    throw new Error(`the app of ${server}/${tool} is ${state}: ${why}`);
  }
  return { url, ...(await appFrames(page)) };
}

run.main(async (context) => {
  const page = await context.newPage();
  const traffic = await context.newPage();
  await traffic.goto(run.view({ view: 'traffic' }));
  await waitFor(traffic, 'body[data-ready="true"]');
  const seen = watchNavigations(context, page);
  facts.navigations = seen;

  // (d) server-basic-vanillajs: get-time's app.
  run.step('vanilla app');
  const vanilla = await openApp(page, 'vanilla', 'get-time', {});
  facts.vanilla = {
    proxyUrl: vanilla.proxy.url(),
    appUrl: vanilla.app.url(),
    serverTime: await textUntil(
      vanilla.app.locator('#server-time'),
      (t) => t.trim() !== '' && t !== 'Loading...',
      'the vanilla app showing the server time',
    ),
    toolResult: await page.locator('#app-tool-result').textContent({ timeout: 2_000 }).catch(() => null),
  };
  const vanillaPng = await run.shot(page.locator('#app-frame-container'), 'app-vanilla');
  facts.vanilla.pixels = await pixels(run, vanillaPng);

  // Its link and its message: shown to the person, never opened.
  run.step('vanilla app: open-link and message');
  await vanilla.app.locator('#open-link-btn').click();
  await waitFor(page, 'ul#app-decisions li[data-kind="open-link"]');
  await vanilla.app.locator('#send-message-btn').click();
  await waitFor(page, 'ul#app-decisions li[data-kind="message"]');
  facts.vanilla.decisions = {
    kinds: await attributes(page, 'ul#app-decisions li', 'data-kind'),
    openLink: await page.locator('ul#app-decisions li[data-kind="open-link"]').first().textContent(),
    message: await page.locator('ul#app-decisions li[data-kind="message"]').first().textContent(),
  };
  await run.shot(page, 'app-vanilla-decisions');
  facts.vanilla.topUrlUnchanged = page.url() === vanilla.url;

  // (d) server-system-monitor: get-system-info's app, which then polls
  // poll-system-stats (app only) every 2 s.
  run.step('monitor app');
  const monitor = await openApp(page, 'monitor', 'get-system-info', {});
  facts.monitor = {
    appUrl: monitor.app.url(),
    hostname: await textUntil(monitor.app.locator('#info-hostname'), (t) => t.trim() !== '--', 'the hostname'),
    // Only a poll-system-stats result fills these in.
    memory: await textUntil(
      monitor.app.locator('#memory-percent'),
      (t) => /^\d+(\.\d+)?%$/.test(t.trim()),
      'the monitor app showing memory stats from poll-system-stats',
    ),
    uptime: await textUntil(monitor.app.locator('#info-uptime'), (t) => t.trim() !== '--', 'the uptime'),
    status: await monitor.app.locator('#status-text').textContent(),
  };
  const monitorPng = await run.shot(page.locator('#app-frame-container'), 'app-monitor');
  facts.monitor.pixels = await pixels(run, monitorPng);

  run.step('monitor app: poll-system-stats in the traffic view');
  const polled = traffic.locator('ul#traffic li[data-direction="out"]', { hasText: 'poll-system-stats' });
  await polled.first().waitFor({ state: 'attached', timeout: WAIT_MS });
  facts.monitor.pollsSent = await polled.count();
  facts.monitor.pollText = (await polled.first().textContent()).slice(0, 500);
  await run.shot(traffic, 'traffic-monitor');
  facts.monitor.topUrlUnchanged = page.url() === monitor.url;
  // The tools a model is offered, on the same page as the app that polls.
  await waitFor(page, 'ul#model-tools li[data-model-name]');
  facts.monitor.modelToolsBesideTheApp = await attributes(page, 'ul#model-tools li[data-model-name]', 'data-model-name');

  // The tools a model is offered: the page's model view and the API.
  run.step('model view');
  await page.goto(run.view({ view: 'model' }));
  await waitFor(page, 'body[data-ready="true"]');
  await waitFor(page, 'ul#model-tools li[data-model-name]');
  facts.modelTools = await attributes(page, 'ul#model-tools li[data-model-name]', 'data-model-name');
  await run.shot(page, 'model');
  const model = await api(run, '/api/model-tools');
  facts.apiModelTools = {
    status: model.status,
    names: ((model.body && model.body.tools) || []).map((t) => t.modelName),
  };
});
