#!/usr/bin/python3
"""tools/ort/ort-run.mjs on small models written here by python3-onnx: a
Conv+Relu+MatMul+Add network in f32 (and its result cast to f16), an i64 and
bool path (Add, Greater, And, Where) and an f64 one, fed from .npy files
(format 1 and 2) and compared with numpy; the files written (output_K.npy,
NAME.npy, outputs.json) and the JSON report checked; the model ORT writes
with --optimized-model loaded again by onnx and by ORT, giving the same
outputs; bad inputs refused with `FILE: error:` and exit 2.

Skips (exit 77) when node or ONNX Runtime is missing (ci/fetch-ort installs
it into build/ort; GRAPHVET_ORT_DIR points elsewhere).
Usage: ort_run_test.py ORT_RUN_MJS WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SKIP = 77
ORT_RUN, WORK = sys.argv[1:3]
os.makedirs(WORK, exist_ok=True)
NODE = shutil.which("node")
if NODE is None:
    print("skipped: node is not installed (ci/setup installs nodejs)")
    sys.exit(SKIP)

rng = np.random.default_rng(28)


def path(name):
    return os.path.join(WORK, name)


def ort_run(*args):
    return subprocess.run([NODE, ORT_RUN, *args], capture_output=True, text=True)


def build_model():
    """y = Relu(Conv(x)) reshaped to [1, 4, 36] @ W + b; y16 = Cast(y, f16);
    s = n + k (i64); mask = (s > 0) and flag; pick = Where(mask, s, -s);
    d2 = d * d (f64)."""
    w = (rng.standard_normal((4, 2, 3, 3)) * 0.3).astype(np.float32)
    cb = rng.standard_normal(4).astype(np.float32)
    mw = (rng.standard_normal((36, 5)) * 0.2).astype(np.float32)
    mb = rng.standard_normal(5).astype(np.float32)
    k = np.array([3, -2, 0, 7], np.int64)
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w, "w"), (cb, "cb"), (mw, "mw"), (mb, "mb"), (k, "k"),
              (np.array([1, 4, 36], np.int64), "shape3"), (np.array(0, np.int64), "zero")]]
    nodes = [
        helper.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Reshape", ["r", "shape3"], ["r3"]),
        helper.make_node("MatMul", ["r3", "mw"], ["mm"]),
        helper.make_node("Add", ["mm", "mb"], ["y"]),
        helper.make_node("Cast", ["y"], ["y/f16"], to=TensorProto.FLOAT16),
        helper.make_node("Add", ["n", "k"], ["s"]),
        helper.make_node("Greater", ["s", "zero"], ["pos"]),
        helper.make_node("And", ["pos", "flag"], ["mask"]),
        helper.make_node("Neg", ["s"], ["neg"]),
        helper.make_node("Where", ["mask", "s", "neg"], ["pick"]),
        helper.make_node("Mul", ["d", "d"], ["d2"]),
    ]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "ort_run_test",
        [vi("x", TensorProto.FLOAT, [1, 2, 6, 6]), vi("n", TensorProto.INT64, [3, 4]),
         vi("flag", TensorProto.BOOL, [3, 4]), vi("d", TensorProto.DOUBLE, [5])],
        [vi("y", TensorProto.FLOAT, [1, 4, 5]), vi("y/f16", TensorProto.FLOAT16, [1, 4, 5]),
         vi("mask", TensorProto.BOOL, [3, 4]), vi("pick", TensorProto.INT64, [3, 4]),
         vi("d2", TensorProto.DOUBLE, [5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path("tiny.onnx"))
    return w, cb, mw, mb, k


def reference(x, n, flag, d, w, cb, mw, mb, k):
    """The model in numpy, sums in f64."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    c = np.zeros((1, 4, 6, 6))
    for i in range(6):
        for j in range(6):
            c[0, :, i, j] = np.einsum("ocij,cij->o", w.astype(np.float64), xp[0, :, i:i + 3, j:j + 3])
    c += cb[None, :, None, None]
    y = np.maximum(c, 0).reshape(1, 4, 36) @ mw.astype(np.float64) + mb
    s = n + k
    mask = (s > 0) & flag
    return {"y": y.astype(np.float32), "y/f16": y.astype(np.float32).astype(np.float16),
            "mask": mask, "pick": np.where(mask, s, -s), "d2": d * d}


