#!/usr/bin/python3
"""Import -> export -> import over ONNX's backend node tests (the models
ci/onnx-conformance runs): every test graphvet imports (as the conformance run
does: `--input-data test_data_set_0 --freeze-shape-operands`) must export
(ONNX's checker inside), import again, and compute the same values:
`graphvet check --pair A.graph B.graph` sound under the exact contract.

The exporter writes graph inputs in `index` order without gaps, so an input
frozen at import (its index left unused) shifts the later inputs down by one;
B's `Data` indices are mapped back to A's by name before the check.

Usage: export_conformance.py GRAPHVET BUILD_DIR WORK_DIR [--json]
Exit 0 when every imported test round-trips soundly, 1 otherwise, 77 (ctest's
skip) when ONNX's backend tests cannot be generated."""
import collections
import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

graphvet, build_dir, work = (os.path.abspath(p) for p in sys.argv[1:4])
as_json = "--json" in sys.argv[4:]
source_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_conformance():
    path = os.path.join(source_dir, "ci", "onnx-conformance")
    loader = importlib.machinery.SourceFileLoader("onnx_conformance", path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


data_dir = os.path.join(build_dir, "onnx-backend-tests")
try:
    load_conformance().generate(data_dir)
except Exception as e:  # no numpy aliases, no python3-onnx: nothing to run
    print(f"export_conformance: cannot generate ONNX's backend tests: {e}", file=sys.stderr)
    sys.exit(77)
node_dir = os.path.join(data_dir, "node")


def run(args, cwd):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def first_line(text):
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def renumbered(a_text, b_text):
    """B with each Data's index taken from A's Data of the same name."""
    index = {m.group(1): m.group(2)
             for m in re.finditer(r"^\s*(\S+) = Data\(\) \{index = (\d+)", a_text, re.M)}

    def fix(m):
        return m.group(0)[:m.start(2) - m.start(0)] + index.get(m.group(1), m.group(2))

    return re.sub(r"^\s*(\S+) = Data\(\) \{index = (\d+)", fix, b_text, flags=re.M)


def one(name):
    test = os.path.join(node_dir, name)
    w = os.path.join(work, name)
    os.makedirs(w, exist_ok=True)
    rc, _, _ = run([graphvet, "import", os.path.join(test, "model.onnx"), "--input-data",
                    os.path.join(test, "test_data_set_0"), "--freeze-shape-operands", "-o",
                    "a.graph"], w)
    if rc != 0:
        return name, "not imported", ""
    rc, _, err = run([graphvet, "export", "a.graph", "-o", "a.onnx"], w)
    if rc != 0:
        return name, "export failed", first_line(err)
    rc, _, err = run([graphvet, "import", "a.onnx", "-o", "b.graph"], w)
    if rc != 0:
        return name, "re-import failed", first_line(err)
    a = open(os.path.join(w, "a.graph")).read()
    b = open(os.path.join(w, "b.graph")).read()
    with open(os.path.join(w, "b.renumbered.graph"), "w") as f:
        f.write(renumbered(a, b))
    rc, out, err = run([graphvet, "check", "--pair", "a.graph", "b.renumbered.graph"], w)
    verdict = first_line(out) or first_line(err)
    if verdict != "verdict: sound":
        return name, "not sound", verdict
    return name, "sound", "same module" if a == b else ""


names = sorted(n for n in os.listdir(node_dir) if n.startswith("test_"))
with ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
    results = list(pool.map(one, names))
counts = collections.Counter(status for _, status, _ in results)
same = sum(1 for _, status, note in results if status == "sound" and note == "same module")
failures = [(n, s, d) for n, s, d in results if s not in ("sound", "not imported")]
if as_json:
    print(json.dumps({"tests": len(results), "counts": dict(counts), "same_module": same,
                      "failures": [{"test": n, "status": s, "detail": d} for n, s, d in failures]}))
else:
    print(f"{len(results)} node tests: {counts['not imported']} not imported; of the "
          f"{len(results) - counts['not imported']} imported, {counts['sound']} exported, "
          f"re-imported and sound ({same} print the same module), "
          f"{len(failures)} failed")
    for n, s, d in failures:
        print(f"  {n}: {s}: {d}")
sys.exit(1 if failures else 0)
