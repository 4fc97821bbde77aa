#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/code-size.py finds what is over its limits and fails then: on
fixture/tricky.cc (braces in literals, comments and member initialisers) and on
generated files at and just over the default limits (800 and 120 lines)."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "code-size.py")


def run(root, *args):
    r = subprocess.run([sys.executable, SCRIPT, "--root", root, *args], capture_output=True, text=True)
    return r.returncode, r.stdout.splitlines()


def source(function_lines, file_lines):
    """A file of `file_lines` lines holding one function of `function_lines`."""
    body = ["int Long() {"] + ["  x += 1;"] * (function_lines - 2) + ["}"]
    head = ["int x = 0;"]
    return "\n".join(head + body + ["// padding"] * (file_lines - len(head) - len(body))) + "\n"


class CodeSizeTest(unittest.TestCase):
    def test_finds_every_function_of_the_fixture_and_nothing_else(self):
        rc, out = run(HERE, "fixture", "--max-function-lines", "0", "--list")
        self.assertEqual(rc, 0)
        self.assertEqual(out[:-1], [
            "fixture/tricky.cc:32: function Braces has 13 lines (limit 0)",
            "fixture/tricky.cc:46: function Identity has 4 lines (limit 0)",
            "fixture/tricky.cc:18: function Counter has 3 lines (limit 0)",
            "fixture/tricky.cc:21: function Next has 1 lines (limit 0)",
        ])

    def test_max_file_lines_makes_the_fixture_fail(self):
        rc, out = run(HERE, "fixture", "--max-file-lines", "50")
        self.assertEqual(rc, 1)
        self.assertEqual(out[0], "fixture/tricky.cc:1: file has 51 lines (limit 50)")

    def test_default_limits_pass_at_the_limit_and_fail_one_line_over(self):
        with tempfile.TemporaryDirectory() as root:
            os.mkdir(os.path.join(root, "src"))
            path = os.path.join(root, "src", "a.cc")
            with open(path, "w") as f:
                f.write(source(120, 800))
            rc, out = run(root, "src")
            self.assertEqual(rc, 0, out)
            with open(path, "w") as f:
                f.write(source(121, 801))
            rc, out = run(root, "src")
            self.assertEqual(rc, 1)
            self.assertEqual(out[:-1], ["src/a.cc:1: file has 801 lines (limit 800)",
                                        "src/a.cc:2: function Long has 121 lines (limit 120)"])


if __name__ == "__main__":
    unittest.main()
