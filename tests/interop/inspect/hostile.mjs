// The hostile app (hostile_server.mjs) rendered by the inspector in
// Chromium (tests/interop/inspect.rs), once per attack: what the app was
// answered (as it wrote it in its DOM), the state of the app view after
// it, the top frame's navigations and any popup; then the page still
// calls a tool and the API still answers.
//
// node hostile.mjs PAGE_URL SCREENSHOT_DIR: prints the report (lib.mjs).
import { Run, api, appFrames, attributes, textUntil, waitFor, watchNavigations } from './lib.mjs';

const ATTACKS = ['big', 'flood', 'other', 'resource', 'navigate'];
const RESULT_DONE = '#tool-result:is([data-status="ok"], [data-status="tool-error"], [data-status="error"])';
const run = new Run('hostile', 240_000);
const facts = run.report;

run.main(async (context) => {
  const page = await context.newPage();
  const seen = watchNavigations(context, page);
  facts.navigations = seen;
  facts.attacks = {};
  for (const attack of ATTACKS) {
    run.step(`attack ${attack}`);
    const url = run.view({ server: 'hostile', tool: 'attack', view: 'app', args: { attack } });
    await page.goto(url);
    await waitFor(page, 'body[data-ready="true"]');
    const container = await waitFor(
      page,
      '#app-frame-container:is([data-app-status="ready"], [data-app-status="error"])',
      45_000,
    );
    const before = await container.getAttribute('data-app-status');
    if (before !== 'ready') {
      const why = await page.locator('#app-error').textContent({ timeout: 2_000 }).catch(() => '');
      throw new Error(`the hostile app (${attack}) is ${before}: ${why}`);
    }
    const { app } = await appFrames(page);
    await waitFor(app, 'body[data-done="true"]', 90_000);
    const results = JSON.parse(await app.locator('#results').textContent());
    const log = await app.locator('#log').textContent();
    facts.attacks[attack] = {
      results,
      log: log.slice(0, 3000),
      appStatusAfter: await page.locator('#app-frame-container').getAttribute('data-app-status'),
      topUrlUnchanged: page.url() === url,
      appError: await page.locator('#app-error').textContent({ timeout: 1_000 }).catch(() => null),
    };
    if (attack === 'navigate') {
      await waitFor(page, 'ul#app-decisions li[data-kind="open-link"]');
      facts.attacks.navigate.decisions = {
        kinds: await attributes(page, 'ul#app-decisions li', 'data-kind'),
        openLink: await page.locator('ul#app-decisions li[data-kind="open-link"]').first().textContent(),
      };
      // The app's ping was answered after its attempts: a navigation they
      // had started would have committed by now; the page is still here.
      facts.attacks.navigate.topUrlAfter = page.url();
      facts.attacks.navigate.stillRendered = await page.locator('body[data-ready="true"]').count();
    }
    await run.shot(page, attack);
  }

  // The page still works: a tool of another server through its form.
  run.step('the page after the attacks: echo');
  await page.goto(run.view({ server: 'everything', tool: 'echo' }));
  await waitFor(page, 'form#tool-form[data-server="everything"][data-tool="echo"]');
  const field = page.locator('form#tool-form [name="message"]');
  if ((await field.count()) > 0) await field.first().fill('still here');
  else await page.locator('textarea#tool-args').fill(JSON.stringify({ message: 'still here' }));
  await page.locator('button#tool-call').click();
  const result = await waitFor(page, RESULT_DONE);
  facts.after = { status: await result.getAttribute('data-status'), text: await result.textContent() };
  await textUntil(result, (t) => t.includes('Echo: still here'), 'the echo after the attacks', 5_000);
  await run.shot(page, 'after-echo');
  const servers = await api(run, '/api/servers');
  facts.after.apiServers = {
    status: servers.status,
    states: Object.fromEntries(((servers.body && servers.body.servers) || []).map((s) => [s.binding, s.state])),
  };
  facts.pages = context.pages().length;
});
