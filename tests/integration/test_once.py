"""sockmatrix-agent --once end to end: real sockets, every workload and transport."""
import csv
import io
import os
import re
import unittest

from smtest import agent

LINES_MARKERS = len("profile_start\r\n") + len("profile_end\r\n")

METRICS = ["bytes", "seconds", "throughput_MBps", "msgs_per_s", "tx_user_s", "tx_sys_s",
           "rx_user_s", "rx_sys_s", "cpu_s_per_GB", "tcp_retrans", "tcp_rtt_us", "rtt_p50_us",
           "rtt_p90_us", "rtt_p99_us", "rtt_p999_us", "rtt_max_us", "rt_per_s", "connects_per_s",
           "connect_p50_us", "user_s", "sys_s", "ttfb_ms", "connect_ms", "tls_ms", "transfers",
           "new_connections", "first_MBps", "first_ttfb_ms", "first_user_s"]
SUMMARY_KEYS = {"n", "median", "mean", "stddev", "min", "max", "ci95_low", "ci95_high"}


def once_json(*args):
    r = agent("--once", "--quiet", "--format", "json", *args)
    if r.rc != 0:
        raise AssertionError(f"exit {r.rc}: {r.err}")
    return r.json()


def cell(doc, variant):
    for c in doc["cells"]:
        if c["variant"] == variant:
            return c
    raise AssertionError(f"no cell {variant} in {[c['variant'] for c in doc['cells']]}")


class StreamTest(unittest.TestCase):
    def test_bytes_moved_equal_bytes_asked_on_both_transports(self):
        doc = once_json("--transport", "tcp,unix", "--bytes", "3M", "--msg-size", "64K",
                        "--repetitions", "2", "--warmup", "0")
        for variant in ("tcp", "unix"):
            c = cell(doc, variant)
            self.assertEqual(len(c["samples"]), 2)
            for s in c["samples"]:
                self.assertEqual(s["bytes"], 3 * 1024 * 1024)
                self.assertGreater(s["seconds"], 0)
                self.assertAlmostEqual(s["throughput_MBps"], s["bytes"] / s["seconds"] / 1e6,
                                       delta=s["throughput_MBps"] * 1e-9)
                cpu = s["tx_user_s"] + s["tx_sys_s"] + s["rx_user_s"] + s["rx_sys_s"]
                self.assertAlmostEqual(s["cpu_s_per_GB"], cpu / (s["bytes"] / 1e9), places=9)
        tcp = cell(doc, "tcp")["samples"][0]
        self.assertGreater(tcp["sndbuf"], 0)  # what the kernel granted, beside the numbers
        self.assertGreater(tcp["rcvbuf"], 0)
        self.assertIn("tcp_rtt_us", tcp)
        self.assertIn("tcp_retrans", tcp)
        self.assertNotIn("tcp_rtt_us", cell(doc, "unix")["samples"][0])

    def test_count_with_a_short_last_write_moves_count_times_size(self):
        doc = once_json("--count", "333", "--msg-size", "1000", "--repetitions", "1",
                        "--warmup", "0", "--read-size", "777")
        for c in doc["cells"]:
            self.assertEqual(c["samples"][0]["bytes"], 333000)

    def test_lines_framing_moves_8192_lines_of_130_bytes_plus_markers(self):
        doc = once_json("--framing", "lines", "--msg-size", "128", "--count", "8192",
                        "--repetitions", "1", "--warmup", "0")
        for c in doc["cells"]:
            s = c["samples"][0]
            self.assertEqual(s["bytes"], 8192 * 130 + LINES_MARKERS)
            self.assertAlmostEqual(s["msgs_per_s"], 8192 / s["seconds"], delta=1e-6 * s["msgs_per_s"])
            self.assertEqual(c["params"]["framing"], "lines")

    def test_duration_runs_at_least_that_long_in_whole_messages(self):
        doc = once_json("--duration-ms", "200", "--msg-size", "4K", "--repetitions", "1",
                        "--warmup", "0")
        for c in doc["cells"]:
            s = c["samples"][0]
            self.assertGreater(s["bytes"], 0)
            self.assertEqual(s["bytes"] % 4096, 0)
            # The sender wrote until its clock passed the duration: the job lasted that long.
            self.assertGreaterEqual(s["host"]["job_ms"], 200, s["host"])
            # The receiver's interval ends at the last byte; a sender that lost its CPU
            # between its last write and its look at the clock ends it early, and the agent
            # then sets the sample aside as disturbed (a busy machine, here), else it spans
            # the duration.
            if not s["host"]["disturbed"]:
                self.assertGreaterEqual(s["seconds"], 0.19, s["host"])

    def test_nodelay_and_cork_variants_run_as_separate_cells(self):
        doc = once_json("--count", "64", "--msg-size", "100", "--nodelay=off,on",
                        "--repetitions", "1", "--warmup", "0")
        self.assertEqual([c["variant"] for c in doc["cells"]], ["tcp", "tcp+nodelay", "unix"])
        self.assertTrue(cell(doc, "tcp+nodelay")["params"]["nodelay"])
        doc = once_json("--count", "64", "--msg-size", "100", "--cork", "--transport", "tcp",
                        "--sndbuf", "64K", "--rcvbuf", "64K", "--repetitions", "1", "--warmup",
                        "0")
        c = cell(doc, "tcp+cork")
        self.assertTrue(c["params"]["cork"])
        self.assertEqual(c["samples"][0]["bytes"], 6400)


