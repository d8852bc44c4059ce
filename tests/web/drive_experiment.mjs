// drive.mjs's scenario of "Find the cause" (test_web_experiment.py): a flagged run's page, the
// button on h2's anomaly clicked, and the experiment's own page followed until its answer is
// final. It only reads and clicks; the test asserts.

// ctx: {page() (this call's page), view(hash), until(what, probe, pred, ms), STEP_MS}.
export function experimentScenarios(ctx) {
  const { view, until, STEP_MS } = ctx;
  const page = () => ctx.page();

  const answer = () => page().evaluate(() => {
    const el = document.querySelector('#run-experiment');
    return {
      hash: location.hash,
      shown: !!el && !el.hidden,
      state: el?.dataset.state ?? null,
      summary: document.querySelector('#run-experiment-summary')?.textContent ?? null,
      rows: [...document.querySelectorAll('#run-experiment-table tbody tr')].map((tr) => ({
        item: tr.dataset.item, verdict: tr.dataset.verdict,
        reverse: tr.classList.contains('reverse'),
        share: tr.querySelector('td.share')?.textContent ?? null,
      })),
      buttons: document.querySelectorAll('button.find-cause').length,
    };
  });

  return {
    // a.run: the flagged run; a.host: the anomaly's host. The buttons the page offers, then
    // the experiment's page once it says "done" (within a.xp_ms).
    async find_the_cause(a) {
      // The host page first: its flagged test offers the same button.
      await view(`/hosts/${a.host}`);
      const hostRows = await until('the host\'s verdicts', () => page().evaluate(() =>
        [...document.querySelectorAll('table#host-verdicts tbody tr[data-test]')].map((tr) => ({
          test: tr.dataset.test, verdict: tr.dataset.verdict, run: tr.dataset.run,
          button: !!tr.querySelector('button.find-cause') }))), (rs) => rs.length > 0);
      await view(`/run/${a.run}`);
      const sel = `ul#run-anomalies li.anomaly[data-host="${a.host}"][data-kind=fleet] button.find-cause`;
      await page().waitForSelector(sel, { timeout: STEP_MS });
      const offered = await page().evaluate(() => [...document.querySelectorAll('ul#run-anomalies li.anomaly')]
        .map((li) => ({ host: li.dataset.host, kind: li.dataset.kind,
          test: li.querySelector('.test')?.textContent ?? '',
          button: !!li.querySelector('button.find-cause') })));
      await page().click(`${sel} >> nth=0`);
      const moved = await until('the experiment\'s page', answer,
        (s) => s.hash !== `#/run/${a.run}` && s.shown, STEP_MS);
      const done = await until('the experiment\'s answer', answer,
        (s) => s.state === 'done' || s.state === 'failed', a.xp_ms || 120000, 500);
      // Back on the run's page, its anomaly says what was proven, linked to the experiment.
      await view(`/run/${a.run}`);
      const proven = await until('the proven cause on the anomaly', () => page().evaluate((host) => {
        const p = document.querySelector(`ul#run-anomalies li.anomaly[data-host="${host}"] p[data-experiment]`);
        return p ? { cls: p.className, text: p.textContent, run: p.dataset.experiment,
          href: p.querySelector('a')?.getAttribute('href') ?? null } : null;
      }, a.host), (x) => x !== null);
      // And h2's page shows it under the flagged test's row.
      await view(`/hosts/${a.host}`);
      const hostCause = await until('the proven cause on the host page', () => page().evaluate(() => {
        const tr = document.querySelector('table#host-verdicts tr.experiment-row');
        const p = tr?.querySelector('p[data-experiment]');
        return p ? { after: tr.previousElementSibling?.dataset.test ?? null,
          after_verdict: tr.previousElementSibling?.dataset.verdict ?? null,
          host: tr.dataset.causeOf, cls: p.className, text: p.textContent, run: p.dataset.experiment,
          href: p.querySelector('a')?.getAttribute('href') ?? null } : null;
      }), (x) => x !== null);
      return { host_rows: hostRows, offered, first: moved, done, proven, host_cause: hostCause };
    },
  };
}
