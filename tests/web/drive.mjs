// Drives the dashboard in Debian's Chromium (its headless shell) for test_web.py: one scenario
// per call.
//
//   node drive.mjs SCENARIO '{"url": "http://127.0.0.1:PORT", ...}'
//
// prints one JSON object on stdout: what the page showed ({"ok": true, ...}), or why the
// scenario could not be carried out ({"ok": false, "error": ...}, exit status 1). It only reads
// and clicks: test_web.py asserts. Every wait has a deadline; the whole call has one too.
//
//   node drive.mjs --serve
//
// launches Chromium once for a whole test file (test_web.py's setUpModule), prints
// {"ws": ENDPOINT} on stdout and keeps it until its stdin closes. A call given that endpoint
// ("ws" in its arguments) connects to it instead of launching a browser of its own, and works
// in a browser context of its own (cookies, storage, pages), closed when the call ends.
import { chromium } from 'playwright-core';
import { verdictScenarios } from './drive_verdict.mjs';
import { runScenarios } from './drive_run.mjs';
import { viewsScenarios } from './drive_views.mjs';
import { hostScenarios } from './drive_host.mjs';
import { experimentScenarios } from './drive_experiment.mjs';

const [scenario, argJson] = process.argv.slice(2);
const args = JSON.parse(argJson || '{}');
const base = args.url;
const STEP_MS = args.step_ms ?? 20000; // one element, one navigation
const RUN_MS = args.run_ms ?? 180000; // a run from launch to its end
const CALL_MS = args.call_ms ?? 280000; // this whole call; test_web.py waits a little longer
const FINAL = ['done', 'failed', 'cancelled'];
const LAUNCH = {
  executablePath: '/usr/bin/chromium-headless-shell', // test_web.py's CHROMIUM
  headless: true,
  timeout: 30000,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
};

let browser = null;
let page = null;
const pageErrors = [];
const consoleErrors = []; // reported when a scenario fails, to say why; not asserted
const consoleMessages = []; // the page's console errors alone, for the scenarios that report them

function emit(obj, code) {
  process.stdout.write(JSON.stringify(obj) + '\n');
  process.exitCode = code;
}

