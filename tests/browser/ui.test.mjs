// The web UI as a person meets it: headless Chromium driven by playwright-core against the mossd
// that run.sh started (MOSS_ADDR, MOSS_TOKEN, MOSS_BIN, CHROMIUM, MOSS_BROWSER_ARTIFACTS).
//
// The data is seeded over REST with the token; the browser never sees the token: it signs in
// through the one-time address `moss ui` prints. The steps run in order, one browser context,
// and each leaves a full-page screenshot in the artifacts directory. Nothing waits for a fixed
// time: every step waits for a URL or a selector.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (name) => {
  const v = process.env[name];
  assert.ok(v, `${name} is not set; run this through tests/browser/run.sh`);
  return v;
};
const ADDR = env('MOSS_ADDR').replace(/\/+$/, '');
const TOKEN = env('MOSS_TOKEN');
const MOSS_BIN = env('MOSS_BIN');
const ARTIFACTS = env('MOSS_BROWSER_ARTIFACTS');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

const WS = 'shop';
const WORD = 'zephyrquokka';
const STEP_TIMEOUT = { timeout: 60_000 };

/** A REST call with the token; fails the step on any status but 200. */
async function rest(path, body) {
  const resp = await fetch(`${ADDR}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  assert.equal(resp.status, 200, `${path}: ${text}`);
  return JSON.parse(text);
}

const seeded = {};
let browser;
let context;
let page;
const dialogs = [];
const pageErrors = [];
/** What the Content-Security-Policy blocked, with the page it happened on. */
const cspViolations = [];
const shots = [];

/** A step: in order, bounded, with a screenshot of the page it failed on. */
function step(name, fn) {
  test(name, STEP_TIMEOUT, async () => {
    try {
      await fn();
    } catch (e) {
      const n = name.split('.')[0];
      await page?.screenshot({ path: join(ARTIFACTS, `FAILED-${n}.png`), fullPage: true }).catch(() => {});
      if (page) shots.push(join(ARTIFACTS, `FAILED-${n}.png`));
      throw e;
    }
  });
}

async function shot(name) {
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  shots.push(path);
}

/** Whether a memory id is still stored: a dry-run forget of it finds it (200, count 1) or
 * answers that there is no such memory (404 NOT_FOUND). */
async function memoryExists(id) {
  const resp = await fetch(`${ADDR}/memories/forget`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workspace: WS, id, dry_run: true }),
  });
  const body = await resp.json();
  if (resp.status === 404 && body.error?.code === 'NOT_FOUND') return false;
  assert.equal(resp.status, 200, JSON.stringify(body));
  assert.equal(body.count, 1, JSON.stringify(body));
  return true;
}

before(async () => {
  const handoff = await rest('/capsules', {
    workspace: WS,
    name: 'refunds-handoff',
    capsule_text:
      `## Objective\nShip refunds; the ${WORD} flag guards the rollout.\n## Current status\n` +
      'The endpoint is written, tests are next.\n## Decisions\n- Queue refunds, do not call the PSP inline\n' +
      '## Next actions\n- Test the endpoint\n- Turn on the flag\n## Key locations\nsrc/refunds.rs\n' +
      '## Open questions\nnone\n',
  });
  seeded.capsule = handoff.id;
  const hostile = await rest('/capsules', {
    workspace: WS,
    name: 'hostile-notes',
    capsule_text:
      '## Objective\nRender stored markup inert.\n<script>window.__pwned=1</script>\n' +
      '[click me](javascript:window.__pwned=2) <img src=x onerror="window.__pwned=3">\n' +
      '<a href="javascript:window.__pwned=4">raw link</a>\n' +
      '## Current status\nstored\n## Decisions\nnone\n## Next actions\n- look\n' +
      '## Key locations\nnone\n## Open questions\nnone\n',
  });
  seeded.hostile = hostile.id;

  const plan = await rest('/tasks/create', { workspace: WS, title: 'Refunds' });
  const task = await rest('/tasks/create', {
    workspace: WS,
    title: 'Ship refunds',
    parent: plan.item.id,
    steps: [
      { title: 'Write the endpoint', success_criteria: ['POST /refunds answers 202'] },
      { title: 'Test it', tests: ['cargo test refunds'] },
      { title: 'Turn on the flag' },
    ],
  });
  seeded.task = task.item.id;
  seeded.steps = task.steps.map((s) => s.title);
  assert.equal(seeded.steps.length, 3, JSON.stringify(task));

  const card = (id, type, title, supports) =>
    rest('/reasoning/think/card', {
      workspace: WS,
      target: seeded.task,
      card: { id, type, title },
      ...(supports ? { supports } : {}),
    });
  await card('q1', 'question', 'Where do refunds wait?');
  await card('h1', 'hypothesis', 'A queue absorbs PSP outages', ['q1']);
  await card('e1', 'evidence', 'PSP was down 40 min last month', ['h1']);
  await card('d1', 'decision', 'Queue refunds', ['h1']);
  // A second version of one card: the hypothesis gets a status.
  await rest('/reasoning/graph/apply', {
    workspace: WS,
    target: seeded.task,
    ops: [{ op: 'node_upsert', id: 'h1', type: 'hypothesis', title: 'A queue absorbs PSP outages', status: 'accepted' }],
  });

  const memory = async (content) =>
    (await rest('/memories', { workspace: WS, content, context: seeded.task })).memory.id;
  seeded.keep = await memory('Refunds need an idempotency key');
  seeded.forget = await memory('Refunds to expired cards go back by bank transfer');
  seeded.other = (
    await rest('/memories', { workspace: WS, content: 'Card numbers are never logged', context: 'src/payments.rs' })
  ).memory.id;
  await rest('/memories', { workspace: WS, content: 'Emails use the plain template', context: 'src/emails.rs', slot: 'style' });

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('dialog', (d) => {
    dialogs.push(`${d.type()}: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) {
      cspViolations.push({ url: page.url(), text: m.text() });
    }
  });
});

after(async () => {
  await browser?.close();
  if (shots.length) console.log(`screenshots (${shots.length}) in ${ARTIFACTS}:\n  ${shots.join('\n  ')}`);
});

step('1. signs in through the address `moss ui` prints, not the token', async () => {
  const url = execFileSync(MOSS_BIN, ['ui'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    .trim()
    .split('\n')
    .pop();
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/ui\/login\?code=[0-9a-f]+$/, url);
  assert.ok(!url.includes(TOKEN), 'the sign-in address does not carry the token');
  await page.goto(url);
  await page.waitForURL(`${ADDR}/ui/`);
  await page.locator(`a[href="/ui/w/${WS}/capsules"]`).waitFor();
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === 'moss_ui');
  assert.ok(session, JSON.stringify(cookies));
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Strict');
  assert.equal(session.path, '/ui');
  await shot('01-workspaces');
});

step('2. finds the capsule by its unique word from the header search box', async () => {
  const box = page.locator('header form.search input[name="q"]');
  await box.fill(WORD);
  await box.press('Enter');
  await page.waitForURL(/\/ui\/search\?q=/);
  const hit = page.locator(`ol.hits a[href="/ui/w/${WS}/capsules/${seeded.capsule}"]`);
  await hit.waitFor();
  assert.equal(await page.locator('ol.hits mark', { hasText: WORD }).count() > 0, true);
  await shot('02-search');
  await hit.click();
  await page.waitForURL(`${ADDR}/ui/w/${WS}/capsules/${seeded.capsule}`);
  await page.locator('article.capsule', { hasText: WORD }).waitFor();
  assert.match(await page.locator('h1').innerText(), /refunds-handoff/);
  await shot('02-capsule');
});

step('3. opens the task and sees its steps and radar', async () => {
  await page.locator('nav.crumbs a.tab', { hasText: 'Tasks' }).click();
  await page.waitForURL(`${ADDR}/ui/w/${WS}/tasks`);
  await page.locator(`a[href="/ui/w/${WS}/tasks/${seeded.task}"]`).click();
  await page.waitForURL(`${ADDR}/ui/w/${WS}/tasks/${seeded.task}`);
  await page.locator('h2', { hasText: 'Radar' }).waitFor();
  const radar = await page.locator('dl.facts').innerText();
  assert.match(radar, /0 done, 3 open of 3/, radar);
  const steps = await page.locator('ul.steps li.step').allInnerTexts();
  assert.equal(steps.length, seeded.steps.length, steps.join('\n'));
  seeded.steps.forEach((title, i) => assert.ok(steps[i].includes(title), `${title}: ${steps[i]}`));
  // The page's own markup obeys its policy (an inline style would be dropped: no tree).
  const blocked = cspViolations.filter((v) => v.url.includes('/tasks/')).map((v) => v.text);
  assert.deepEqual(blocked, [], 'the task page needs nothing the Content-Security-Policy blocks');
  await shot('03-task');
});

step('4. draws the task graph with as many nodes as branchmind_graph_query', async () => {
  await page.locator('a', { hasText: 'Its reasoning graph' }).click();
  await page.waitForURL(/\/graph\?target=/);
  await page.locator('svg.graph').waitFor();
  const q = await rest('/reasoning/graph/query', { workspace: WS, target: seeded.task, limit: 100 });
  assert.ok(q.nodes.length >= 4, JSON.stringify(q));
  assert.ok(q.edges.length >= 3, JSON.stringify(q));
  assert.equal(await page.locator('svg.graph g.node').count(), q.nodes.length);
  const drawn = await page.locator('svg.graph g.node').evaluateAll((gs) => gs.map((g) => g.dataset.id));
  assert.deepEqual(drawn.sort(), q.nodes.map((n) => n.id).sort());
  assert.ok((await page.locator('svg.graph g.edge').count()) >= 3);
  await shot('04-graph');
  // Every node shows its title, every edge its relation (not just boxes and lines).
  for (const n of q.nodes.filter((n) => n.title)) {
    const label = page.locator(`svg.graph g.node[data-id="${n.id}"] text`).last();
    assert.equal(await label.isVisible(), true, `the label of node ${n.id} is drawn`);
  }
  for (const label of await page.locator('svg.graph g.edge text').all()) {
    assert.equal(await label.isVisible(), true, `the edge label ${await label.textContent()} is drawn`);
  }
});

step("4b. opens a node's versions from its box in the graph", async () => {
  const graph = page.url();
  await page.locator('svg.graph a:has(g.node[data-id="h1"])').click();
  await page.waitForURL(/\/graph\/node\?.*id=h1/);
  const rows = page.locator('table.versions tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 2, 'the card and its status change');
  const newest = await rows.first().innerText();
  assert.match(newest, /accepted/, newest);
  assert.match(newest, /status/, `what the newest version changed: ${newest}`);
  assert.match(await rows.last().innerText(), /created/);
  await shot('04b-node-versions');
  await page.goto(graph);
});

step('5. recalls on the memories page with every factor of the score', async () => {
  await page.locator('nav.crumbs a.tab', { hasText: 'Memories' }).click();
  await page.waitForURL(`${ADDR}/ui/w/${WS}/memories`);
  await page.locator('form.filters input[name="q"]').fill('refunds');
  await page.locator('form.filters button[type="submit"]').click();
  await page.waitForURL(/\/memories\?q=refunds/);
  const headers = await page.locator('table.recall thead th').allInnerTexts();
  for (const factor of ['score', 'relevance', 'weight', 'recency', 'specificity']) {
    assert.ok(headers.includes(factor), `${factor} in ${headers}`);
  }
  const rows = page.locator('table.recall tbody tr');
  assert.equal(await rows.count(), 2);
  for (const row of await rows.all()) {
    const factors = (await row.locator('td.num').allInnerTexts()).map(Number);
    assert.equal(factors.length, 5, factors.join(' '));
    factors.forEach((f) => assert.ok(Number.isFinite(f), factors.join(' ')));
  }
  await shot('05-recall');
});

step('6. forgets one memory after seeing exactly what goes', async () => {
  const row = page.locator('table.recall tbody tr', { hasText: 'bank transfer' });
  await row.locator('a', { hasText: 'Forget' }).click();
  await page.waitForURL(/\/memories\/forget\?id=/);
  assert.equal(new URL(page.url()).searchParams.get('id'), seeded.forget);
  await page.locator('p', { hasText: 'This removes exactly' }).waitFor();
  const preview = await page.locator('ul.preview li').allInnerTexts();
  assert.equal(preview.length, 1, preview.join('\n'));
  assert.match(preview[0], /bank transfer/);
  assert.equal(await memoryExists(seeded.forget), true, 'the preview removes nothing');
  await shot('06-forget-preview');
  const [posted] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/memories/forget')),
    page.locator('button.danger', { hasText: 'Forget' }).click(),
  ]);
  assert.equal(posted.status(), 200, `the forget form was answered: ${await posted.text()}`);
  await page.locator('h1', { hasText: 'Forgotten' }).waitFor();
  await shot('06-forgotten');
  assert.equal(await memoryExists(seeded.forget), false, 'the forgotten memory is gone');
  assert.equal(await memoryExists(seeded.keep), true, 'the other memory stays');
});

step('6b. filters the memories by a context from the list of contexts', async () => {
  await page.goto(`${ADDR}/ui/w/${WS}/memories`);
  const all = page.locator('table.memories tbody tr');
  await all.first().waitFor();
  assert.equal(await all.count(), 3, 'the kept memory and the other contexts\'');
  const slot = await page.locator('table.slots tbody tr').allInnerTexts();
  assert.equal(slot.length, 1, slot.join('\n'));
  assert.match(slot[0], /style\s+1\s+Emails use the plain template/, slot[0]);
  const context = seeded.task.toLowerCase();
  const row = page.locator('table.contexts tbody tr', { has: page.locator('a', { hasText: context }) });
  assert.equal(await row.locator('td.num').innerText(), '1');
  await row.locator('a').click();
  await page.waitForURL(`${ADDR}/ui/w/${WS}/memories?ctx=${encodeURIComponent(context)}`);
  await page.locator('h2', { hasText: 'In context' }).waitFor();
  const rows = await page.locator('table.memories tbody tr').allInnerTexts();
  assert.equal(rows.length, 1, rows.join('\n'));
  assert.match(rows[0], /idempotency key/);
  assert.ok(!rows.join('\n').includes('Card numbers'), rows.join('\n'));
  await shot('06b-memories-by-context');
});

step('7. a stored <script> and javascript: links stay inert', async () => {
  await page.goto(`${ADDR}/ui/w/${WS}/capsules/${seeded.hostile}`);
  const article = page.locator('article.capsule');
  await article.waitFor();
  // Shown as text, not run.
  assert.match(await article.innerText(), /<script>window\.__pwned=1<\/script>/);
  assert.equal(await page.locator('article.capsule script').count(), 0);
  assert.equal(await page.locator('a[href^="javascript:" i]').count(), 0);
  assert.equal(await page.locator('[onerror]').count(), 0);
  // Anything clickable in the capsule is clicked; nothing may run.
  for (const a of await article.locator('a').all()) await a.click({ noWaitAfter: true });
  assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined');
  assert.deepEqual(dialogs, []);
  assert.deepEqual(pageErrors, []);
  // Nothing tried to run, not even what the policy would have stopped.
  const style = /^(Applying inline style|Refused to apply inline style|(Loading|Refused to load) the stylesheet)/;
  assert.deepEqual(cspViolations.filter((v) => !style.test(v.text)), []);
  await shot('07-hostile-capsule');
});

step('8. no cookie lands on the welcome page; a form without the CSRF token is 403', async () => {
  const fresh = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  try {
    const stranger = await fresh.newPage();
    await stranger.goto(`${ADDR}/ui/`);
    await stranger.waitForURL(`${ADDR}/ui/welcome`);
    await stranger.locator('pre', { hasText: 'moss ui' }).waitFor();
    await stranger.screenshot({ path: join(ARTIFACTS, '08-welcome.png'), fullPage: true });
    shots.push(join(ARTIFACTS, '08-welcome.png'));
  } finally {
    await fresh.close();
  }

  // The page's request context carries the session cookie: it is signed in...
  const req = page.request;
  const home = await req.get(`${ADDR}/ui/`, { maxRedirects: 0 });
  assert.equal(home.status(), 200, 'the request context carries the session cookie');
  // ...yet a change without the form's CSRF token is refused and changes nothing.
  const forget = await req.post(`${ADDR}/ui/w/${WS}/memories/forget`, {
    form: { id: seeded.keep },
    maxRedirects: 0,
  });
  assert.equal(forget.status(), 403, await forget.text());
  assert.match(await forget.text(), /did not carry this session/);
  assert.equal(await memoryExists(seeded.keep), true);
  const del = await req.post(`${ADDR}/ui/w/${WS}/capsules/${seeded.capsule}/delete`, {
    form: { csrf: 'forged' },
    maxRedirects: 0,
  });
  assert.equal(del.status(), 403, await del.text());
  assert.match(await del.text(), /did not carry this session/);
  const c = await rest(`/capsules/${seeded.capsule}`);
  assert.equal(c.deleted_at ?? null, null, JSON.stringify(c));
});