class PlacementTest(unittest.TestCase):
    def test_affinity_pins_sender_and_receiver_and_each_sample_says_where(self):
        pairs = [("0,0", 0, 0)] + ([("0,1", 0, 1)] if os.cpu_count() >= 2 else [])
        for arg, tx, rx in pairs:
            doc = once_json("--affinity", arg, "--count", "20", "--repetitions", "2",
                            "--warmup", "0")
            for c in doc["cells"]:
                for s in c["samples"]:
                    self.assertEqual((s["tx_cpu"], s["rx_cpu"]), (tx, rx), arg)

    def test_unpinned_samples_still_record_their_cpus(self):
        doc = once_json("--count", "20", "--repetitions", "2", "--warmup", "0")
        for c in doc["cells"]:
            for s in c["samples"]:
                self.assertIn(s["tx_cpu"], range(os.cpu_count()))
                self.assertIn(s["rx_cpu"], range(os.cpu_count()))

    def test_table_says_where_the_threads_ran(self):
        r = agent("--once", "--quiet", "--count", "20", "--repetitions", "2", "--warmup", "0",
                  "--affinity", "0,0")
        self.assertIn("threads pinned: sender on CPU 0, receiver on CPU 0", r.out)

    def test_an_unusable_cpu_is_refused_before_anything_runs(self):
        r = agent("--once", "--affinity", f"0,{os.cpu_count() + 64}")
        self.assertEqual(r.rc, 2)
        self.assertIn("--affinity", r.err)
        self.assertEqual(r.out, "")


class RrConnectTest(unittest.TestCase):
    def test_rr_counts_round_trips_and_orders_percentiles(self):
        doc = once_json("--workload", "rr", "--count", "500", "--req-size", "100",
                        "--resp-size", "3000", "--repetitions", "2", "--warmup", "0")
        for variant in ("tcp", "unix"):
            for s in cell(doc, variant)["samples"]:
                self.assertEqual(s["bytes"], 500 * 3100)
                self.assertGreater(s["rt_per_s"], 0)
                self.assertAlmostEqual(s["rt_per_s"], 500 / s["seconds"], delta=1e-6 * s["rt_per_s"])
                chain = [s[k] for k in ("rtt_p50_us", "rtt_p90_us", "rtt_p99_us", "rtt_p999_us",
                                        "rtt_max_us")]
                self.assertGreater(chain[0], 0)
                self.assertEqual(chain, sorted(chain))
                # Every round trip took at least the median, and the whole job at least
                # count x p50 / 2 (half are above the median).
                self.assertGreaterEqual(s["seconds"] * 1e6, 250 * s["rtt_p50_us"])

    def test_connect_opens_count_connections_on_both_transports(self):
        doc = once_json("--workload", "connect", "--count", "200", "--repetitions", "2",
                        "--warmup", "0")
        for variant in ("tcp", "unix"):
            for s in cell(doc, variant)["samples"]:
                self.assertAlmostEqual(s["connects_per_s"], 200 / s["seconds"],
                                       delta=1e-6 * s["connects_per_s"])
                self.assertGreater(s["connect_p50_us"], 0)
                self.assertLess(s["connect_p50_us"] / 1e6, s["seconds"])


