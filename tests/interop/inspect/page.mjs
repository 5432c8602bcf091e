// The inspector's page in Chromium (tests/interop/inspect.rs): the token
// it needs, the servers it shows, a tool called through its form, an
// elicitation answered in it, and its traffic and events views.
//
// node page.mjs PAGE_URL SCREENSHOT_DIR: prints the report (lib.mjs).
import { Run, WAIT_MS, api, attributes, status, textUntil, waitFor } from './lib.mjs';

const SERVERS = ['everything', 'vanilla', 'monitor', 'hostile'];
// The tool result once its call is over, whichever way.
const RESULT_DONE = '#tool-result:is([data-status="ok"], [data-status="tool-error"], [data-status="error"])';
const run = new Run('page', 150_000);
const facts = run.report;

// The result of the form's call once it is no longer pending.
async function callThroughTheForm(page) {
  await page.locator('button#tool-call').click();
  const result = await waitFor(page, RESULT_DONE);
  return {
    status: await result.getAttribute('data-status'),
    text: await result.textContent(),
    blocks: await attributes(page, '#tool-result div.content-block', 'data-type'),
  };
}

async function openTool(page, server, tool, extra = {}) {
  await page.goto(run.view({ server, tool, ...extra }));
  await waitFor(page, 'body[data-ready="true"]');
  return waitFor(page, `form#tool-form[data-server="${server}"][data-tool="${tool}"]`);
}

run.main(async (context) => {
  // (a) No token, a wrong token: 401, from Node and in the browser.
  run.step('statuses without the token');
  const wrong = run.token.replace(/^./, (c) => (c === '0' ? '1' : '0'));
  const bare = new URL('/', run.origin).toString();
  facts.statuses = {
    noToken: await status(bare),
    wrongToken: await status(run.view().replace(run.token, wrong)),
    apiNoToken: await status(new URL('/api/servers', run.origin).toString()),
    apiWrongHeader: await status(new URL('/api/servers', run.origin).toString(), { 'X-Mcp-Inspect-Token': wrong }),
    withToken: await status(run.view()),
  };
  const page = await context.newPage();
  facts.statuses.browserNoToken = (await page.goto(bare)).status();
  facts.statuses.browserWrongToken = (await page.goto(run.view().replace(run.token, wrong))).status();

  // The servers view, once every server is ready.
  run.step('servers view');
  const response = await page.goto(run.view());
  facts.statuses.browserWithToken = response.status();
  await waitFor(page, 'body[data-ready="true"]');
  facts.servedView = await page.locator('body').getAttribute('data-view');
  for (const server of SERVERS) {
    await waitFor(page, `table#servers tr[data-server="${server}"][data-state="ready"]`, 60_000);
  }
  facts.servers = {};
  for (const row of await page.locator('table#servers tr[data-server]').all()) {
    facts.servers[await row.getAttribute('data-server')] = await row.getAttribute('data-state');
  }
  await run.shot(page, 'servers');

  // The traffic and events views, open while the calls below are made.
  const traffic = await context.newPage();
  await traffic.goto(run.view({ view: 'traffic' }));
  await waitFor(traffic, 'body[data-ready="true"]');
  const events = await context.newPage();
  await events.goto(run.view({ view: 'events' }));
  await waitFor(events, 'body[data-ready="true"]');

  // (b) echo through its form.
  run.step('echo through its form');
  await openTool(page, 'everything', 'echo');
  const field = page.locator('form#tool-form [name="message"]');
  if ((await field.count()) > 0) {
    facts.echoFilled = 'field';
    await field.first().fill('hello from the browser');
  } else {
    facts.echoFilled = 'textarea';
    await page.locator('textarea#tool-args').fill(JSON.stringify({ message: 'hello from the browser' }));
  }
  facts.echo = await callThroughTheForm(page);
  await run.shot(page, 'tool-echo');

  // A form filled from the URL's args.
  run.step('get-sum with args from the URL');
  await openTool(page, 'everything', 'get-sum', { args: { a: 2, b: 3 } });
  facts.sumArgs = await page.locator('textarea#tool-args').inputValue().catch(() => null);
  facts.sum = await callThroughTheForm(page);
  await run.shot(page, 'tool-get-sum');

  // The echo went out and came back on the traffic view; events were shown.
  run.step('traffic and events views');
  await traffic
    .locator('ul#traffic li[data-direction="out"]', { hasText: 'hello from the browser' })
    .first()
    .waitFor({ state: 'attached', timeout: WAIT_MS });
  await traffic
    .locator('ul#traffic li[data-direction="in"]', { hasText: 'Echo: hello from the browser' })
    .first()
    .waitFor({ state: 'attached', timeout: WAIT_MS });
  facts.traffic = {
    out: await traffic.locator('ul#traffic li[data-direction="out"]').count(),
    in: await traffic.locator('ul#traffic li[data-direction="in"]').count(),
    echoOut: await traffic.locator('ul#traffic li[data-direction="out"]', { hasText: 'hello from the browser' }).count(),
  };
  await run.shot(traffic, 'traffic');

  // (c) an elicitation answered in the page, then one declined.
  run.step('elicitation: accept');
  await openTool(page, 'everything', 'trigger-elicitation-request');
  await page.locator('button#tool-call').click();
  const dialog = await waitFor(page, 'form#elicitation');
  facts.elicitation = {
    id: await dialog.getAttribute('data-elicitation-id'),
    fields: await attributes(page, 'form#elicitation [name]', 'name'),
  };
  await page.locator('form#elicitation [name="name"]').first().fill('Ada Lovelace');
  if ((await page.locator('form#elicitation input[name="email"]').count()) > 0) {
    await page.locator('form#elicitation input[name="email"]').fill('ada@example.com');
  }
  await run.shot(page, 'elicitation');
  await page.locator('#elicit-accept').click();
  const accepted = await waitFor(page, RESULT_DONE);
  facts.elicitation.result = {
    status: await accepted.getAttribute('data-status'),
    text: await accepted.textContent(),
  };
  await page.locator('form#elicitation').waitFor({ state: 'detached', timeout: WAIT_MS });
  await run.shot(page, 'elicitation-result');

  run.step('elicitation: decline');
  await openTool(page, 'everything', 'trigger-elicitation-request');
  await page.locator('button#tool-call').click();
  await waitFor(page, 'form#elicitation');
  await page.locator('#elicit-decline').click();
  const declined = await waitFor(page, RESULT_DONE);
  facts.declined = { status: await declined.getAttribute('data-status'), text: await declined.textContent() };
  await page.locator('form#elicitation').waitFor({ state: 'detached', timeout: WAIT_MS });

  // The events view showed the elicitations (binding events are live:
  // these are the first since it opened).
  run.step('events view');
  await waitFor(events, 'ul#events li');
  facts.events = await events.locator('ul#events li').count();
  facts.eventTexts = (await events.locator('ul#events li').allTextContents()).map((t) => t.slice(0, 200));
  facts.eventKinds = await attributes(events, 'ul#events li', 'data-kind');
  await run.shot(events, 'events');

  // The API the page uses answers, with the token header.
  const servers = await api(run, '/api/servers');
  facts.apiServers = {
    status: servers.status,
    bindings: ((servers.body && servers.body.servers) || []).map((s) => s.binding),
  };
  // The echo is in the traffic as long as the view stays open (a bounded
  // look that it still shows after the other calls).
  facts.trafficStillShowsEcho = await textUntil(
    traffic.locator('ul#traffic'),
    (t) => t.includes('hello from the browser'),
    'the echo in the traffic view',
    5_000,
  ).then(() => true, () => false);
});
