#!/usr/bin/env python3
"""ctest driver: the mutation-testing mutants stay usable.

1. `ci/mutation-test --check` passes on ci/mutants: every patch applies to the
   current tree (patch --dry-run -p1 --fuzz=2), has a `# <description>` first
   line, touches src/passes only, and ids and names are unique.
2. The same check rejects, with a message each, the broken mutants in
   tests/mutants/bad (no description, duplicate id, stale hunk, harness file).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPO, "ci", "mutation-test")


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT, "--check", *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    failures = []
    code, out = run()
    if code != 0:
        failures.append("ci/mutants does not pass --check:\n" + out)
    code, out = run("--mutant-dir", os.path.join(HERE, "bad"))
    if code != 1:
        failures.append(f"--check on tests/mutants/bad exited {code}, expected 1:\n{out}")
    expected = [
        "01-no-description.patch: first line is not '# <description>'",
        "01-same-id.patch: id 01 also used by 01-no-description.patch",
        "02-stale.patch: does not apply",
        "03-outside-passes.patch: mutates props/campaign.h (mutants touch pass code only: "
        "src/passes/, src/ir/simplify_rules, src/ir/rewrite_rule.cpp)",
    ]
    for e in expected:
        if e not in out:
            failures.append(f"--check on tests/mutants/bad did not report: {e}\n{out}")
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("ok: ci/mutants apply; broken mutants are rejected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