class ReportTest(unittest.TestCase):
    def test_json_carries_every_documented_key(self):
        seen = set()
        for wl in ("stream", "rr", "connect", "http"):
            amount = ("--tls", "--bytes", "256K", "--repeat", "2") if wl == "http" else (
                "--count", "50")
            # Every sample in the summary, whatever else the machine ran meanwhile.
            doc = once_json("--workload", wl, *amount, "--repetitions", "3", "--warmup", "1",
                            "--disturbed", "include")
            self.assertEqual(doc["version"], 1)
            for k in ("hostname", "kernel", "cpu_model", "cores", "mem_bytes", "congestion",
                      "lo_mtu", "loadavg"):
                self.assertIn(k, doc["host"])
            self.assertGreater(doc["host"]["cores"], 0)
            for c in doc["cells"]:
                for k in ("workload", "transport", "params", "samples", "warmup_samples",
                          "summary"):
                    self.assertIn(k, c)
                self.assertEqual(c["workload"], wl)
                self.assertEqual(len(c["samples"]), 3)
                self.assertEqual(len(c["warmup_samples"]), 1)
                for name, summ in c["summary"].items():
                    self.assertTrue(SUMMARY_KEYS <= set(summ), f"{name}: {summ}")
                    self.assertEqual(summ["n"], 3)
                    self.assertLessEqual(summ["ci95_low"], summ["median"])
                    self.assertLessEqual(summ["median"], summ["ci95_high"])
                    values = sorted(s[name] for s in c["samples"])
                    self.assertEqual(summ["median"], values[1])
                    self.assertEqual(summ["min"], values[0])
                    self.assertEqual(summ["max"], values[-1])
                for s in c["samples"]:
                    seen.update(s)
            self.assertTrue(doc["ratios"])
            for r in doc["ratios"]:
                for k in ("metric", "numerator", "denominator", "median", "ci95_low",
                          "ci95_high"):
                    self.assertIn(k, r)
                self.assertEqual(r["denominator"], "thread" if wl == "http" else "unix")
        self.assertTrue(set(METRICS) <= seen, set(METRICS) - seen)

    def test_ratio_is_the_median_of_paired_repetitions(self):
        doc = once_json("--bytes", "1M", "--repetitions", "5", "--warmup", "0", "--disturbed",
                        "include")
        tcp, uds = cell(doc, "tcp")["samples"], cell(doc, "unix")["samples"]
        paired = sorted(a["throughput_MBps"] / b["throughput_MBps"] for a, b in zip(tcp, uds))
        r = [r for r in doc["ratios"] if r["metric"] == "throughput_MBps"][0]
        self.assertEqual(r["numerator"], "tcp")
        self.assertAlmostEqual(r["median"], paired[2], places=12)

    def test_repetitions_interleave_the_variants_after_the_warmup(self):
        r = agent("--once", "--count", "20", "--repetitions", "3", "--warmup", "1",
                  "--nodelay=off,on")
        self.assertEqual(r.rc, 0, r.err)
        jobs = re.findall(r"^\[\s*\d+/12\] (\S+) \d+/\d+ (\S+)", r.err, re.M)
        self.assertEqual([v for _, v in jobs], ["tcp", "tcp+nodelay", "unix"] * 4)
        self.assertEqual([k for k, _ in jobs], ["warm-up"] * 3 + ["rep"] * 9)

    def test_csv_is_one_rfc4180_row_per_sample_with_units_in_the_header(self):
        r = agent("--once", "--quiet", "--format", "csv", "--count", "10", "--repetitions",
                  "2", "--warmup", "1", raw=True)
        self.assertEqual(r.rc, 0, r.err)
        text = r.out.decode()
        self.assertTrue(text.endswith("\r\n"))
        self.assertEqual(text.count("\n"), text.count("\r\n"))
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        self.assertEqual(len(rows), 2 * 3)
        self.assertEqual(sum(row["warmup"] == "1" for row in rows), 2)
        header = text.split("\r\n")[0].split(",")
        for m in ("throughput_MBps", "rtt_p50_us", "cpu_s_per_GB", "tx_user_s"):
            self.assertIn(m, header)
        self.assertTrue(all(int(row["bytes"]) == 10 * 131072 for row in rows))

    def test_table_shows_medians_with_ci_and_the_tcp_over_unix_ratio(self):
        r = agent("--once", "--quiet", "--count", "10", "--repetitions", "6", "--warmup", "0",
                  "--disturbed", "include")
        self.assertEqual(r.rc, 0, r.err)
        self.assertIn("tcp/unix", r.out)
        # variant, n, disturbed samples among them, then the median and its interval
        self.assertRegex(r.out, r"\ntcp\s+6\s+\d+\s+\S+ \[\S+, \S+\]")
        self.assertIn("MB/s", r.out)

    def test_seed_preset_runs_the_2010_test_with_and_without_nodelay(self):
        doc = once_json("--preset", "seed-tcp-unix", "--repetitions", "2", "--warmup", "0")
        self.assertEqual([c["variant"] for c in doc["cells"]], ["tcp", "tcp+nodelay", "unix"])
        for c in doc["cells"]:
            for s in c["samples"]:
                self.assertEqual(s["bytes"], 8192 * 130 + LINES_MARKERS)


