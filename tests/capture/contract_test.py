#!/usr/bin/env python3
"""The launch contract (src/common/env_contract.h) against its other spellings: no C++ source
under src/ spells a STEPSCOPE_ name but that header (tests excepted), every STEPSCOPE_*
variable `stepscope profile` sets is documented in docs/capture.md's environment table, and every
STEPSCOPE_* name the Python side reads (python/stepscope, python/stepscope_hook) is one the
contract sets or one documented as the user's own override (else the Python reads a variable
nobody sets: the PyTorch memory recorder read STEPSCOPE_TRACE_PATH, which the launcher never set).

usage: contract_test.py SOURCE_DIR
"""
import os
import re
import sys
import unittest

SRC = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")

# Read by the Python side but not set by the launcher, each for a reason.
NOT_FROM_THE_LAUNCHER = {
    "STEPSCOPE_BIN": "the user's override of the stepscope binary (docs/python.md, docs/capture.md)",
    "STEPSCOPE_TRACE_FILE": "set by the tracer inside the traced process (docs/capture.md)",
    "STEPSCOPE_TORCH_MEMORY_PATH": "the user's override of the allocator history path (docs/memory.md)",
    "STEPSCOPE_TORCH_MEMORY_MAX_ENTRIES": "the user's history ring size (docs/memory.md)",
}


def read(*parts):
    with open(os.path.join(SRC, *parts), encoding="utf-8") as f:
        return f.read()


def contract_names():
    return set(re.findall(r'X\(kEnv\w+,\s*"(STEPSCOPE_[A-Z_0-9]+)"', read("src", "common", "env_contract.h")))


def python_names():
    names = {}
    for d in ("stepscope", "stepscope_hook"):
        root = os.path.join(SRC, "python", d)
        for fn in sorted(os.listdir(root)):
            if fn.endswith(".py") and not fn.endswith("_test.py"):
                for n in re.findall(r"STEPSCOPE_[A-Z_0-9]+", read("python", d, fn)):
                    names.setdefault(n, fn)
    return names


class ContractTest(unittest.TestCase):
    def test_the_contract_is_read_from_the_header(self):
        names = contract_names()
        self.assertIn("STEPSCOPE_OUTPUT", names)
        self.assertGreaterEqual(len(names), 15)

    def test_every_contract_variable_is_documented(self):
        table = {m for m in re.findall(r"`(STEPSCOPE_[A-Z_0-9]+)", read("docs", "capture.md"))}
        missing = sorted(contract_names() - table)
        self.assertEqual(missing, [], "not in docs/capture.md's environment table")

    def test_python_reads_only_what_someone_sets(self):
        allowed = contract_names() | set(NOT_FROM_THE_LAUNCHER)
        stray = {n: fn for n, fn in python_names().items() if n not in allowed}
        self.assertEqual(stray, {}, "read by Python, set by no one")

    def test_the_cli_sets_through_the_contract(self):
        # No STEPSCOPE_ name spelled out in the launcher: it writes the contract's constants.
        spelled = re.findall(r'setenv\("(STEPSCOPE_[A-Z_0-9]+)"', read("src", "cli", "cmd_profile.cc"))
        self.assertEqual(spelled, [])

    def test_no_source_spells_a_name_but_the_header(self):
        # A "STEPSCOPE_..." string in a C++ source other than env_contract.h would be a second
        # spelling of a variable (tests, which set them by hand, excepted).
        header = os.path.join("src", "common", "env_contract.h")
        spelled = []
        for root, _, files in os.walk(os.path.join(SRC, "src")):
            for fn in sorted(files):
                if not fn.endswith((".cc", ".h", ".cu")) or fn.endswith(("_test.cc", "_fuzzer.cc")):
                    continue
                rel = os.path.relpath(os.path.join(root, fn), SRC)
                if rel == header:
                    continue
                for n in re.findall(r'"(STEPSCOPE_[A-Z_0-9]+)"', read(rel)):
                    spelled.append("%s: %s" % (rel, n))
        self.assertEqual(spelled, [])
        self.assertGreaterEqual(len(re.findall(r'V\(kEnv\w+,\s*"STEPSCOPE_', read(header))), 20)


if __name__ == "__main__":
    unittest.main(verbosity=2)
