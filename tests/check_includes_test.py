#!/usr/bin/env python3
"""tools/check_includes.py fails on what it forbids (ctest include_rules_selftest).

Each case writes a small src/ tree with one include, runs the script on it and
checks the exit status and the violation line; the clean tree passes.
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "tools", "check_includes.py")

# A tree that keeps every rule: the analysis parts in their order.
CLEAN = {
    "common/status.h": [],
    "store/trace_reader.h": ["common/status.h"],
    "analysis/model/trace_model.h": ["store/trace_reader.h"],
    "analysis/model/steps.h": ["analysis/model/trace_model.h"],
    "analysis/recipes/recipes.h": ["analysis/model/steps.h"],
    "analysis/whatif/graph.h": ["analysis/model/steps.h"],
    "analysis/rules/rule.h": ["analysis/whatif/graph.h", "analysis/model/trace_model.h"],
    "analysis/whatif/pricing.h": ["analysis/rules/rule.h"],
    "analysis/memory/memory_model.h": [],
    "analysis/diff.h": ["analysis/model/steps.h", "analysis/rules/rule.h"],
    "cli/cmd_diff.cc": ["analysis/diff.h"],
}


def run(tree):
    with tempfile.TemporaryDirectory(prefix="stepscope-includes-") as root:
        for path, includes in tree.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write("#pragma once\n" + "".join(f'#include "{i}"\n' for i in includes))
        p = subprocess.run([sys.executable, SCRIPT, root], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return p.returncode, p.stdout


def with_file(path, includes):
    tree = dict(CLEAN)
    tree[path] = includes
    return tree


class CheckIncludes(unittest.TestCase):
    def violation(self, tree, line):
        rc, out = run(tree)
        self.assertEqual(rc, 1, out)
        self.assertIn(line, out)

    def test_clean_tree_passes(self):
        rc, out = run(CLEAN)
        self.assertEqual(rc, 0, out)
        self.assertIn("include rules: 0 violation(s)", out)

    def test_the_source_tree_passes(self):
        p = subprocess.run([sys.executable, SCRIPT, os.path.join(os.path.dirname(HERE), "src")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 0, p.stdout)

    def test_stage_includes_a_later_stage(self):
        self.violation(with_file("store/bad.h", ["analysis/model/trace_model.h"]),
                       "store/bad.h:2: store/ may not include analysis/")

    def test_model_includes_rules(self):
        self.violation(with_file("analysis/model/bad.h", ["analysis/rules/rule.h"]),
                       "analysis/model/bad.h:2: analysis/model/ may not include analysis/rules/")

    def test_model_includes_recipes(self):
        self.violation(with_file("analysis/model/bad.cc", ["analysis/recipes/recipes.h"]),
                       "analysis/model/bad.cc:2: analysis/model/ may not include analysis/recipes/")

    def test_recipes_include_rules(self):
        self.violation(with_file("analysis/recipes/bad.cc", ["analysis/rules/rule.h"]),
                       "analysis/recipes/ may not include analysis/rules/")

    def test_a_part_includes_the_glue(self):
        self.violation(with_file("analysis/rules/bad.cc", ["analysis/diff.h"]),
                       "analysis/rules/ may not include analysis/ (a file directly in it)")

    def test_unknown_part(self):
        self.violation(with_file("analysis/extra/x.h", ["analysis/model/steps.h"]),
                       "analysis/extra/: unknown part of analysis/")

    def test_include_cycle(self):
        tree = with_file("analysis/model/a.h", ["analysis/model/b.h"])
        tree["analysis/model/b.h"] = ["analysis/model/a.h"]
        self.violation(tree, "include cycle: analysis/model/a.h -> analysis/model/b.h -> analysis/model/a.h")


if __name__ == "__main__":
    unittest.main()