class AdaptiveRepetitionsTest(unittest.TestCase):
    """--repetitions auto: min rounds, then more rounds of every variant until each one's CI
    is within --ci-rel of its median or --max-repetitions ran."""

    def test_a_ci_never_tight_adds_rounds_of_every_variant_up_to_max(self):
        r = agent("--once", "--preset", "seed-tcp-unix", "--repetitions", "auto",
                  "--max-repetitions", "7", "--ci-rel", "0.0001", "--warmup", "1")
        self.assertEqual(r.rc, 0, r.err)
        # Every round is one job per variant, in order, also past the 5 planned first.
        jobs = re.findall(r"^\[\s*\d+/\s*\d+\] (\S+) (\d+)/(\d+) (\S+)", r.err, re.M)
        rounds = [v for k, _, _, v in jobs if k == "rep"]
        self.assertEqual(rounds, ["tcp", "tcp+nodelay", "unix"] * 7)
        self.assertEqual(jobs[-1][1:3], ("7", "7"))
        self.assertIn("5 to 7 repetitions until the CI is tight", r.out)
        for v in ("tcp", "tcp+nodelay", "unix"):
            self.assertRegex(r.out, rf"\n  {re.escape(v)}\s+7  stopped on max")

    def test_json_says_per_variant_how_many_and_why_it_stopped(self):
        # Every sample paired, whatever else the machine ran meanwhile.
        doc = once_json("--workload", "rr", "--count", "200", "--repetitions", "auto",
                        "--max-repetitions", "6", "--ci-rel", "0.0001", "--warmup", "0",
                        "--disturbed", "include")
        self.assertEqual([(c["variant"], len(c["samples"]), c["stopped"]) for c in doc["cells"]],
                         [("tcp", 6, "max"), ("unix", 6, "max")])
        # The ratios stay paired over the rounds added.
        self.assertTrue(all(r["n"] == 6 for r in doc["ratios"]), doc["ratios"])
        # A generous interval is met (at min on a quiet machine): every variant got as many
        # repetitions as the others, and the one that stopped on ci has its CI within +-99%.
        doc = once_json("--workload", "rr", "--count", "200", "--repetitions", "auto",
                        "--ci-rel", "0.99", "--warmup", "0")
        ns = {len(c["samples"]) for c in doc["cells"]}
        self.assertEqual(len(ns), 1, doc["cells"])
        self.assertTrue(5 <= ns.pop() <= 30)
        for c in doc["cells"]:
            self.assertIn(c["stopped"], ("ci", "max"))
            if c["stopped"] == "ci":  # then it has clean samples to summarise
                s = c["summary"]["rtt_p50_us"]
                self.assertLessEqual(s["ci95_high"] - s["ci95_low"], 2 * 0.99 * s["median"])
        # Fixed repetitions say nothing of stopping.
        doc = once_json("--workload", "rr", "--count", "200", "--repetitions", "2",
                        "--warmup", "0")
        self.assertEqual([c["stopped"] for c in doc["cells"]], [None, None])

    def test_auto_options_are_checked(self):
        for args, needle in ((("--ci-rel", "0.1"), "go with --repetitions auto"),
                             (("--repetitions", "auto", "--ci-rel", "1"), "--ci-rel"),
                             (("--repetitions", "auto", "--max-repetitions", "0"),
                              "--max-repetitions"),
                             (("--repetitions", "often"), "--repetitions")):
            r = agent("--once", *args)
            self.assertEqual(r.rc, 2, (args, r.err))
            self.assertIn(needle, r.err)