def check_outputs(out_dir, want, label):
    with open(os.path.join(out_dir, "outputs.json")) as f:
        described = json.load(f)
    assert [d["name"] for d in described] == ["y", "y/f16", "mask", "pick", "d2"], described
    for k, d in enumerate(described):
        assert d["index"] == k and d["file"] == f"output_{k}.npy", d
        got = np.load(os.path.join(out_dir, d["file"]))
        again = np.load(os.path.join(out_dir, d["named_file"]))
        assert got.tobytes() == again.tobytes() and got.dtype == again.dtype, d
        ref = want[d["name"]]
        assert got.dtype == ref.dtype and got.shape == ref.shape, (label, d, got.dtype, got.shape)
        assert list(got.shape) == d["shape"], d
        if got.dtype.kind == "f":
            tol = 1e-2 if got.dtype == np.float16 else 1e-5
            np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64),
                                       rtol=tol, atol=tol, err_msg=f"{label} {d['name']}")
        else:
            assert (got == ref).all(), (label, d["name"], got, ref)
    # The sanitized name: '/' is not kept.
    assert described[1]["named_file"] == "y_f16.npy", described[1]
    return described


def main():
    w, cb, mw, mb, k = build_model()
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    n = rng.integers(-5, 5, size=(3, 4)).astype(np.int64)
    flag = rng.random((3, 4)) < 0.7
    d = rng.standard_normal(5)
    np.save(path("x.npy"), x)
    with open(path("n.npy"), "wb") as f:  # format 2 header
        np.lib.format.write_array(f, n, version=(2, 0))
    np.save(path("flag.npy"), flag)
    np.save(path("d.npy"), d)
    feeds = ["--input", f"x={path('x.npy')}", "--input", f"n={path('n.npy')}",
             "--input", f"flag={path('flag.npy')}", "--input", f"3={path('d.npy')}"]
    want = reference(x, n, flag, d, w, cb, mw, mb, k)

    r = ort_run(path("tiny.onnx"), *feeds, "--outputs-dir", path("out"), "--optimize", "extended",
                "--optimized-model", path("tiny.opt.onnx"), "--json")
    if r.returncode == 3:
        print(f"skipped: {r.stderr.strip()}")
        sys.exit(SKIP)
    assert r.returncode == 0, (r.returncode, r.stderr)
    report = json.loads(r.stdout)
    assert report["onnxruntime"] == "1.30.0" and report["optimize"] == "extended", report
    for key in ("session_create_ms", "session_create_disabled_ms", "optimization_ms", "run_ms",
                "session_create_cpu_ms", "session_create_disabled_cpu_ms", "optimization_cpu_ms"):
        assert isinstance(report[key], (int, float)) and report[key] >= 0, (key, report)
    assert [i["name"] for i in report["inputs"]] == ["x", "n", "flag", "d"], report["inputs"]
    assert [o["dtype"] for o in report["outputs"]] == ["f32", "f16", "bool", "i64", "f64"], report
    check_outputs(path("out"), want, "original")

    # ORT's optimized model: onnx reads it, ORT runs it to the same outputs.
    optimized = onnx.load(path("tiny.opt.onnx"))
    ops = [f"{nd.domain or 'ai.onnx'}.{nd.op_type}" for nd in optimized.graph.node]
    assert 0 < len(ops) <= len(onnx.load(path("tiny.onnx")).graph.node), ops
    r = ort_run(path("tiny.opt.onnx"), *feeds, "--outputs-dir", path("out.opt"), "--optimize",
                "disabled")
    assert r.returncode == 0, (r.returncode, r.stderr)
    check_outputs(path("out.opt"), want, "ORT-optimized")
    print(f"ORT's extended model: {len(ops)} nodes: {', '.join(ops)}")

    # Bad input: `FILE: error:` and exit 2.
    np.save(path("x.fortran.npy"), np.asfortranarray(x))
    np.save(path("x.f64.npy"), x.astype(np.float64))
    np.save(path("x.shape.npy"), x[:, :, :5])
    with open(path("x.bad.npy"), "wb") as f:
        f.write(b"not numpy")
    feeds_rest = feeds[2:]
    for name, message in [("x.fortran.npy", "Fortran order"), ("x.f64.npy", "float64"),
                          ("x.shape.npy", "the file holds [1, 2, 5, 6]"), ("x.bad.npy", "not a .npy file")]:
        r = ort_run(path("tiny.onnx"), "--input", f"x={path(name)}", *feeds_rest)
        assert r.returncode == 2, (name, r.returncode, r.stderr)
        assert r.stderr.startswith(f"{path(name)}: error: ") and message in r.stderr, (name, r.stderr)
    r = ort_run(path("tiny.onnx"), *feeds_rest)
    assert r.returncode == 2 and "no --input for the model's input x" in r.stderr, r.stderr
    r = ort_run(path("tiny.onnx"), *feeds, "--optimize", "everything")
    assert r.returncode == 2 and "--optimize 'everything'" in r.stderr, r.stderr
    r = subprocess.run([NODE, ORT_RUN, path("tiny.onnx"), *feeds], capture_output=True, text=True,
                       env={**os.environ, "GRAPHVET_ORT_DIR": path("no-ort-here")})
    assert r.returncode == 3 and "not installed" in r.stderr, (r.returncode, r.stderr)
    print("ort-run.mjs: outputs match numpy; ORT's optimized model loads and matches")


main()
