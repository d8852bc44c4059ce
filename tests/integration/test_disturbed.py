"""Disturbed samples end to end: sockmatrix-agent --once with a CPU hog pinned on the sender's
CPU marks its samples disturbed, says why, and leaves them out of the summary; a quiet run's
samples are (mostly) clean."""
import os
import resource
import time
import unittest

from hog import CpuHog
from smtest import agent, unless_stolen

TEST_2010 = ["--workload", "stream", "--framing", "lines", "--msg-size", "128",
             "--count", "8192"]
REPS = 6


def once_json(*args):
    r = agent("--once", "--quiet", "--format", "json", *args)
    if r.rc != 0:
        raise AssertionError(f"exit {r.rc}: {r.err}")
    return r.json()


def busy_cpu_s():
    """CPU seconds all CPUs spent busy since boot (/proc/stat's aggregate line)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def samples(doc):
    return [(c["variant"], s) for c in doc["cells"] for s in c["samples"]]


@unittest.skipUnless((os.cpu_count() or 1) >= 2 and hasattr(os, "sched_setaffinity"),
                     "needs two CPUs to pin the sender apart from the receiver")
class DisturbedOnceTest(unittest.TestCase):
    @unless_stolen
    def test_a_hog_on_the_senders_cpu_makes_every_sample_disturbed_with_the_reason(self):
        args = [*TEST_2010, "--repetitions", str(REPS), "--warmup", "1", "--affinity", "0,1"]
        with CpuHog(cpu=0, seconds=120):
            doc = once_json(*args)
            table = agent("--once", "--quiet", "--repetitions", "2", "--warmup", "0",
                          "--affinity", "0,1", *TEST_2010)
        got = samples(doc)
        self.assertEqual(len(got), 2 * REPS)
        # The premise is that the hog takes the sender's CPU. It nearly always does, but a
        # sender that never waited for its CPU in a whole job was seen (runq_us_tx 0, the hog
        # pinned and spinning at nice -10): that sample is rightly not disturbed by the CPU
        # clauses. Each sample whose measured wait shows the hog is asserted disturbed with the
        # reason; the test stands on those, and says so when too few remain to stand on.
        contended = [(v, s) for v, s in got
                     if s["host"]["runq_us_tx"] / 1000 > 0.10 * s["host"]["job_ms"]]
        if len(contended) < REPS:
            self.skipTest(f"the hog on the sender's CPU delayed the sender in only "
                          f"{len(contended)} of {len(got)} samples")
        for variant, s in contended:
            h = s["host"]
            self.assertTrue(h["disturbed"], (variant, h))
            # The first clause that fires names it: the sender's wait for its CPU, or, where
            # the hog also delays the receiver's wake-ups, a thread's preemptions. On a virtual
            # machine whose host is busy, steal (clause 1) can fire first ("steal 50.0% of the
            # CPU time > 5% (2 of 4 ticks)" was seen).
            self.assertRegex(h["disturbed_reason"],
                             r"^(steal |(tx|rx) thread (waited for a CPU|preempted) )")
            self.assertIsNotNone(h["nivcsw_tx"])
            self.assertIn("steal_pct", h)
        for c in doc["cells"]:
            # Kept and counted, not summarised: the count is of the cell's disturbed samples.
            flagged = sum(1 for s in c["samples"] if s["host"]["disturbed"])
            self.assertEqual(c["disturbed"], flagged, c)
            if flagged == REPS:
                self.assertNotIn("seconds", c["summary"])
        self.assertEqual(table.rc, 0, table.err)
        self.assertIn("disturbed samples (not in the statistics above", table.out)
        self.assertRegex(table.out, r"\ntcp +0 +2 ")

    def test_disturbed_include_puts_them_back_in_the_summary(self):
        with CpuHog(cpu=0, seconds=60):
            doc = once_json(*TEST_2010, "--repetitions", "3", "--warmup", "0", "--affinity", "0,1",
                            "--disturbed", "include")
        # The premise is that the hog disturbed samples; it usually disturbs all 3, but one
        # was seen clean (2 of 3). With include every sample is in the summary, disturbed or
        # not; a cell the hog left wholly clean could not show it, and is said to be so.
        for c in doc["cells"]:
            if c["disturbed"] == 0:
                self.skipTest(f"the hog on the sender's CPU disturbed no sample of {c['variant']}")
            self.assertLessEqual(c["disturbed"], 3)
            self.assertEqual(c["summary"]["seconds"]["n"], 3)

    def test_quiet_runs_samples_are_mostly_clean(self):
        # Other work on the machine does disturb a sample now and then, and a busy moment can
        # last a whole run: a run passes when most of its samples are clean, and a machine gets
        # five runs to show it. On a machine that other work keeps busy (measured apart from the
        # rule: CPU time that neither this test nor its agent used) no run is quiet, and the
        # test says so rather than judging the rule by it.
        tries, foreign = [], []
        for _ in range(5):
            busy0, mine0, t0 = busy_cpu_s(), children_cpu_s(), time.monotonic()
            doc = once_json(*TEST_2010, "--repetitions", str(REPS), "--warmup", "1",
                            "--affinity", "0,1")
            wall = time.monotonic() - t0
            others = (busy_cpu_s() - busy0) - (children_cpu_s() - mine0)
            foreign.append(round(others / wall, 2))
            got = samples(doc)
            for _, s in got:
                self.assertIn("disturbed", s["host"])
                # Unknown is null, never 0 as a value (this VM has no cpufreq).
                self.assertNotEqual(s["host"]["cpu_mhz_tx"], 0)
            dirty = [s["host"]["disturbed_reason"] for _, s in got if s["host"]["disturbed"]]
            tries.append(dirty)
            if len(dirty) * 2 < len(got):
                return
            time.sleep(1)  # let a passing burst of other work end
        if min(foreign) > 0.25:
            self.skipTest(f"the machine was busy with other work in every run (CPUs used by "
                          f"others per second of wall time: {foreign}); no quiet run to judge")
        self.fail(f"most quiet samples came out disturbed in five runs (CPUs used by others: "
                  f"{foreign}): {tries}")


if __name__ == "__main__":
    unittest.main()