class FaultTest(unittest.TestCase):
    def fails_with(self, fault, needle, *extra):
        r = agent("--once", "--quiet", "--format", "json", "--test-fault", fault,
                  "--repetitions", "1", "--warmup", "0", *extra)
        self.assertEqual(r.rc, 1, r.err)  # a failed job, not a crash
        doc = r.json()
        for c in doc["cells"]:
            self.assertEqual(c["samples"], [])
            self.assertEqual(len(c["failures"]), 1)
            self.assertIn(needle, c["failures"][0]["reason"])
            self.assertTrue(c["failures"][0]["reason"].startswith("server: "))

    def test_receiver_catches_a_corrupted_byte(self):
        self.fails_with("corrupt", "differs from what was sent", "--bytes", "4M")

    def test_receiver_catches_a_corrupted_line(self):
        self.fails_with("corrupt", "differs from what was sent", "--framing", "lines",
                        "--msg-size", "128", "--count", "8192")

    def test_receiver_catches_a_short_stream(self):
        self.fails_with("short", "peer closed after 2097152 of the 4194304 bytes",
                        "--bytes", "4M")

    def test_a_job_at_full_speed_still_ends_at_its_time_limit(self):
        # Neither side ever blocks here, so only the periodic check can stop it.
        r = agent("--once", "--quiet", "--format", "json", "--bytes", "60G", "--transport",
                  "unix", "--time-limit-ms", "1000", "--repetitions", "1", "--warmup", "0",
                  timeout=30)
        self.assertEqual(r.rc, 1, r.err)
        reason = r.json()["cells"][0]["failures"][0]["reason"]
        self.assertIn("time limit of 1000 ms", reason)

    def test_a_stalled_sender_ends_the_job_at_its_time_limit(self):
        self.fails_with("stall", "time limit of 1000 ms", "--bytes", "4M",
                        "--time-limit-ms", "1000")


class CliTest(unittest.TestCase):
    def test_a_bad_option_exits_2_naming_it_in_one_line(self):
        for args, name in ((["--bogus"], "--bogus"), (["--msg-size", "12Q"], "--msg-size"),
                           (["--count", "0"], "--count"), (["--workload", "udp"], "--workload"),
                           (["--count"], "--count")):
            r = agent("--once", *args)
            self.assertEqual(r.rc, 2, args)
            self.assertEqual(r.out, "")
            lines = r.err.strip().splitlines()
            self.assertEqual(len(lines), 1, r.err)
            self.assertIn(name, lines[0])

    def test_help_documents_every_option(self):
        r = agent("--help")
        self.assertEqual(r.rc, 0)
        for opt in ("--once", "--workload", "--transport", "--msg-size", "--count", "--bytes",
                    "--duration-ms", "--framing", "--nodelay", "--cork", "--sndbuf", "--rcvbuf",
                    "--read-size", "--req-size", "--resp-size", "--repetitions", "--warmup",
                    "--time-limit-ms", "--format", "--preset", "--quiet", "--log-level"):
            self.assertIn(opt, r.out)

    def test_once_help_lists_every_preset_and_what_seed_http_runs(self):
        # The presets --once knows are the ones its error for an unknown one names.
        r = agent("--once", "--preset", "nope")
        self.assertEqual(r.rc, 2, r.err)
        names = re.search(r"is not a preset \(([^)]*)\)", r.err).group(1).split(", ")
        self.assertEqual(names, ["seed-tcp-unix", "seed-http"])
        r = agent("--once", "--help")
        self.assertEqual(r.rc, 0)
        for name in names:
            self.assertIn(f"{name}: the 20", r.out)
        # seed-http here is its first test only, and the help says how to run the follow-ups.
        self.assertIn("over one\n", r.out)
        self.assertIn("--connections 4 --tls", r.out)


if __name__ == "__main__":
    unittest.main()
