// drive.mjs's scenarios of a run's page (test_web_run.py): its results first (verdict,
// anomalies, table and plots, then the jobs), the words of its buttons, the plots' geometry,
// the page's width at two window sizes, and a run watched live to its end. They only read and
// click; the test asserts.

// ctx: {page(), view(hash), until(what, probe, pred, ms), settle(probe, pred, ms), STEP_MS,
// RUN_MS, consoleErrors() (the page's console errors so far)}.
export function runScenarios(ctx) {
  const { view, until, settle, STEP_MS, RUN_MS } = ctx;
  const page = () => ctx.page();

  // The run page's sections in document order, with where each is drawn (hidden ones too).
  const results = () => page().evaluate(() => {
    const sections = [...document.querySelectorAll(
      '#run-verdict, #run-anomalies-card, #run-results, #run-jobs-card')].map((e) => ({
      id: e.id, hidden: e.hidden, top: e.hidden ? null : e.getBoundingClientRect().top }));
    const table = [...document.querySelectorAll('table#run-table tbody tr[data-host]')].map((tr) => ({
      host: tr.dataset.host,
      link: tr.querySelector('th a.host-link')?.getAttribute('href') ?? null,
      cells: [...tr.querySelectorAll('td.num')].map((td) => ({
        median: td.querySelector('.median')?.textContent ?? null,
        ci: td.querySelector('.ci')?.textContent ?? null,
      })),
    }));
    const words = [...document.querySelectorAll('.view a.button, .view button, .view-head a')]
      .filter((e) => !e.hidden && e.closest('[hidden]') === null)
      .map((e) => ({ id: e.id, text: e.textContent.trim(), href: e.getAttribute('href') }));
    const note = document.querySelector('#run-anomalies-note');
    return {
      hash: location.hash,
      state: document.querySelector('#run-state')?.textContent.trim() ?? null,
      sections, table, words,
      labels: [...document.querySelectorAll('table#run-table thead th[data-label]')]
        .map((th) => th.dataset.label),
      plots: [...document.querySelectorAll('#run-plots figure')].map((f) => f.dataset.column),
      verdict: note?.dataset.verdict ?? null,
      host_links: [...document.querySelectorAll('.view a.host-link')].length,
    };
  });

  // Whether the page is wider than its window (a horizontal page scroll).
  const width = () => page().evaluate(() => ({
    scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
  }));

  // One plot of #root (the run page's #run-plots or the compare view's #compare-chart): where
  // each host's point is against the axis, the factor beside it, the ticks and the notes.
  const plot = (root, column) => page().evaluate(([root, column]) => {
    const fig = [...document.querySelectorAll(`#${root} figure`)]
      .find((f) => f.dataset.column === column);
    if (!fig) return null;
    const axis = fig.querySelector('line.axis-x').getBoundingClientRect();
    const points = Object.fromEntries([...fig.querySelectorAll('circle.point')].map((c) => {
      const r = c.getBoundingClientRect();
      return [c.dataset.host, { above_axis: axis.top - (r.top + r.height / 2),
        flagged: c.classList.contains('flagged'), state: c.dataset.state ?? null,
        median: c.dataset.median === undefined ? null : Number(c.dataset.median) }];
    }));
    return {
      scale: fig.dataset.scale, flagged: fig.dataset.flagged,
      figures: document.querySelectorAll(`#${root} figure`).length,
      points,
      factor: Object.fromEntries([...fig.querySelectorAll('text.factor')]
        .map((t) => [t.dataset.host, t.textContent])),
      ticks: [...fig.querySelectorAll('text.tick')].map((t) => t.textContent),
      labels: [...fig.querySelectorAll('a.host-link')].map((a) => ({
        href: a.getAttribute('href'), text: a.textContent })),
      notes: [...fig.querySelectorAll('ul.plot-notes li')].map((li) => li.textContent),
      drop_downs: document.querySelectorAll('.view select').length,
    };
  }, [root, column]);

  return {
    // #/run/RUN of an ended run: its sections, table, words and plots; then the page's width
    // at each of a.sizes on the run page and the compare view.
    async run_results(a) {
      await view(`/run/${a.run}`);
      const seen = await until('the run\'s table, plots and verdict', results,
        (r) => r.table.length === a.rows && r.plots.length === a.columns && r.verdict);
      const widths = [];
      for (const [w, hgt] of a.sizes) {
        await page().setViewportSize({ width: w, height: hgt });
        for (const where of [`/run/${a.run}`, `/compare/${a.run}`]) {
          await view(where);
          await until(`${where}'s plots`, () => page().$$eval('figure.dotplot-fig', (f) => f.length),
            (n) => n === a.columns);
          await page().waitForTimeout(300);
          widths.push({ size: [w, hgt], view: where, ...(await width()) });
        }
      }
      const compareWords = await page().evaluate(() => ({
        title: document.querySelector('.view h1')?.textContent ?? null,
        links: [...document.querySelectorAll('.view-head a, .view-head button')]
          .map((e) => ({ id: e.id, text: e.textContent.trim(), href: e.getAttribute('href') })),
      }));
      return { ...seen, widths, compare_words: compareWords, console_errors: ctx.consoleErrors() };
    },

    // a.column's plot on the run page and on the compare view, once it marks a host (or, with
    // a.unflagged, once it is drawn); the whole run page in a.shot and the compare view in
    // a.compare_shot when given.
    async run_plot(a) {
      const ready = (p) => p && (a.unflagged ? p.figures > 0 : p.flagged);
      await view(`/run/${a.run}`);
      const onRun = await until(`the plot of ${a.column}`, () => plot('run-plots', a.column), ready);
      if (a.shot) await page().screenshot({ path: a.shot, fullPage: true });
      await view(`/compare/${a.run}`);
      const onCompare = await until(`the compare view's plot of ${a.column}`,
        () => plot('compare-chart', a.column), ready);
      if (a.compare_shot) await page().screenshot({ path: a.compare_shot, fullPage: true });
      return { run: onRun, compare: onCompare, console_errors: ctx.consoleErrors() };
    },

    // #/run/RUN while it runs, sampled until it has ended and a little after: the job said to be
    // running and whether the list shows it, the time left, the figures so far; then the panels.
    async run_live(a) {
      await view(`/run/${a.run}`);
      const snap = () => page().evaluate(() => {
        const ul = document.querySelector('ul#run-jobs');
        const now = document.querySelector('#run-now');
        const job = now && !now.hidden ? now.dataset.job : null;
        const li = job ? ul.querySelector(`li[data-job="${job}"]`) : null;
        const u = ul.getBoundingClientRect(), r = li ? li.getBoundingClientRect() : null;
        const eta = document.querySelector('#run-eta');
        return {
          state: document.querySelector('#run-state')?.textContent.trim() ?? null,
          now: job, now_text: job ? now.textContent : null,
          li_state: li ? li.dataset.state : null,
          li_current: li ? li.classList.contains('current') : null,
          li_in_view: r ? r.top >= u.top - 1 && r.bottom <= u.bottom + 1 : null,
          list_scrolled: ul.scrollTop,
          eta: eta && !eta.hidden ? eta.textContent : null,
          medians: document.querySelectorAll('table#run-table td .median').length,
          table: [...document.querySelectorAll('table#run-table tbody tr[data-host]')].map((tr) =>
            [tr.dataset.host, ...[...tr.querySelectorAll('td.num')].map((td) =>
              td.querySelector('.median')?.textContent ?? null)]),
          results_note: document.querySelector('#run-results-note')?.textContent ?? null,
          anomalies_title: document.querySelector('#run-anomalies-card h2')?.textContent ?? null,
          anomalies_note: document.querySelector('#run-anomalies-note')?.textContent ?? null,
          anomalies_note_hidden: document.querySelector('#run-anomalies-note')?.hidden ?? null,
        };
      });
      const samples = [];
      await until('the run to end', async () => {
        const s = await snap();
        samples.push(s);
        return s;
      }, (s) => ['done', 'failed', 'cancelled'].includes(s.state), RUN_MS, 250);
      const end = await settle(snap, (s) => s.anomalies_title === 'Anomalies' &&
        !/so far/i.test(s.anomalies_note) && !/so far/i.test(s.results_note || ''), 15000);
      const running = samples.filter((s) => s.state === 'running');
      return { running, end, console_errors: ctx.consoleErrors() };
    },
  };
}