// Polls probe() until pred(value) holds; throws after ms with the last value seen. A probe that
// throws (the page navigating under it) counts as not yet.
async function until(what, probe, pred, ms = STEP_MS, every = 100) {
  const end = Date.now() + ms;
  let last;
  let lastErr;
  for (;;) {
    try {
      last = await probe();
      lastErr = undefined;
      if (pred(last)) return last;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > end) {
      const seen = lastErr ? String(lastErr.message || lastErr).split('\n')[0] : JSON.stringify(last);
      throw new Error(`timed out after ${ms} ms waiting for ${what}; last seen: ${seen}`);
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

// As until(), but gives back the last value instead of throwing: for what the test asserts.
async function settle(probe, pred, ms = STEP_MS, every = 100) {
  try {
    return await until('', probe, pred, ms, every);
  } catch {
    try {
      return await probe();
    } catch {
      return null;
    }
  }
}

async function api(path) {
  const r = await fetch(base + path, { signal: AbortSignal.timeout(10000) });
  if (!r.ok) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

// Chromium aborts loads with ERR_NETWORK_CHANGED when interfaces come or go, and the lab's
// namespaces make them come and go on this machine, sometimes several times in a row (two
// reloads both cut off were seen): a page whose modules were cut off that way is loaded again,
// a second later each time, at most 5 times; any other failure stands. A view's modules are
// imported after the load event (one cut off so was seen to leave the page without its view),
// so the look waits for the network to be idle first, for at most 2 s.
let networkChanged = false;

async function view(hash) {
  for (let attempt = 0; ; attempt++) {
    networkChanged = false;
    await page.goto(`${base}/#${hash}`, { waitUntil: 'load', timeout: STEP_MS });
    await page.waitForLoadState('networkidle', { timeout: 2000 }).catch(() => {});
    if (!networkChanged || attempt === 5) return;
    consoleErrors.push(`(loaded ${hash} again after a network change)`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // Another hash of the same page is no new document: its failed module imports would stay
    // failed. A blank page first makes the next load a whole one.
    await page.goto('about:blank');
  }
}

const hash = () => page.evaluate(() => location.hash);

// Before a screenshot: the charts have finished drawing (two looks alike, 250 ms apart).
async function chartsDrawn() {
  let prev = null;
  await settle(async () => {
    const now = await page.evaluate(() => [...document.querySelectorAll('canvas')]
      .map((c) => c.toDataURL()).join('|'));
    const same = now === prev;
    prev = now;
    return same;
  }, (same) => same, 5000, 250);
}

// The run view as the user sees it.
const runSnap = () => page.evaluate(() => {
  const p = document.querySelector('progress#run-progress');
  const s = document.querySelector('#run-state');
  return {
    hash: location.hash,
    value: p ? p.value : null,
    max: p ? p.max : null,
    state: s ? s.textContent.trim() : null,
    jobs: [...document.querySelectorAll('ul#run-jobs li[data-job]')].map((li) => li.dataset.job),
    // How the jobs go: shown when they go one at a time, or side by side with a warning.
    parallel: (() => {
      const n = document.querySelector('#run-parallel');
      return n && !n.hidden ? { text: n.textContent.trim(), parallel: n.dataset.parallel } : null;
    })(),
  };
});

const compareSnap = () => page.evaluate(() => ({
  hash: location.hash,
  rows: Object.fromEntries([...document.querySelectorAll('table#ratio-table tr[data-host]')]
    .map((tr) => [tr.dataset.host, [...tr.classList]])),
  anomalies: [...document.querySelectorAll('ul#anomalies li[data-host]')].map((li) => li.dataset.host),
}));

async function presetReady(preset) {
  await until(`select#preset to offer ${preset}`,
    () => page.$$eval('select#preset option', (os) => os.map((o) => o.value)),
    (vals) => vals.includes(preset));
}

// Fills the launch form and submits it; the token field only when a token is given.
async function submitLaunch(a) {
  await view('/launch');
  await presetReady(a.preset);
  await page.selectOption('select#preset', a.preset, { timeout: STEP_MS });
  await page.fill('input#hosts', a.hosts, { timeout: STEP_MS });
  await page.fill('input#repetitions', String(a.repetitions), { timeout: STEP_MS });
  if (a.parallel !== undefined) {
    await page.selectOption('select#parallel', a.parallel, { timeout: STEP_MS });
  }
  if (a.token !== undefined) await page.fill('input#token', a.token, { timeout: STEP_MS });
  await page.click('button#launch-submit', { timeout: STEP_MS });
}

// Every POST /api/runs the page makes, with the Authorization it sent and the status it got;
// the bodies it sent go to `bodies`, in the same order.
const bodies = [];
function watchPosts() {
  const posts = [];
  page.on('response', (resp) => {
    const req = resp.request();
    if (req.method() === 'POST' && new URL(req.url()).pathname === '/api/runs') {
      posts.push({ auth: req.headers().authorization ?? null, status: resp.status() });
      bodies.push(req.postDataJSON());
    }
  });
  return posts;
}

const scenarios = {
  // A coordinator off loopback: the page asks for the token, then reads and follows the fleet
  // with it. Violations of the Content-Security-Policy are reported, for the test to assert.
  async public(a) {
    const sockets = [];
    page.on('websocket', (w) => sockets.push(w.url()));
    await view('/fleet');
    await page.waitForSelector('#token-ask-input', { state: 'visible', timeout: STEP_MS });
    const asked = await page.$eval('#token-ask', (f) => f.innerText);
    await page.fill('#token-ask-input', a.token);
    await page.click('#token-ask button[type=submit]');
    const rows = await until(`a row for each of ${a.agents}`,
      () => page.$$eval('table#fleet-table tr[data-agent]', (trs) => trs.map((tr) => tr.dataset.agent)),
      (r) => a.agents.every((n) => r.includes(n)));
    const ws = await until('the live connection', () => page.$eval('#ws-status', (e) => e.dataset.state),
      (st) => st === 'live');
    const still = await page.$('#token-ask');
    return {
      asked, rows, ws, form_gone: still === null, ws_urls: sockets,
      csp_errors: consoleErrors.filter((e) => /Content.Security.Policy/i.test(e)),
    };
  },

  // #/fleet: one row per agent, with its state.
  async fleet(a) {
    await view('/fleet');
    const rows = await until(`a row for each of ${a.agents}`,
      () => page.$$eval('table#fleet-table tr[data-agent]', (trs) => Object.fromEntries(trs.map(
        (tr) => [tr.dataset.agent, tr.querySelector('td.state')?.textContent.trim() ?? null]))),
      (r) => a.agents.every((n) => r[n]));
    return { rows };
  },

  // #/launch -> #/run/ID -> #/compare/ID, sampling the run view as it goes.
  async launch(a) {
    const posts = watchPosts();
    await submitLaunch(a);
    const at = await until('the URL to become #/run/ID', hash, (h) => /^#\/run\/\d+$/.test(h));
    const id = at.split('/')[2];
    const samples = [];
    const last = await until(`#run-state of run ${id} to end`, async () => {
      const s = await runSnap();
      const prev = samples[samples.length - 1];
      if (!prev || prev.value !== s.value || prev.max !== s.max || prev.state !== s.state) {
        samples.push({ value: s.value, max: s.max, state: s.state });
      }
      return s;
    }, (s) => FINAL.includes((s.state || '').toLowerCase()), RUN_MS, 50);
    // The list may take the last job a moment after the state.
    const end = await settle(runSnap, (s) => s.max > 0 && s.jobs.length >= s.max, 10000);
    if (a.run_shot) await page.screenshot({ path: a.run_shot });
    await page.click('a#to-compare', { timeout: STEP_MS });
    const cmpHash = await until(`the URL to become #/compare/${id}`, hash,
      (h) => h === `#/compare/${id}`);
    // Its table is built by the coordinator's report worker, which gives way to everything
    // else on a busy machine: a minute, not one step.
    const cmp = await settle(compareSnap, (c) => Object.keys(c.rows).length >= (a.n_hosts ?? 1),
      3 * STEP_MS);
    return {
      run: id, run_hash: at, samples, state: last.state, value: end.value, max: end.max,
      jobs: end.jobs, parallel: end.parallel, compare_hash: cmpHash,
      compare_hosts: Object.keys(cmp.rows), posts, bodies,
    };
  },

  // #/run/ID of a finished run, then reloaded: the job list each time, and one done job's
  // details opened.
  async run_jobs(a) {
    const snap = () => page.evaluate(() => [...document.querySelectorAll('ul#run-jobs li[data-job]')]
      .map((li) => ({
        id: li.dataset.job, state: li.dataset.state, warmup: li.dataset.warmup === '1',
        test: li.querySelector('.test')?.textContent ?? null,
        rep: li.querySelector('.rep')?.textContent ?? null,
        duration: li.querySelector('.duration')?.textContent ?? null,
        headline: li.querySelector('.headline')?.textContent ?? null,
        reason: li.querySelector('.reason')?.textContent ?? null,
        href: li.querySelector('a.job-id')?.getAttribute('href') ?? null,
      })));
    await view(`/run/${a.run}`);
    const before = await until(`${a.total} jobs listed`, snap, (l) => l.length >= a.total);
    await page.reload({ waitUntil: 'domcontentloaded', timeout: STEP_MS });
    const after = await until(`${a.total} jobs listed after the reload`, snap,
      (l) => l.length >= a.total);
    const note = await page.$eval('#run-jobs-note', (n) => n.hidden);
    const done = after.find((j) => j.state === 'done' && !j.warmup);
    const sel = `ul#run-jobs li[data-job="${done.id}"]`;
    await page.click(`${sel} details summary`);
    const json = await until('the job\'s result JSON', () => page.$eval(`${sel} pre`,
      (p) => p.textContent), (t) => t.length > 0);
    return { before, after, note_hidden: note, opened: done.id, details: JSON.parse(json) };
  },

  // #/run/ID of a running run, reloaded: what it shows before and after, and the API around it.
  async reload(a) {
    await view(`/run/${a.run}`);
    const before = await until(`run ${a.run} to show progress while running`, runSnap,
      (s) => s.state === 'running' && s.value >= 1);
    const api0 = await api(`/api/runs/${a.run}`);
    await page.reload({ waitUntil: 'domcontentloaded', timeout: STEP_MS });
    const floor = api0.progress.done + api0.progress.failed;
    // Right after the reload the page may not have fetched yet: it has a few seconds to show at
    // least what the API said before the reload.
    const after = await settle(runSnap, (s) => s.state && s.value >= floor, 10000);
    const api1 = await api(`/api/runs/${a.run}`);
    // And it stays live: the progress moves on without another reload.
    const later = await settle(runSnap, (s) => s.value > after.value, 15000);
    return { before, api0, after, api1, later };
  },

  // #/compare/ID: the CSV link's download, saved where the test reads it.
  async csv(a) {
    await view(`/compare/${a.run}`);
    await page.waitForSelector('a#dl-csv', { state: 'visible', timeout: STEP_MS });
    const [dl] = await Promise.all([
      page.waitForEvent('download', { timeout: STEP_MS }),
      page.click('a#dl-csv', { timeout: STEP_MS }),
    ]);
    await dl.saveAs(a.save_to);
    return { suggested: dl.suggestedFilename(), failure: await dl.failure(), saved: a.save_to };
  },

  // #/compare/ID: which rows are marked, which hosts are listed as anomalies.
  async anomaly(a) {
    await view(`/compare/${a.run}`);
    await until(`a row for each of ${a.hosts}`, compareSnap,
      (c) => a.hosts.every((h) => c.rows[h]));
    const seen = await settle(compareSnap,
      (c) => c.anomalies.length > 0 && Object.values(c.rows).some((cl) => cl.includes('anomalous')),
      15000);
    if (a.shot) {
      await chartsDrawn();
      await page.screenshot({ path: a.shot });
    }
    return seen;
  },

  // #/compare/ID's plots, one per test: each one's axis and the rows it marks as flagged, and
  // the card's title.
  async chart(a) {
    await view(`/compare/${a.run}`);
    await page.waitForSelector('#compare-chart figure[data-scale]', { timeout: STEP_MS });
    const snap = () => page.evaluate(() => ({
      title: document.querySelector('#compare-plots h2').textContent,
      plots: Object.fromEntries([...document.querySelectorAll('#compare-chart figure')].map(
        (f) => [f.dataset.column, { scale: f.dataset.scale, flagged: f.dataset.flagged }])),
    }));
    const plots = await settle(snap, (s) => Object.values(s.plots).some((p) => p.flagged), 15000);
    return { plots };
  },

  // #/fleet -> "host settings" -> pick a.hosts -> Show: the hash, the summary and the rows
  // of the side by side (class "differs" on the rows that differ, "odd" on the cells that
  // stand apart).
  async hosts(a) {
    await view('/fleet');
    await page.click('a#compare-hosts-link', { timeout: STEP_MS });
    await until('the host checkboxes', () => page.$$eval('#hosts-pick input[name=host]',
      (is) => is.map((i) => i.value)), (v) => a.hosts.every((n) => v.includes(n)));
    for (const n of a.hosts) await page.check(`#hosts-pick input[data-host="${n}"]`);
    await page.click('button#hosts-compare', { timeout: STEP_MS });
    const at = await until('the URL to name the hosts', hash, (h) => h.startsWith('#/settings/'));
    await page.waitForSelector('table#hosts-table tbody tr', { timeout: STEP_MS });
    const snap = () => page.evaluate(() => {
      const s = document.querySelector('#hosts-summary');
      const rows = [...document.querySelectorAll('table#hosts-table tbody tr')];
      return {
        summary: { text: s.textContent.trim(), differ: s.dataset.differ, same: s.dataset.same },
        n_rows: rows.length,
        order: rows.map((tr) => tr.classList.contains('differs')),
        differs: Object.fromEntries(rows.filter((tr) => tr.classList.contains('differs'))
          .map((tr) => [tr.dataset.item, Object.fromEntries([...tr.querySelectorAll('td')]
            .map((td) => [td.dataset.host, { text: td.textContent, odd: td.classList.contains('odd') }]))])),
      };
    });
    const all = await snap();
    if (a.shot) await page.screenshot({ path: a.shot, fullPage: true });
    await page.check('#hosts-only-differs');
    const only = await snap();
    return { hash: at, all, only_rows: only.n_rows };
  },

  // #/compare/ID, GET /api/runs/ID/anomalies answered by a.fixture when given (else by the
  // coordinator): the anomaly card's differences and changes as shown.
  async anomaly_why(a) {
    if (a.fixture) {
      await page.route(/\/api\/runs\/\d+\/anomalies/, (route) => route.fulfill({
        status: 200, contentType: 'application/json', body: JSON.stringify(a.fixture),
      }));
    }
    await view(`/compare/${a.run}`);
    await page.waitForSelector('ul#anomalies li .why li', { timeout: STEP_MS });
    if (a.shot) {
      // The anomalies at the top, the charts above them scrolled away.
      await page.evaluate(() => document.querySelector('ul#anomalies').closest('section, div')
        .scrollIntoView({ block: 'start' }));
      await page.screenshot({ path: a.shot });
    }
    const cards = await page.evaluate(() => [...document.querySelectorAll('ul#anomalies li.anomaly')].map((li) => ({
      host: li.dataset.host,
      kind: li.dataset.kind,
      differences: [...li.querySelectorAll('ul.differences li')].map((d) => ({
        item: d.dataset.item, text: d.textContent })),
      changes: [...li.querySelectorAll('ul.changes li')].map((d) => ({
        item: d.dataset.item, text: d.textContent })),
    })));
    return { cards };
  },

  // #/launch with a token: what the form says when the coordinator refuses it.
  async token(a) {
    const posts = watchPosts();
    await submitLaunch(a);
    if (a.accepted) {
      // The right token: the page goes to the new run's view, which is all this needs.
      const at = await until('the URL to become #/run/ID', hash, (h) => /^#\/run\/\d+$/.test(h));
      await until('the accepted POST /api/runs', async () => posts.length, (n) => n >= 1);
      return { run_hash: at, posts, bodies };
    }
    const err = await until('#launch-error to show a message', () => page.evaluate(() => {
      const e = document.querySelector('#launch-error');
      if (!e) return null;
      const r = e.getBoundingClientRect();
      const st = getComputedStyle(e);
      return {
        text: e.textContent.trim(),
        visible: r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none',
      };
    }), (e) => e && e.visible && e.text);
    await until('the refused POST /api/runs', async () => posts.length, (n) => n >= 1);
    return { error: err, hash: await hash(), posts, bodies };
  },

  // #/compare/A: pick run B in the select, then read the side by side; then runs that share
  // no cell, on the compare view and in History.
  async compare_runs(a) {
    await view(`/compare/${a.a}`);
    await until(`select#compare-other to offer run ${a.b}`,
      () => page.$$eval('select#compare-other option', (os) => os.map((o) => o.value)),
      (v) => v.includes(String(a.b)));
    await page.selectOption('select#compare-other', String(a.b));
    const at = await until(`the URL to become #/compare/${a.a}/${a.b}`, hash,
      (h) => h === `#/compare/${a.a}/${a.b}`);
    const rows = await until('the shared cells', () => page.$$eval(
      'table#runs-compare-table tr[data-host]', (trs) => trs.map((tr) => ({
        host: tr.dataset.host, test: tr.dataset.test, verdict: tr.dataset.verdict,
        marked: tr.classList.contains('anomalous'),
        cells: [...tr.querySelectorAll('td')].map((td) => td.textContent.trim()),
      }))), (r) => r.length > 0);
    const list = (sel) => page.$$eval(sel, (lis) => lis.map((li) => li.textContent.trim()));
    const only_a = await list('ul#runs-only-a li');
    const only_b = await list('ul#runs-only-b li');
    const note = await page.$eval('#runs-compare-note', (e) => e.textContent.trim());
    await view(`/compare/${a.a}/${a.c}`);
    const none = await until('the note on runs that share no cell',
      () => page.$eval('#runs-compare-note', (e) => e.textContent.trim()),
      (t) => t.includes('share no cell'));
    const none_rows = await page.$$eval('table#runs-compare-table tr[data-host]', (t) => t.length);
    await view('/history');
    await until(`select#history-run to offer run ${a.c}`,
      () => page.$$eval('select#baseline option', (os) => os.map((o) => o.value)),
      (v) => v.includes(String(a.a)));
    await page.selectOption('select#history-run', String(a.c));
    await page.selectOption('select#baseline', String(a.a));
    const history = await until('the History note on runs that share no cell',
      () => page.$eval('#regressions-note', (e) => e.textContent.trim()),
      (t) => t.includes('share no cell'));
    return { hash: at, rows, only_a, only_b, note, none, none_rows, history };
  },

  // Each view at the viewport given, once it shows what it is for.
  async shots(a) {
    const out = {};
    const take = async (name, h, ready) => {
      await view(h);
      await ready();
      await chartsDrawn();
      const path = `${a.dir}/${name}.png`;
      await page.screenshot({ path });
      out[name] = path;
    };
    // The run first, while it runs: its job list fills only while the page watches.
    await take('run', `/run/${a.run}`, () => until(`run ${a.run} to show its end`, runSnap,
      (s) => s.state === 'done' && s.max > 0 && s.value === s.max, RUN_MS));
    await take('fleet', '/fleet', () => page.waitForSelector('table#fleet-table tr[data-agent]',
      { timeout: STEP_MS }));
    await take('launch', '/launch', () => presetReady('quick'));
    await take(a.compare_name ?? 'compare', `/compare/${a.run}`,
      () => page.waitForSelector('table#ratio-table tr[data-host]', { timeout: STEP_MS }));
    let history = null;
    await take('history', '/history', async () => {
      history = await settle(() => page.evaluate(() => document.body.innerText),
        (t) => t.includes(a.run_name), 10000);
    });
    out.history_mentions_run = !!history && history.includes(a.run_name);
    return out;
  },
};

// #/trends: the grid's cells with their verdict classes and the legend; a click on a.host's
// cell of a.test draws its trend chart; a reload keeps the hash and the chart. Then, with
// GET /api/trends answered by a.fixture, the chart of a trend with a flagged outlier.
async function trendsScenario(a) {
  await view('/trends');
  const gridCells = () => page.$$eval('table#trends-grid td[data-verdict]', (tds) => tds.map((td) => ({
    host: td.dataset.host, test: td.dataset.test, verdict: td.dataset.verdict, run: td.dataset.run,
    classes: [...td.classList], text: td.textContent.trim(),
  })));
  const cells = await until(`${a.n_cells} grid cells`, gridCells, (c) => c.length >= a.n_cells);
  const legend = await page.$$eval('#trends-legend li', (lis) => lis.map((li) => ({
    verdict: li.dataset.verdict, classes: [...li.classList], text: li.textContent.trim(),
  })));
  const clicked = await page.evaluate(([host, test]) => {
    const td = [...document.querySelectorAll('table#trends-grid td[data-verdict]')]
      .find((x) => x.dataset.host === host && x.dataset.test === test);
    const link = td && td.querySelector('a');
    if (link) link.click();
    return !!link;
  }, [a.host, a.test]);
  if (!clicked) throw new Error(`no link in the grid cell of ${a.host}, ${a.test}`);
  const chartSnap = () => page.evaluate(() => {
    const c = document.querySelector('canvas#trend-chart');
    return {
      hash: location.hash,
      points: c ? Number(c.dataset.points) : null,
      scale: c ? c.dataset.scale : null,
      flagged: c ? Number(c.dataset.flagged) : null,
      rows: [...document.querySelectorAll('table#trend-points tr[data-run]')].map((tr) => tr.dataset.run),
      run_links: [...document.querySelectorAll('table#trend-points a')].map((x) => x.getAttribute('href')),
      note: document.querySelector('#trend-note')?.textContent.trim() ?? null,
    };
  });
  const chart = await until('the trend chart', chartSnap, (c) => c.points !== null);
  await page.reload({ waitUntil: 'load', timeout: STEP_MS });
  const reloaded = await until('the trend chart after a reload', chartSnap, (c) => c.points !== null);
  let outlier = null;
  if (a.fixture) {
    await page.route((u) => u.pathname === '/api/trends', (route) => route.fulfill({
      status: 200, contentType: 'application/json', body: JSON.stringify(a.fixture),
    }));
    await view(`/trends/${encodeURIComponent(a.fixture.host)}/${encodeURIComponent(a.fixture.test)}`);
    outlier = await until('the fixture\'s trend chart', chartSnap,
      (c) => c.points === a.fixture.points.length);
    outlier.marked = await page.$$eval('table#trend-points tr.anomalous', (trs) => trs.map((tr) => tr.dataset.run));
  }
  return { cells, legend, chart, reloaded, outlier };
}
scenarios.trends = trendsScenario;

// #/run/ID: a cell's samples view, reached from the cells table's link and reloaded: the dots
// of the strip plot (one per repetition), the list beside it and the table's figures.
async function cellSamples(a) {
  const snap = () => page.evaluate(() => ({
    hash: location.hash,
    dots: [...document.querySelectorAll('#run-samples-plot circle.sample')].map((c) => ({
      job: c.dataset.job, warmup: c.dataset.warmup === '1', counted: c.dataset.counted === '1',
      hollow: c.getAttribute('fill') === 'none',
    })),
    median_line: !!document.querySelector('#run-samples-plot line.median'),
    ci_band: !!document.querySelector('#run-samples-plot rect.ci'),
    list: [...document.querySelectorAll('#run-samples-list li')].map((li) => li.dataset.job),
    figures: document.querySelector('#run-samples-figures')?.textContent ?? null,
  }));
  await view(`/run/${a.run}`);
  const link = `table#run-cells tr[data-cell="${a.cell}"] a.cell-link`;
  await page.waitForSelector(link, { state: 'visible', timeout: STEP_MS });
  await page.click(link);
  const before = await until(`${a.n} dots`, snap, (s) => s.dots.length >= a.n);
  await page.reload({ waitUntil: 'domcontentloaded', timeout: STEP_MS });
  const after = await until(`${a.n} dots after the reload`, snap, (s) => s.dots.length >= a.n);
  if (a.shot) await page.screenshot({ path: a.shot });
  return { before, after };
}
scenarios.cell_samples = cellSamples;

// Issue 18's tables: #/compare/RUN at the viewport the test sets (the quick table, its headers,
// its "~", whether its flags column fits), #/run/RUN's cells as the API names them, and
// #/compare/PAIR_RUN's heatmap (colours against the median, the neutral band, legend, title).
async function tablesScenario(a) {
  await view(`/compare/${a.run}`);
  await page.waitForSelector('table#ratio-table tr[data-host] td.num .median', { timeout: STEP_MS });
  const quick = await page.evaluate(() => {
    const t = document.querySelector('table#ratio-table');
    const wrap = t.closest('.table-wrap');
    const flags = t.querySelector('thead th.flags');
    return {
      viewport: window.innerWidth,
      page_scroll_width: document.documentElement.scrollWidth,
      flags_right: flags ? flags.getBoundingClientRect().right : null,
      wrap_right: wrap.getBoundingClientRect().right,
      wrap_scrolls: wrap.scrollWidth > wrap.clientWidth,
      caption: t.caption.textContent,
      headers: [...t.querySelectorAll('thead th[data-label]')].map((th) => ({
        text: th.textContent, title: th.title, label: th.dataset.label })),
      rows: [...t.querySelectorAll('tbody tr[data-host]')].map((tr) => ({
        host: tr.dataset.host,
        tilde: [...tr.querySelectorAll('td.num')].map((td) => {
          const m = td.querySelector('.median');
          return m ? getComputedStyle(m, '::after').content.includes('~') : null;
        }),
      })),
    };
  });
  await view(`/run/${a.run}`);
  await page.waitForSelector('table#run-cells tr[data-cell]', { timeout: STEP_MS });
  const cells = await page.$$eval('table#run-cells tr[data-cell]', (trs) => trs.map((tr) => ({
    index: tr.dataset.cell, test: tr.querySelector('td.test').textContent })));
  let heat = null;
  if (a.pair_run) {
    await view(`/compare/${a.pair_run}`);
    await page.waitForSelector('table#heatmap td[data-pair]', { timeout: STEP_MS });
    heat = await page.evaluate(() => ({
      title: document.querySelector('#heatmap-title').textContent,
      column: document.querySelector('table#heatmap').dataset.column,
      legend: document.querySelector('#heatmap-legend').textContent,
      cells: [...document.querySelectorAll('table#heatmap td[data-pair]')].map((td) => ({
        pair: td.dataset.pair, dev: Number(td.dataset.dev), neutral: td.dataset.neutral === '1',
        bg: getComputedStyle(td).backgroundColor })),
    }));
  }
  return { quick, cells, heat };
}
scenarios.tables = tablesScenario;

// #/schedules (test_web_schedules.py): the form adds a.name with a bad cron first (the error
// at its field), then every a.every; the list shows it with its next firing; after it fired
// (within a.fire_ms) its run's page names it and links back; the row is paused, then deleted
// after its confirmation, and a reload no longer lists it. The schedules' writes the page made
// and what the API said at each step are returned for the test to assert.
async function schedulesScenario(a) {
  const writes = [];
  page.on('response', (resp) => {
    const req = resp.request();
    const path = new URL(req.url()).pathname;
    if (req.method() !== 'GET' && path.startsWith('/api/schedules')) {
      writes.push({ method: req.method(), path, auth: req.headers().authorization ?? null,
        status: resp.status() });
    }
  });
  const rowSel = `table#schedules-table tr[data-name="${a.name}"]`;
  const rowSnap = () => page.evaluate((sel) => {
    const tr = document.querySelector(sel);
    if (!tr) return null;
    const text = (c) => tr.querySelector(`td.${c}`)?.textContent.trim() ?? null;
    return {
      id: tr.dataset.schedule, current: tr.classList.contains('current'), when: text('when'),
      next: text('next'), next_ms: Number(tr.querySelector('td.next').dataset.nextMs),
      paused: text('paused'), runs: Number(text('runs')),
      last_run: tr.querySelector('td.last-run a')?.dataset.run ?? null,
      recent: [...tr.querySelectorAll('td.recent a[data-run]')].map((x) => x.dataset.run),
    };
  }, rowSel);
  const formErrors = () => page.$$eval('#schedule-form .field-error', (es) => es.map((e) => ({
    box: e.closest('[data-for]').dataset.for, field: e.dataset.field, text: e.textContent.trim(),
  })));

  await view('/schedules');
  await until('select#sched-what to offer a spec',
    () => page.$$eval('select#sched-what option', (os) => os.map((o) => o.value)),
    (vals) => vals.includes('spec'));
  await page.fill('input#sched-name', a.name);
  await page.selectOption('select#sched-what', 'spec');
  await page.fill('textarea#sched-spec', JSON.stringify(a.spec));
  await page.selectOption('select#sched-when', 'cron');
  await page.fill('input#sched-cron', a.bad_cron);
  await page.fill('input#sched-token', a.token);
  await page.click('button#schedule-submit');
  const cronError = await until('the cron field\'s error', formErrors, (es) => es.length > 0);
  const cronInvalid = await page.$eval('input#sched-cron', (i) => i.getAttribute('aria-invalid'));

  await page.selectOption('select#sched-when', 'every');
  await page.fill('input#sched-every', a.every);
  if (a.webhook) await page.fill('input#sched-webhook', a.webhook);
  await page.click('button#schedule-submit');
  const listed = await until('the new schedule in the list', rowSnap, (r) => r !== null);
  const apiListed = (await api(`/api/schedules/${listed.id}`));
  const secretShown = await page.evaluate(() => {
    const n = document.querySelector('#schedule-secret');
    return n && !n.hidden ? n.querySelector('#schedule-secret-value')?.textContent ?? '' : null;
  });
  const errorsAfter = await formErrors();

  const fired = await until('the schedule\'s first run in its row', rowSnap,
    (r) => r && r.last_run && r.recent.length > 0, a.fire_ms);
  await page.click(`${rowSel} td.last-run a`);
  const runSnap = () => page.evaluate(() => {
    const n = document.querySelector('#run-schedule');
    const link = n && n.querySelector('a');
    return { hash: location.hash, visible: !!n && !n.hidden, text: n ? n.textContent.trim() : null,
      href: link ? link.getAttribute('href') : null };
  });
  const runPage = await until('the run page naming its schedule', runSnap,
    (s) => s.visible && s.text.includes(a.name));
  await page.click('#run-schedule a');
  const followed = await until('the schedule\'s row marked', rowSnap, (r) => r && r.current);
  followed.hash = await hash();

  await view('/history');
  const historyLink = await until('the runs list naming the schedule', () => page.evaluate((rid) => {
    const link = document.querySelector(`tr[data-run="${rid}"] a.schedule-link`);
    return link ? { text: link.textContent.trim(), href: link.getAttribute('href') } : null;
  }, fired.last_run), (x) => x !== null && !/^schedule \d+$/.test(x.text));

  await view('/schedules');
  await page.click(`${rowSel} button.sched-toggle[data-action="pause"]`);
  const paused = await until('the row paused', rowSnap, (r) => r && r.paused === 'paused');
  const apiPaused = (await api(`/api/schedules/${listed.id}`)).paused;

  await page.click(`${rowSel} button.sched-delete`);
  const confirm = await page.textContent(`${rowSel} .confirm`);
  const listedBeforeConfirm = (await api('/api/schedules')).schedules.map((s) => String(s.id));
  await page.click(`${rowSel} button.sched-delete-confirm`);
  await until('the row gone', rowSnap, (r) => r === null);
  await page.reload({ waitUntil: 'load', timeout: STEP_MS });
  await page.waitForSelector('table#schedules-table[data-loaded="1"]', { timeout: STEP_MS });
  const afterReload = await rowSnap();
  const listedAfter = (await api('/api/schedules')).schedules.map((s) => String(s.id));
  return { writes, cron_error: cronError, cron_invalid: cronInvalid, listed,
    api_listed: apiListed, secret_shown: secretShown, errors_after: errorsAfter, fired, run_page: runPage, followed,
    history_link: historyLink, paused, api_paused: apiPaused, confirm,
    listed_before_confirm: listedBeforeConfirm, after_reload: afterReload,
    listed_after: listedAfter };
}
scenarios.schedules = schedulesScenario;

Object.assign(scenarios, verdictScenarios({ page: () => page, view, until, STEP_MS }));
Object.assign(scenarios, runScenarios({ page: () => page, view, until, settle, STEP_MS, RUN_MS,
  consoleErrors: () => consoleMessages.slice() }));
Object.assign(scenarios, viewsScenarios({ page: () => page, view, until, settle, STEP_MS }));
Object.assign(scenarios, hostScenarios({ page: () => page, view, until, STEP_MS, consoleErrors }));
Object.assign(scenarios, experimentScenarios({ page: () => page, view, until, STEP_MS }));

async function main() {
  if (!scenarios[scenario]) throw new Error(`no such scenario: ${scenario}`);
  // Connected, close() below closes this call's context and leaves the browser to the others.
  browser = args.ws ? await chromium.connect(args.ws, { timeout: 30000 })
    : await chromium.launch(LAUNCH);
  const viewport = { width: args.width ?? 1280, height: args.height ?? 800 };
  // ignore_https: the test's coordinator serves a certificate it made itself (test_web's
  // TLS test), which no CA the browser knows has signed.
  const context = await browser.newContext({
    viewport, acceptDownloads: true, ignoreHTTPSErrors: Boolean(args.ignore_https),
  });
  page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  page.on('pageerror', (e) => pageErrors.push(String(e.message || e)));
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()) &&
    consoleMessages.push(m.text()));
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText || '';
    if (why.includes('ERR_NETWORK_CHANGED')) networkChanged = true;
    consoleErrors.push(`${r.url()}: ${why}`);
  });
  const found = await scenarios[scenario](args);
  return { ok: true, ...found, page_errors: pageErrors };
}

// The shared browser: launched once, closed when the test file closes our stdin (or on SIGTERM,
// which Playwright's server handles by closing the browser).
async function serve() {
  const server = await chromium.launchServer(LAUNCH);
  process.stdout.write(JSON.stringify({ ws: server.wsEndpoint() }) + '\n');
  process.stdin.on('end', async () => {
    await Promise.race([server.close(), new Promise((r) => setTimeout(r, 10000))]);
    process.exit(0);
  });
  process.stdin.resume();
}

async function runScenario() {
  const overall = setTimeout(async () => {
    emit({ ok: false, error: `${scenario} took longer than ${CALL_MS} ms`, page_errors: pageErrors }, 1);
    if (browser) await Promise.race([browser.close(), new Promise((r) => setTimeout(r, 5000))]);
    process.exit(1);
  }, CALL_MS);

  try {
    emit(await main(), 0);
  } catch (e) {
    let where = null;
    let text = null;
    try {
      where = page && page.url();
      text = page && (await page.evaluate(() => document.body.innerText.slice(0, 1500)));
    } catch {
      // the page itself may be what failed
    }
    emit({
      ok: false, error: String(e.message || e), url: where, body: text, page_errors: pageErrors,
      console: consoleErrors.slice(-20),
    }, 1);
  } finally {
    clearTimeout(overall);
    if (browser) await browser.close();
  }
}

if (scenario === '--serve') {
  await serve();
} else {
  await runScenario();
}
