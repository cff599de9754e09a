# Writes the Conv -> BatchNormalization pair of approx-conv-bn-fold.graph: the
# original (printed; paste below the RUN lines) and its folded forms, the
# right one and four wrong ones. Run in this folder with Debian's python3 (numpy):
#   /usr/bin/python3 conv-bn-folds.py
import numpy as np
rng = np.random.default_rng(7)
C, M = 3, 4
W = rng.uniform(-1, 1, (M, C, 3, 3)).astype(np.float32)
cb = rng.uniform(-0.5, 0.5, M).astype(np.float32)
scale = np.array([1.5, -0.75, 2.0, 0.5], np.float32)
B = np.array([0.25, -1.0, 0.5, 3.0], np.float32)
mean = np.array([0.1, -0.2, 0.3, -0.4], np.float32)
var = np.array([1e-4, 0.5, 2.0, 0.01], np.float32)
eps = np.float32(1e-5)
def lit(a):
    shape = ", ".join(str(d) for d in a.shape)
    vals = ", ".join(repr(float(np.float32(v))) if False else np.format_float_positional(np.float32(v), unique=True, trim='-') if abs(v) >= 1e-4 or v == 0 else np.format_float_scientific(np.float32(v), unique=True, trim='-') for v in a.flatten())
    return f"f32[{shape}] {{{vals}}}"
def fold(eps_mode="right", bias=True, sign=1, axis="out"):
    if eps_mode == "right":
        f = scale / np.sqrt(var + eps)
    else:
        f = scale / (np.sqrt(var) + eps)
    f = f.astype(np.float32) * np.float32(sign)
    if axis == "out":
        W2 = (W * f[:, None, None, None]).astype(np.float32)
    else:  # scale the input channels instead (wrong axis)
        W2 = (W * f[None, :C, None, None]).astype(np.float32)
    b2 = ((cb - mean) * f + (B if bias else 0)).astype(np.float32)
    return W2, b2
hdr = '''graph root {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [1, 3, 5, 5]}
'''
orig = hdr + f'''  w = Const() {{value = {lit(W)}}}
  cb = Const() {{value = {lit(cb)}}}
  conv = Conv(x, w, cb) {{kernel_shape = [3, 3], pads = [1, 1, 1, 1]}}
  scale = Const() {{value = {lit(scale)}}}
  bias = Const() {{value = {lit(B)}}}
  mean = Const() {{value = {lit(mean)}}}
  var = Const() {{value = {lit(var)}}}
  bn = BatchNormalization(conv, scale, bias, mean, var) {{epsilon = 1e-05}}
  act = Relu(bn)
  out = NetOutput(act)
}}
'''
def opt(W2, b2, comment):
    return f"# {comment}\n" + hdr + f'''  w = Const() {{value = {lit(W2)}}}
  b = Const() {{value = {lit(b2)}}}
  conv = Conv(x, w, b) {{kernel_shape = [3, 3], pads = [1, 1, 1, 1]}}
  act = Relu(conv)
  out = NetOutput(act)
}}
'''
print(orig, end="")
open("conv-bn-folded.graph", "w").write(opt(*fold(), "Conv -> BatchNormalization folded into one Conv, weights and bias computed in f32."))
open("conv-bn-misplaced-epsilon.graph", "w").write(opt(*fold(eps_mode="wrong"), "Folded with scale / (sqrt(var) + eps) instead of scale / sqrt(var + eps)."))
open("conv-bn-dropped-bias.graph", "w").write(opt(*fold(bias=False), "Folded without BatchNormalization's bias."))
open("conv-bn-sign-error.graph", "w").write(opt(*fold(sign=-1), "Folded with the scale's sign flipped."))
open("conv-bn-wrong-axis.graph", "w").write(opt(*fold(axis="in"), "Folded scale applied to the input channels, not the output channels."))
