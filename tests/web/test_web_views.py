"""Browser test of every view at the two window sizes the dashboard is made for (1,400x900 and
1,024x768): on a loopback fleet with two ended runs of 18 tests, Debian's Chromium (drive.mjs,
drive_views.mjs) loads each view the router has, and more than one state of some (a run and a
cell of it, a run and a run against another, the grid and a trend), and none may scroll the
page sideways, log an error to the console or throw. A screenshot of each view at each size
lands in the test's build folder (SM_SHOT_DIR; its path is printed): an artifact, not
committed. The router's list is read from web/app.js, so a view added there without a hash
here fails this test until it is visited."""
import os
import re
import sys
import tempfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from test_web import ROOT, WebCase, setUpModule, web_fleet  # noqa: E402,F401
from test_web_trends import WIDE  # noqa: E402

SIZES = [[1400, 900], [1024, 768]]
# The hashes that show each view, by the router's name for it; {a} and {b} are the two runs,
# {h1} and {h2} two hosts, {trend} a host's cell of a test. "hosts" is a host's page and
# "settings" the hosts' settings side by side: both visited whether or not the router has
# them yet.
VIEW_HASHES = {
    "fleet": ["#/fleet"],
    "launch": ["#/launch"],
    "run": ["#/run/{a}", "#/run/{a}/cell/0"],
    "compare": ["#/compare/{a}", "#/compare/{a}/{b}"],
    "history": ["#/history"],
    "hosts": ["#/hosts/{h1}"],
    "settings": ["#/settings/{h1},{h2}"],
    "trends": ["#/trends", "#/trends/{trend}"],
    "schedules": ["#/schedules"],
}
ALWAYS = ["hosts", "settings"]
# Views whose host names must each be a link to the host's page.
HOST_LINKED = ["#/trends", "#/compare/{a}/{b}", "#/schedules"]


def router_views():
    """The view names of web/app.js's `const routes = {...}`, in its order."""
    with open(os.path.join(ROOT, "web", "app.js"), encoding="utf-8") as f:
        m = re.search(r"const routes = \{([^}]*)\}", f.read())
    if not m:
        raise AssertionError("web/app.js has no `const routes = {...}` to read the views from")
    names = [re.split(r"\s*:", x.strip())[0].strip("'\" ") for x in m.group(1).split(",")]
    return [n for n in names if n]


def shot_dir():
    d = os.environ.get("SM_SHOT_DIR") or tempfile.mkdtemp(prefix="sm-views-")
    os.makedirs(d, exist_ok=True)
    return d


class ViewsWebTest(WebCase):
    @classmethod
    def setUpClass(cls):
        cls.f = web_fleet(n=2)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        cls.runs = []
        # Two runs of Trends' wide spec, each cell measured as often as it asks and no more
        # (the views are under test here, not the verdicts: a disturbed sample adds no round).
        wide = {**WIDE, "remeasure": 0}
        for _ in range(2):
            rid = cls.f.start_run(wide)
            assert cls.f.wait_run(rid, 240)["state"] == "done"
            cls.runs.append(rid)
        # A schedule that names its hosts (it fires at 03:00 UTC: not while the test runs).
        status, body = cls.f.post("/api/schedules", {"name": "nightly", "spec": WIDE,
                                                     "cron": "0 3 * * *",
                                                     "hosts": sorted(cls.f.hosts)})
        assert status == 201, (status, body)

    def hashes(self):
        names = router_views()
        missing = [n for n in names if n not in VIEW_HASHES]
        self.assertEqual(missing, [], "views of the router this test does not visit: add their "
                         "hashes to VIEW_HASHES")
        grid = self.f.get("/api/grid")
        cell = next(c for c in grid["cells"] if c["run"])
        q = lambda s: urllib.parse.quote(str(s), safe="")
        h1, h2 = sorted(self.f.hosts)[:2]
        fill = {"a": self.runs[0], "b": self.runs[1], "h1": q(h1), "h2": q(h2),
                "trend": "/".join(q(cell[k]) for k in ("host", "test", "metric"))}
        self.linked = [x.format(**fill) for x in HOST_LINKED]
        visit = names + [n for n in ALWAYS if n not in names]
        return [(n, x.format(**fill)) for n in visit for x in VIEW_HASHES[n]]

    def test_every_view_fits_both_sizes_without_an_error(self):
        views = self.hashes()
        shots = shot_dir()
        print(f"\nscreenshots of each view: {shots}", flush=True)
        res = self.drive(self.f, "views", timeout=600, sizes=SIZES,
                         hashes=[x for _, x in views], shots=shots)
        by = {(v["want"], v["width"]): v for v in res["views"]}
        for v in res["views"]:
            print(f"{v['width']}x{v['height']} {v['want']} -> {v['hash']}: page "
                  f"{v['scroll_width']} px wide, {len(v['errors'])} errors "
                  f"{v['errors'][:3] if v['errors'] else ''}", flush=True)
        self.assertEqual(len(by), len(views) * len(SIZES))
        for name, want in views:
            for width, height in SIZES:
                v = by[(want, width)]
                with self.subTest(view=want, size=f"{width}x{height}"):
                    self.assertTrue(os.path.getsize(v["shot"]) > 0)
                    # Routed to the view asked for, not sent back to the fleet as unknown.
                    self.assertEqual(v["hash"].split("?")[0].split("/")[1], name,
                                     f"{want} went to {v['hash']}: the router has no such view")
                    self.assertEqual(v["failed"], [])
                    self.assertLessEqual(v["scroll_width"], v["inner_width"],
                                         f"{want} scrolls sideways at {width} px: "
                                         f"{v['scroll_width']} px wide; past the window: "
                                         f"{v['past']}")
                    self.assertGreaterEqual(v["top_width"], v["scroll_width"],
                                            "the top bar stops short of the page's width")
                    self.assertEqual(v["errors"], [])
                    if want in self.linked:  # each host by name, each a link to its page
                        self.assertEqual(sorted(set(n for n, _ in v["host_links"])),
                                         sorted(self.f.hosts))
                        for n, href in v["host_links"]:
                            self.assertEqual(href, "#/hosts/" + urllib.parse.quote(n, safe=""))


if __name__ == "__main__":
    import unittest

    unittest.main()
