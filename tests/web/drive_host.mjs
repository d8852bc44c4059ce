// drive.mjs's scenarios of the host pages (test_web_host.py, test_web.py's shaped lab): the
// Fleet's latest verdict column and host links, History's flag and inconclusive counts, a host's
// page (#/hosts/NAME) and an old #/hosts/a,b link. They only read and click; the test asserts.

// ctx: {page() (this call's page), view(hash), until(what, probe, pred, ms), STEP_MS,
// consoleErrors (the call's console errors so far)}.
export function hostScenarios(ctx) {
  const { view, until, STEP_MS } = ctx;
  const page = () => ctx.page();
  const errors = () => ctx.consoleErrors.filter((e) => !/loaded .* again after a network change/.test(e));
  const shot = async (a) => {
    if (a.shot) await page().screenshot({ path: a.shot, fullPage: true });
  };

  return {
    // #/fleet once the verdicts are in: per row the name's link, the verdict and its tests.
    async fleet_verdicts(a) {
      await view('/fleet');
      await page().waitForSelector('table#fleet-table[data-verdicts=loaded] tbody tr[data-agent]',
        { timeout: STEP_MS });
      const rows = await page().evaluate(() => [...document.querySelectorAll('table#fleet-table tbody tr[data-agent]')]
        .map((tr) => {
          const v = tr.querySelector('td.verdict .host-verdict');
          const link = tr.querySelector('th a.host-link');
          return {
            agent: tr.dataset.agent,
            link: link ? { text: link.textContent, href: link.getAttribute('href') } : null,
            verdict: v ? v.dataset.verdict : null,
            word: v ? v.querySelector('.badge').textContent.trim() : null,
            cls: v ? [...v.querySelector('.badge').classList].find((c) => c.startsWith('verdict-') && c !== 'verdict-word') : null,
            tests: v && v.querySelector('.flagged-tests') ? v.querySelector('.flagged-tests').textContent.trim() : '',
          };
        }));
      const settings = await page().evaluate(() => {
        const l = document.querySelector('#compare-hosts-link');
        return l ? { text: l.textContent, href: l.getAttribute('href') } : null;
      });
      await shot(a);
      return { rows, settings, console_errors: errors() };
    },

    // #/history once every ended run shows its counts: per row the counts, the times and the
    // host links of the regressions shown.
    async history_counts(a) {
      await view('/history');
      const snap = () => page().evaluate(() => [...document.querySelectorAll('table#history-table tbody tr[data-run]')]
        .map((tr) => ({
          run: tr.dataset.run,
          state: tr.querySelector('td.state .badge').textContent,
          flags: tr.querySelector('td.flags')?.dataset.count ?? null,
          flags_text: tr.querySelector('td.flags')?.textContent ?? null,
          inconclusive: tr.querySelector('td.inconclusive')?.dataset.count ?? null,
          created: tr.querySelector('td.created').textContent,
          finished: tr.querySelector('td.finished').textContent,
        })));
      const rows = await until('every ended run\'s counts', snap,
        (rs) => rs.length >= (a.runs || 1) && rs.every((r) => r.state === 'running' || r.flags !== null));
      // The regressions of the newest run, shown at once: their host names.
      await until('the regressions note', () => page().evaluate(() =>
        document.querySelector('#regressions-note').textContent), (t) => t && t !== 'loading...');
      const hosts = await page().evaluate(() => [...document.querySelectorAll('#regressions li.anomaly')]
        .map((li) => ({ kind: li.dataset.kind, text: li.querySelector('strong.host').textContent,
          link: li.querySelector('strong.host a.host-link')?.getAttribute('href') ?? null })));
      await shot(a);
      return { rows, hosts, console_errors: errors() };
    },

    // #/hosts/NAME once its parts are in: the verdicts (and their sparklines), the
    // fingerprint's summary and differences, the jobs; then the "host settings" link followed.
    async host_page(a) {
      await view(`/hosts/${encodeURIComponent(a.host)}`);
      await page().waitForSelector('#host-verdicts tbody tr, #host-verdicts-none', { timeout: STEP_MS });
      await page().waitForSelector('#host-jobs tbody tr, #host-jobs-none', { timeout: STEP_MS });
      await page().waitForSelector('#host-fp-summary', { timeout: STEP_MS });
      await until('the sparklines', () => page().evaluate(() =>
        [...document.querySelectorAll('#host-verdicts td.spark')].every((td) => td.querySelector('svg, span'))),
      (ok) => ok);
      const found = await page().evaluate(() => ({
        hash: location.hash,
        title: document.querySelector('h1').textContent,
        tab: document.querySelector('nav a[aria-current=page]')?.dataset.route ?? null,
        summary: document.querySelector('#host-summary').textContent,
        verdict: document.querySelector('#host-summary .host-verdict')?.dataset.verdict ?? null,
        verdicts: [...document.querySelectorAll('#host-verdicts tbody tr')].map((tr) => ({
          row: tr.dataset.row, test: tr.dataset.test, verdict: tr.dataset.verdict, run: tr.dataset.run,
          median: tr.dataset.median,
          word: tr.querySelector('td.verdict').textContent.trim(),
          value: tr.querySelector('td.value').textContent,
          fleet: tr.querySelector('td.fleet').textContent,
          against: tr.querySelector('td.against').textContent,
          points: tr.querySelector('td.spark svg')?.dataset.points ?? null,
          flagged: tr.querySelector('td.spark svg')?.dataset.flagged ?? null,
        })),
        fp: {
          hash: document.querySelector('#host-fp-summary').dataset.hash,
          differ: document.querySelector('#host-fp-summary').dataset.differ,
          text: document.querySelector('#host-fp-summary').textContent,
          differs: [...document.querySelectorAll('#host-differs tbody tr')].map((tr) => ({
            item: tr.dataset.item, value: tr.querySelector('td.host-value').textContent,
            fleet: tr.querySelector('td.fleet-value').textContent })),
          items: document.querySelectorAll('#host-fp-items tbody tr').length,
          history: [...document.querySelectorAll('#host-fp-history li[data-hash]')].map((li) => li.dataset.hash),
          settings: document.querySelector('#host-settings-link')?.getAttribute('href') ?? null,
          settings_text: document.querySelector('#host-settings-link')?.textContent ?? null,
          // Text directly in the part's box, outside any element: a value that was not one.
          stray_text: [...document.querySelector('#host-fp-part > div').childNodes]
            .filter((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim()).map((n) => n.textContent),
        },
        jobs: [...document.querySelectorAll('#host-jobs tbody tr')].map((tr) => ({
          id: tr.dataset.job, state: tr.dataset.state,
          figure: tr.querySelector('td.figure').textContent,
          ended: tr.querySelector('td.ended').textContent,
        })),
      }));
      await shot(a);
      return { ...found, console_errors: errors() };
    },

    // An old link to the side by side: where it lands, and the view it shows.
    async old_hosts_link(a) {
      await view(`/hosts/${a.hosts.map(encodeURIComponent).join(',')}`);
      const at = await until('the host settings', () => page().evaluate(() => location.hash),
        (h) => h.startsWith('#/settings/'));
      await page().waitForSelector('table#hosts-table tbody tr', { timeout: STEP_MS });
      const found = await page().evaluate(() => ({
        title: document.querySelector('h1').textContent,
        tab: document.querySelector('nav a[aria-current=page]')?.dataset.route ?? null,
        button: document.querySelector('#hosts-compare').textContent,
        heads: [...document.querySelectorAll('table#hosts-table thead th[data-host] a.host-link')]
          .map((x) => x.getAttribute('href')),
      }));
      return { hash: at, ...found, console_errors: errors() };
    },
  };
}
