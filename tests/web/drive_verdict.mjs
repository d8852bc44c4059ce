// drive.mjs's scenarios of a run whose cells were not all judged (test_web_verdict.py): the run
// page's banner and its switch, the compare table with and without the disturbed samples, the
// Trends grid, and "measure again". They only read and click; the test asserts.

// ctx: {page() (this call's page), view(hash), until(what, probe, pred, ms), STEP_MS}.
export function verdictScenarios(ctx) {
  const { view, until, STEP_MS } = ctx;

  // The run page as the reader sees its verdict: the banner, its cells (those folded away
  // too), the anomalies' note, the switch and the job list's disturbed reasons.
  const runVerdict = () => ctx.page().evaluate(() => {
    const b = document.querySelector('#run-verdict');
    const item = (li) => ({
      row: li.dataset.row, test: li.dataset.test, verdict: li.dataset.verdict,
      ratio: li.dataset.ratio === '1', why: li.querySelector('.why')?.textContent ?? null,
      visible: li.checkVisibility(),
    });
    const note = document.querySelector('#run-anomalies-note');
    const sw = document.querySelector('input#run-disturbed');
    return {
      hash: location.hash,
      state: document.querySelector('#run-state')?.textContent.trim() ?? null,
      banner: b && !b.hidden ? {
        verdict: b.dataset.verdict,
        text: document.querySelector('#run-verdict-text')?.textContent.trim() ?? null,
        first_child: b.parentElement.firstElementChild.nextElementSibling === b,
        cells: [...b.querySelectorAll('ul.not-judged li')].map(item),
        more: b.querySelector('details.not-judged-more summary')?.textContent ?? null,
        again: !!b.querySelector('button#run-again'),
      } : null,
      note: note ? { text: note.textContent.trim(), verdict: note.dataset.verdict ?? null,
        hidden: note.hidden, before: note.dataset.before === '1' } : null,
      anomalies: document.querySelectorAll('ul#run-anomalies li').length,
      switch: sw ? { checked: sw.checked, label: sw.closest('label').textContent.trim() } : null,
      jobs: [...document.querySelectorAll('ul#run-jobs li[data-job]')].map((li) => ({
        id: li.dataset.job,
        badge: !!li.querySelector('.badge.disturbed'),
        reason: li.querySelector('.disturbed-reason')?.textContent ?? null,
      })),
    };
  });

  // The compare view's host table: per row, each value and ratio cell's median text and n.
  const compareTable = () => ctx.page().evaluate(() => ({
    hash: location.hash,
    switch: document.querySelector('input#compare-disturbed')?.checked ?? null,
    note: document.querySelector('#anomalies-note')?.textContent ?? null,
    before: document.querySelector('#anomalies-note')?.dataset.before === '1',
    verdict: (() => {
      const v = document.querySelector('#compare-verdict');
      return v && !v.hidden ? { verdict: v.dataset.verdict,
        text: v.querySelector('#compare-verdict-text').textContent,
        cells: v.querySelectorAll('ul.not-judged li').length } : null;
    })(),
    labels: [...document.querySelectorAll('table#ratio-table thead th[data-label]')]
      .map((th) => th.dataset.label),
    rows: [...document.querySelectorAll('table#ratio-table tbody tr[data-host]')].map((tr) => ({
      host: tr.dataset.host,
      cells: [...tr.querySelectorAll('td.num')].map((td) => ({
        median: td.querySelector('.median')?.textContent ?? null,
        count: td.querySelector('.count')?.textContent ?? null,
      })),
    })),
  }));

  // Whether a.run's page has shown what the analysis said of it (its verdict in the note).
  const verdictShown = (v) => v.note && v.note.verdict;

  // Marks the element sel before a click that mounts the view again: the hash moves at once,
  // the view only when the page's hashchange handler runs, so until the mark is gone a probe
  // still reads the view from before the click.
  const mark = (sel) => ctx.page().evaluate((s) => {
    const e = document.querySelector(s);
    if (e) e.dataset.before = '1';
  }, sel);

  return {
    // #/run/RUN: the banner once the verdict is in; then the switch on (the hash keeps it, a
    // reload too), and off again.
    async verdict_run(a) {
      await view(`/run/${a.run}`);
      const plain = await until('the run\'s verdict', runVerdict,
        (v) => verdictShown(v) && v.jobs.length === a.jobs);
      await mark('#run-anomalies-note');
      await ctx.page().click('input#run-disturbed');
      const included = await until('the verdict with disturbed samples', runVerdict,
        (v) => v.hash.endsWith('?disturbed=include') && verdictShown(v) && !v.note.before);
      await ctx.page().reload({ waitUntil: 'load', timeout: STEP_MS });
      const reloaded = await until('the verdict after a reload', runVerdict, verdictShown);
      await mark('#run-anomalies-note');
      await ctx.page().click('input#run-disturbed');
      const off = await until('the verdict without them again', runVerdict,
        (v) => !v.hash.includes('?') && verdictShown(v) && !v.note.before);
      return { plain, included, reloaded, off };
    },

    // #/run/RUN with GET /api/runs/RUN/anomalies answered by a.anomalies: what the page
    // makes of a verdict this machine cannot be relied on to produce.
    // With a.run_doc, GET /api/runs/RUN is answered by it too (a run still going, say).
    async verdict_run_fixture(a) {
      const serve = (path, doc) => ctx.page().route((u) => u.pathname === path,
        (route) => route.fulfill({ status: 200, contentType: 'application/json',
          body: JSON.stringify(doc) }));
      await serve(`/api/runs/${a.run}/anomalies`, a.anomalies);
      if (a.run_doc) await serve(`/api/runs/${a.run}`, a.run_doc);
      await view(`/run/${a.run}`);
      return until('the fixture\'s verdict', runVerdict,
        (v) => verdictShown(v) && v.anomalies === a.anomalies.anomalies.length);
    },

    // #/history: a.run against its default baseline, GET /api/runs/RUN/anomalies answered by
    // a.anomalies; the regressions' note.
    async verdict_history(a) {
      await ctx.page().route((u) => u.pathname === `/api/runs/${a.run}/anomalies`,
        (route) => route.fulfill({ status: 200, contentType: 'application/json',
          body: JSON.stringify(a.anomalies) }));
      await view('/history');
      await until(`select#history-run to offer run ${a.run}`,
        () => ctx.page().$$eval('select#history-run option', (os) => os.map((o) => o.value)),
        (vals) => vals.includes(String(a.run)));
      await ctx.page().selectOption('select#history-run', String(a.run));
      await ctx.page().selectOption('select#baseline', '');
      await ctx.page().click('button#regress-show');
      return until('the regressions\' note', () => ctx.page().evaluate(() => {
        const n = document.querySelector('#regressions-note');
        return { text: n.textContent, verdict: n.dataset.verdict ?? null,
          items: document.querySelectorAll('ul#regressions li').length };
      }), (n) => n.verdict === a.anomalies.verdict);
    },

    // #/compare/RUN without and with the disturbed samples.
    async verdict_compare(a) {
      await view(`/compare/${a.run}`);
      const ready = (t) => t.rows.length === a.rows && t.note !== null && t.note !== '';
      const plain = await until('the compare table', compareTable, ready);
      await mark('#anomalies-note');
      await ctx.page().click('input#compare-disturbed');
      const included = await until('the table with disturbed samples', compareTable,
        (t) => t.hash.endsWith('?disturbed=include') && ready(t) && !t.before &&
          t.rows.some((r) => r.cells.some((c) => c.median !== null)));
      return { plain, included };
    },

    // #/trends: each cell's verdict, class and tooltip, and the legend.
    async verdict_trends(a) {
      await view('/trends');
      const snap = () => ctx.page().evaluate(() => ({
        cells: [...document.querySelectorAll('table#trends-grid td[data-verdict]')].map((td) => ({
          host: td.dataset.host, test: td.dataset.test, verdict: td.dataset.verdict,
          run: td.dataset.run, classes: [...td.classList],
          title: td.querySelector('[title]')?.getAttribute('title') ?? null,
          text: td.textContent,
          bg: getComputedStyle(td).backgroundColor,
        })),
        legend: [...document.querySelectorAll('#trends-legend li')].map((li) => ({
          verdict: li.dataset.verdict, text: li.textContent, classes: [...li.classList],
          bg: getComputedStyle(li).backgroundColor,
        })),
      }));
      return until('the grid', snap, (s) => s.cells.length === a.n_cells);
    },

    // #/run/RUN's "measure again": the page it goes to, or the error it shows. With a.answer
    // ({status, body}) the page's own route answers the POST, and what it sent is returned.
    async verdict_again(a) {
      const sent = [];
      if (a.answer) {
        await ctx.page().route((u) => u.pathname === `/api/runs/${a.run}/again`, (route) => {
          sent.push({ method: route.request().method(), body: route.request().postData() });
          return route.fulfill({ status: a.answer.status, contentType: 'application/json',
            body: JSON.stringify(a.answer.body) });
        });
      }
      await view(`/run/${a.run}`);
      await ctx.page().waitForSelector('button#run-again', { state: 'visible', timeout: STEP_MS });
      await ctx.page().click('button#run-again');
      const out = await until('the new run\'s page or an error', () => ctx.page().evaluate(() => ({
        hash: location.hash,
        error: (() => {
          const e = document.querySelector('#run-again-error');
          return e && !e.hidden ? e.textContent : null;
        })(),
      })), (x) => x.error !== null || x.hash !== `#/run/${a.run}`);
      return { ...out, sent };
    },
  };
}
