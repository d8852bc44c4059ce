"""tests/check_includes.py itself: a copy of the sources passes or fails as it should, and a
deliberately wrong include in the copy fails it, naming the file, the line and the rule."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, ".."))
SCRIPT = os.path.join(HERE, "check_includes.py")


class CheckIncludesTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="sm-includes-")
        self.addCleanup(shutil.rmtree, self.root)
        for top in ("proto", "agent", "coordinator", "tests/unit"):
            shutil.copytree(os.path.join(SRC, top), os.path.join(self.root, top),
                            ignore=shutil.ignore_patterns("node_modules", "golden"))

    def check(self):
        r = subprocess.run([sys.executable, SCRIPT, self.root], capture_output=True, text=True,
                           timeout=60)
        return r.returncode, r.stdout

    def add_line(self, rel, line):
        path = os.path.join(self.root, rel)
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(line + "\n" + text)

    def test_the_tree_as_it_is_passes(self):
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"check_includes: \d+ files, 0 problems")

    def test_a_lower_room_including_a_higher_one_fails(self):
        self.add_line("coordinator/model/spec.c", '#include "coordinator/api/api.h"')
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn('coordinator/model/spec.c:1: #include "coordinator/api/api.h": model/ is '
                      "below api/ and may not include it", out)

    def test_the_store_including_the_control_core_fails(self):
        self.add_line("coordinator/store/runs.c", '#include "coordinator/control/control.h"')
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("store/ is below control/", out)

    def test_the_cli_including_the_store_fails(self):
        self.add_line("coordinator/cli/cli.c", '#include "coordinator/store/store.h"')
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn('coordinator/cli/cli.c:1: #include "coordinator/store/store.h": cli/ uses '
                      "only analysis, cli, model, schema", out)

    def test_a_private_header_outside_its_folder_fails(self):
        self.add_line("coordinator/server/web.c", '#include "coordinator/api/internal.h"')
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("a private header of coordinator/api/ used outside its folder", out)

    def test_proto_including_the_agent_fails(self):
        self.add_line("proto/msg.c", '#include "agent/net/socket.h"')
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("proto/ includes nothing of agent/ or coordinator/", out)

    def test_a_public_header_handing_out_cjson_fails(self):
        self.add_line("coordinator/analysis/table.h", "#include <cjson/cJSON.h>")
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("coordinator/analysis/table.h:1: #include <cjson/cJSON.h>: a public "
                      "header hands out cJSON", out)

    JSON_RULE = ("cJSON is used only in proto/, coordinator/{api,schema,analysis,model}/, the "
                 "CLI's apiview*.c and specfile.c, and tests/")

    def test_a_command_including_cjson_fails(self):
        self.add_line("coordinator/cli/cmd_compare.c", "#include <cjson/cJSON.h>")
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("coordinator/cli/cmd_compare.c:1: #include <cjson/cJSON.h>: "
                      + self.JSON_RULE, out)

    def test_a_command_including_proto_json_fails(self):
        self.add_line("coordinator/cli/cmd_jobs.c", '#include "proto/json.h"')
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn('coordinator/cli/cmd_jobs.c:1: #include "proto/json.h": '
                      + self.JSON_RULE, out)

    def test_the_agent_including_proto_json_fails(self):
        self.add_line("agent/host/items.c", '#include "proto/json.h"')
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn('agent/host/items.c:1: #include "proto/json.h": ' + self.JSON_RULE, out)

    def test_a_header_that_includes_cjson_carries_the_rule_to_its_includers(self):
        # The store's private header with cJSON: it, and every store file that includes it.
        self.add_line("coordinator/store/internal.h", "#include <cjson/cJSON.h>")
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("coordinator/store/internal.h:1: #include <cjson/cJSON.h>: "
                      + self.JSON_RULE, out)
        self.assertRegex(out, r'coordinator/store/\w+\.c:\d+: #include '
                              r'"coordinator/store/internal\.h": cJSON is used only in')

    def test_a_command_naming_cjson_in_code_fails_and_in_comments_or_strings_passes(self):
        self.add_line("coordinator/cli/cmd_tests.c",
                      '/* cJSON */ static const char *cjson_word = "cJSON_Parse";')
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.add_line("coordinator/cli/cmd_tests.c", "struct cJSON;")
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("coordinator/cli/cmd_tests.c:1: names cJSON in code: " + self.JSON_RULE,
                      out)

    def test_cjson_in_the_places_it_belongs_passes(self):
        with open(os.path.join(self.root, "coordinator", "cli", "apiview_more.c"), "w") as f:
            f.write('#include "coordinator/cli/apiview_internal.h"\n'
                    "static cJSON *more(void) { return NULL; }\n")
        self.add_line("coordinator/api/routes.c", '#include "proto/json.h"')
        self.add_line("coordinator/model/cron.c", "#include <cjson/cJSON.h>")
        self.add_line("tests/unit/coordinator/model/test_cron.c", '#include "proto/json.h"')
        rc, out = self.check()
        self.assertEqual(rc, 0, out)

    def test_an_agent_room_including_a_higher_one_fails(self):
        self.add_line("agent/net/socket.c", '#include "agent/runner/runner.h"')
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn('agent/net/socket.c:1: #include "agent/runner/runner.h": agent/net/ is '
                      "below agent/runner/ and may not include it", out)

    def test_one_front_end_including_the_other_fails(self):
        self.add_line("agent/fleet/opts.c", '#include "agent/once/opts.h"')
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn('agent/fleet/opts.c:1: #include "agent/once/opts.h": agent/fleet/ and '
                      "agent/once/ sit side by side and may not include each other", out)

    def test_a_front_end_including_a_lower_room_passes(self):
        self.add_line("agent/once/output.c", '#include "agent/spool/spool.h"')
        rc, out = self.check()
        self.assertEqual(rc, 0, out)

    def test_a_file_at_the_agents_top_or_an_unknown_agent_room_fails(self):
        with open(os.path.join(self.root, "agent", "extra.c"), "w") as f:
            f.write("/* stray */\n")
        os.makedirs(os.path.join(self.root, "agent", "misc"))
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("agent/extra.c: only main.c sits at agent/'s top", out)
        self.assertIn("agent/misc/: a room not in check_includes.py's order", out)

    def test_a_folder_that_is_no_known_room_fails(self):
        os.makedirs(os.path.join(self.root, "coordinator", "misc"))
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("coordinator/misc/: a room not in check_includes.py's order", out)


if __name__ == "__main__":
    unittest.main()
