// drive.mjs's scenarios that look at whole views at a given window size (test_web_views.py and
// test_web_trends.py): whether the page scrolls sideways, what it logged as errors, a screenshot
// of each; and the Trends page's grid box, chart ticks and confidence bars. They only read: the
// tests assert.

// ctx: {page() (this call's page), view(hash), until(what, probe, pred, ms), settle(probe, pred,
// ms, every), STEP_MS}.
export function viewsScenarios(ctx) {
  const { view, settle } = ctx;

  // Until the view has drawn what its requests brought: its text the same three looks in a
  // row (200 ms apart) and no "loading..." left, at most 10 s (a live view never settles).
  async function drawn() {
    let prev = null;
    let same = 0;
    await settle(async () => {
      const now = await ctx.page().evaluate(() => {
        const v = document.getElementById('view');
        const canvases = [...document.querySelectorAll('canvas')].map((c) => c.toDataURL().length);
        return v ? `${v.innerText}|${canvases.join(',')}` : '';
      });
      same = now && now === prev && !/loading\.\.\./.test(now) ? same + 1 : 0;
      prev = now;
      return same;
    }, (n) => n >= 3, 10000, 200);
  }

  // The page's width against the window's, the top bar's, and the elements that reach past
  // the window's right edge (the widest first), to say what makes a page scroll.
  const measure = () => ctx.page().evaluate(() => {
    const se = document.scrollingElement;
    const top = document.querySelector('header.top');
    // The innermost elements past the window's right edge: what widens the page is among them
    // (or an ancestor of theirs that does not clip them).
    const beyond = (el) => el.getBoundingClientRect().right > window.innerWidth + 0.5;
    const past = [];
    for (const el of document.querySelectorAll('body *')) {
      if (!beyond(el) || [...el.children].some(beyond)) continue;
      past.push({ tag: el.tagName.toLowerCase(), id: el.id, cls: el.className && String(el.className),
        text: (el.textContent || '').trim().slice(0, 40), right: Math.round(el.getBoundingClientRect().right) });
    }
    past.sort((a, b) => b.right - a.right);
    const main = document.querySelector('#view > *');
    return {
      hash: location.hash,
      view_class: main ? String(main.className) : '',
      scroll_width: se.scrollWidth,
      inner_width: window.innerWidth,
      top_width: top ? Math.round(top.getBoundingClientRect().width) : null,
      host_links: [...document.querySelectorAll('#view a.host-link')]
        .map((x) => [x.textContent, x.getAttribute('href')]),
      failed: [...document.querySelectorAll('#view p.error')].filter((p) => p.checkVisibility())
        .map((p) => p.textContent.trim()).filter(Boolean),
      past: past.slice(0, 5),
    };
  });

  // a.sizes [[w, h], ...] x a.hashes: each view loaded afresh at each size; its measures, the
  // console errors and uncaught exceptions while it loaded and drew, and a screenshot in a.shots.
  async function views(a) {
    const page = ctx.page();
    let errors = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => errors.push(`exception: ${String(e.message || e)}`));
    const out = [];
    for (const [width, height] of a.sizes) {
      await page.setViewportSize({ width, height });
      for (const hash of a.hashes) {
        errors = [];
        await page.goto('about:blank');
        await view(hash.replace(/^#/, ''));
        await drawn();
        const m = await measure();
        const name = `${width}x${height}-${hash.replace(/^#\/?/, '').replace(/[^A-Za-z0-9]+/g, '_') || 'root'}.png`;
        const shot = `${a.shots}/${name}`;
        await page.screenshot({ path: shot, fullPage: true });
        out.push({ want: hash, width, height, ...m, errors, shot });
      }
    }
    return { views: out };
  }

  // #/trends/HOST/TEST at a.width x a.height (GET /api/trends answered by a.fixture when
  // given): the grid's box and the page's width, the x ticks' texts, and each point's 95% CI as
  // drawn: the height in pixels of the band's colour in the canvas' column beside the point,
  // and the page's visible text and hover texts (checked for the API's words).
  async function trendsFit(a) {
    const page = ctx.page();
    await page.setViewportSize({ width: a.width, height: a.height });
    if (a.fixture)
      await page.route((u) => u.pathname === '/api/trends', (route) => route.fulfill({
        status: 200, contentType: 'application/json', body: JSON.stringify(a.fixture),
      }));
    await view(`/trends/${encodeURIComponent(a.host)}/${encodeURIComponent(a.test)}`);
    await ctx.until('the grid and the trend chart', () => page.evaluate(() =>
      !!document.querySelector('table#trends-grid') && !!window.Chart &&
      !!document.querySelector('canvas#trend-chart') &&
      !!window.Chart.getChart(document.querySelector('canvas#trend-chart'))), (x) => x);
    await drawn();
    return page.evaluate(() => {
      const se = document.scrollingElement;
      const grid = document.querySelector('table#trends-grid');
      const box = grid.parentElement;
      const canvas = document.querySelector('canvas#trend-chart');
      const chart = window.Chart.getChart(canvas);
      const ticks = chart.scales.x.ticks.map((t) => (Array.isArray(t.label) ? t.label.join(' ') : String(t.label)));
      // The canvas' pixels in device pixels: a column 7 CSS px right of each point (past the
      // point's mark and the bar's line, inside the box around it), counted where it is
      // tinted with the chart's blue (b well above r), so the band and box are measured as
      // drawn, not as computed.
      const ratio = canvas.width / canvas.getBoundingClientRect().width;
      const g = canvas.getContext('2d');
      const meta = chart.getDatasetMeta(2);
      const ci = meta.data.map((el) => {
        const x = Math.round((el.x + 7) * ratio);
        const col = g.getImageData(x, 0, 1, canvas.height).data;
        let n = 0;
        for (let i = 0; i < col.length; i += 4)
          if (col[i + 3] > 0 && col[i + 2] - col[i] > 25) n++;
        return Math.round(n / ratio);
      });
      const hover = [...document.querySelectorAll('#view [title], #view [aria-label]')]
        .flatMap((e) => [e.getAttribute('title'), e.getAttribute('aria-label')]).filter(Boolean);
      // Scrolled to its last test, the grid still shows its hosts (the row headers stick).
      box.scrollLeft = box.scrollWidth;
      const rowHead = grid.querySelector('tbody th').getBoundingClientRect();
      const hosts_in_view = rowHead.left >= box.getBoundingClientRect().left - 1 && rowHead.width > 0;
      box.scrollLeft = 0;
      const legend = chart.legend ? chart.legend.legendItems.map((i) => i.text) : [];
      const titles = [chart.options.scales.x.title.text, chart.options.scales.y.title.text];
      return {
        scroll_width: se.scrollWidth,
        inner_width: window.innerWidth,
        top_width: Math.round(document.querySelector('header.top').getBoundingClientRect().width),
        grid_width: Math.round(grid.getBoundingClientRect().width),
        box_width: Math.round(box.getBoundingClientRect().width),
        box_scrolls: box.scrollWidth > box.clientWidth && /(auto|scroll)/.test(getComputedStyle(box).overflowX),
        box_right: Math.round(box.getBoundingClientRect().right),
        columns: grid.querySelectorAll('thead th').length - 1,
        hosts_in_view,
        grid_note: document.querySelector('#trends-grid-note').textContent,
        ticks,
        points: Number(canvas.dataset.points),
        ci_px: ci,
        text: document.body.innerText,
        hover,
        chart_text: [...legend, ...titles],
      };
    });
  }

  return { views, trends_fit: trendsFit };
}
