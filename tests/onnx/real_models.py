#!/usr/bin/python3
"""Real ONNX models through graphvet: `graphvet import MODEL.onnx -o X.graph`
(weights in the sidecar X.weights, nothing large inline), `graphvet run
X.graph` on deterministic inputs, and `graphvet run MODEL.onnx` (imported in
memory) giving the same bytes. The outputs are checked against what the model
computes: reference values from onnxruntime 1.30.0 (CPU) on the same inputs,
within 1e-4, plus each output's meaning (probabilities sum to 1...).

The models are never committed: ci/fetch-models puts them into build/models/.
A missing model makes the test skip (exit 77) with a message, never fail.

Usage: real_models.py GRAPHVET MODELS_DIR WORKDIR NAME, NAME one of cls,
silero_vad, ppocr_det, ppocr_rec.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

SKIP = 77
GRAPHVET, MODELS, WORK, NAME = sys.argv[1:5]
os.makedirs(WORK, exist_ok=True)


def image(shape):
    """A smooth deterministic image in [-1, 1] (PP-OCR's normalized input)."""
    return np.sin(np.arange(np.prod(shape), dtype=np.float64) * 0.01).astype(np.float32).reshape(
        shape)


def tone(samples):
    """512 samples of a 440 Hz tone at 16 kHz, amplitude 0.5."""
    t = np.arange(samples) / 16000.0
    return (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32).reshape(1, samples)


def check_cls(outs):
    (p,) = outs
    assert p.shape == (1, 2), p.shape
    assert abs(p.sum() - 1) < 1e-5 and (p >= 0).all(), p
    np.testing.assert_allclose(p.ravel(), [0.41587400436401367, 0.5841259956359863], atol=1e-4)


def check_vad(outs):
    prob, state = outs
    assert prob.shape == (1, 1) and state.shape == (2, 1, 128), (prob.shape, state.shape)
    assert 0 <= prob[0, 0] <= 1, prob
    np.testing.assert_allclose(prob.ravel(), [0.12427544593811035], atol=1e-4)
    assert np.isfinite(state).all()
    np.testing.assert_allclose(np.abs(state).sum(), 53.84604, rtol=1e-4)


def check_det(outs):
    (m,) = outs
    assert m.shape == (1, 1, 64, 64), m.shape
    # A smooth pattern holds no text: the probability map is ~0 everywhere.
    assert (m >= 0).all() and m.max() < 1e-6, m.max()


def check_rec(outs):
    (p,) = outs
    assert p.shape == (1, 8, 6625), p.shape
    np.testing.assert_allclose(p.sum(axis=2), 1, atol=1e-4)
    assert (p.argmax(axis=2) == 0).all(), p.argmax(axis=2)  # blank at every step
    np.testing.assert_allclose(
        p.max(axis=2).ravel(),
        [0.29356986, 0.77764022, 0.85100877, 0.92795914, 0.88848209, 0.82547313, 0.77110076,
         0.43057567], atol=1e-4)


CASES = {
    "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", ["x=1x3x48x192"], [],
            {"x": image((1, 3, 48, 192))}, check_cls),
    "silero_vad": ("silero_vad_v5.onnx", ["input=1x512,state=2x1x128"], ["sr=16000"],
                   {"input": tone(512), "state": np.zeros((2, 1, 128), np.float32)}, check_vad),
    "ppocr_det": ("ch_PP-OCRv4_det_infer.onnx", ["x=1x3x64x64"], [],
                  {"x": image((1, 3, 64, 64))}, check_det),
    "ppocr_rec": ("ch_PP-OCRv4_rec_infer.onnx", ["x=1x3x48x64"], [],
                  {"x": image((1, 3, 48, 64))}, check_rec),
}

file, shapes, frozen, inputs, check = CASES[NAME]
model = os.path.join(MODELS, file)
if not os.path.exists(model):
    print(f"skipped: {model} is not there (ci/fetch-models fetches it; offline it cannot)")
    sys.exit(SKIP)

flags = [f"--input-shape={s}" for s in shapes] + [f"--freeze={f}" for f in frozen]
graph = os.path.join(WORK, NAME + ".graph")


def run(cmd):
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exits {r.returncode}:\n{r.stderr}")
        sys.exit(1)
    return r, time.monotonic() - start


_, import_time = run([GRAPHVET, "import", model, "-o", graph] + flags)
with open(graph) as f:
    text = f.read()
weights = graph[:-len(".graph")] + ".weights"
assert os.path.getsize(weights) > 0 and "file(" in text, "the weights are not in the sidecar"
longest = max(len(line) for line in text.splitlines())
assert longest < 4096, f"a line of {longest} characters: a large tensor inline"

feeds = []
for k, v in inputs.items():
    raw = os.path.join(WORK, f"{NAME}.{k}.bin")
    v.tofile(raw)
    feeds.append((k, raw))


def outputs(source, extra, by_name):
    out = os.path.join(WORK, f"{NAME}.{'onnx' if by_name else 'graph'}.out")
    cmd = [GRAPHVET, "run", source, "--outputs-dir", out] + extra
    for i, (k, raw) in enumerate(feeds):
        cmd += ["--input", f"{k if by_name else i}={raw}"]
    r, seconds = run(cmd)
    with open(os.path.join(out, "outputs.json")) as f:
        described = json.load(f)
    arrays = [np.fromfile(os.path.join(out, f"output_{d['index']}.bin"), dtype=np.float32)
              .reshape(d["shape"]) for d in described]
    return arrays, r.stdout, seconds


from_graph, printed, run_time = outputs(graph, [], False)
from_onnx, _, _ = outputs(model, flags, True)
for a, b in zip(from_graph, from_onnx):
    assert a.tobytes() == b.tobytes(), "the .onnx run differs from the imported .graph's"
check(from_graph)
for line in printed.splitlines():
    if line.startswith("run 2"):
        break
    if line.lstrip().startswith("output"):
        print(line.strip()[:200])
print(f"{NAME}: import {import_time:.2f} s, run {run_time:.2f} s; outputs match the reference")
