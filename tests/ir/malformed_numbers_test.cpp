// Malformed graphs of format version 2, one per way a user's file can be
// wrong about numbers: tensor literals (dtype, range, element count, hex,
// splat, sidecar offset), port descriptions, and types the ops refuse
// (shapes that do not broadcast, dtype mismatches, bad axes, permutations,
// attribute kinds). Each must be one clear `LINE:COL: error:` at the
// offending literal or node -- what `graphvet` prints with exit status 2.
#include "ir/parser.h"
#include "ir/verifier.h"

#include <gtest/gtest.h>

namespace graphvet {
namespace {

struct Malformed {
  const char *name;
  const char *text;
  uint32_t line, col;
  const char *message;
};

const Malformed kCases[] = {
    {"add-dtype-mismatch",
     "graph root {\n  a = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}\n  b = Data() "
     "{index = 1, out0.dtype = i32, out0.shape = [2]}\n  s = Add(a, b)\n  out = NetOutput(s)\n}\n",
     4, 3, "'s': inputs 0 and 1 of Add have different dtypes (f32 and i32)"},
    {"add-not-broadcastable",
     "graph root {\n  a = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  b = Data() "
     "{index = 1, out0.dtype = f32, out0.shape = [4]}\n  s = Add(a, b)\n  out = NetOutput(s)\n}\n",
     4, 3, "'s': input shapes of Add do not broadcast: [2, 3] and [4] (input 1)"},
    {"batchnorm-scale-size",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [1, 3, 2, 2]}\n  s = "
     "Const() {value = f32[2] splat(1)}\n  m = Const() {value = f32[3] splat(0)}\n  b = "
     "BatchNormalization(x, s, m, m, s)\n  out = NetOutput(b)\n}\n",
     5, 3, "'b': input 1 (scale) must have shape [3] (one value per channel), got f32[2]"},
    {"bool-literal-two",
     "graph root {\n  c = Const() {value = bool[1] {2}}\n  out = NetOutput(c)\n}\n", 2, 33,
     "'2' is out of range for bool"},
    {"cast-unknown-dtype",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}\n  c = Cast(x) "
     "{to = f8}\n  out = NetOutput(c)\n}\n",
     3, 3,
     "'c': attribute 'to' of Cast must name a dtype (bool, i8, u8, i16, u16, i32, u32, i64, u64, "
     "f16, bf16, f32, f64)"},
    {"concat-axis-range",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  c = "
     "Concat(x, x) {axis = 2}\n  out = NetOutput(c)\n}\n",
     3, 3, "'c': Concat: axis 2 is out of range for f32[2, 3]"},
    {"const-description-disagrees",
     "graph root {\n  c = Const() {value = f32[2] {1, 2}, out0.dtype = i32, out0.shape = [2]}\n  "
     "out = NetOutput(c)\n}\n",
     2, 3, "'c': output 0 is described as i32[2] but its inferred type is f32[2]"},
    {"const-value-not-tensor", "graph root {\n  c = Const() {value = 3}\n  out = NetOutput(c)\n}\n",
     2, 3, "'c': the value of Const must be a tensor literal (for example f32[2] {1, 2})"},
    {"conv-channel-mismatch",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [1, 3, 4, 4]}\n  w = "
     "Const() {value = f32[2, 2, 1, 1] splat(1)}\n  c = Conv(x, w)\n  out = NetOutput(c)\n}\n",
     4, 3, "'c': W has 2 input channels per group but X's 3 channels in 1 group(s) need 3"},
    {"data-negative-dim",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, -3]}\n  out = "
     "NetOutput(x)\n}\n",
     2, 3, "out0.shape of 'x' must be a list of non-negative integers"},
    {"data-shape-not-list",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = 3}\n  out = "
     "NetOutput(x)\n}\n",
     2, 3, "out0.shape of 'x' must be a list of non-negative integers"},
    {"data-unknown-dtype",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f99, out0.shape = [2]}\n  out = "
     "NetOutput(x)\n}\n",
     2, 3, "unknown dtype 'f99' in out0.dtype of 'x'"},
    {"described-port-disagrees",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}\n  y = Relu(x) "
     "{out0.dtype = f16}\n  out = NetOutput(y)\n}\n",
     3, 3, "'y': output 0 is described as f16[4] but its inferred type is f32[2]"},
    {"expand-incompatible",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  s = Const() "
     "{value = i64[2] {4, 3}}\n  y = Expand(x, s)\n  out = NetOutput(y)\n}\n",
     4, 3, "'y': Expand: f32[2, 3] does not broadcast to shape [4, 3]"},
    {"file-negative-offset",
     "graph root {\n  c = Const() {value = f32[1] file(\"w.weights\", -4)}\n  out = "
     "NetOutput(c)\n}\n",
     2, 49, "expected a byte offset, found integer -4"},
    {"gather-float-indices",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  i = Const() "
     "{value = f32[1] {0}}\n  g = Gather(x, i)\n  out = NetOutput(g)\n}\n",
     4, 3, "'g': input 1 (indices) of Gather must be i32 or i64, got f32[1]"},
    {"hex-odd-digits",
     "graph root {\n  c = Const() {value = u8[1] hex \"0\"}\n  out = NetOutput(c)\n}\n", 2, 34,
     "tensor literal u8[1] needs 2 hex digits, found 1"},
    {"leakyrelu-alpha-string",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}\n  y = "
     "LeakyRelu(x) {alpha = \"big\"}\n  out = NetOutput(y)\n}\n",
     3, 3, "'y': attribute 'alpha' of LeakyRelu must be a float, got a string"},
    {"literal-unclosed",
     "graph root {\n  c = Const() {value = f32[2] {1, 2}\n  out = NetOutput(c)\n}\n", 3, 3,
     "expected ',' or '}' after attribute 'value', found 'out'"},
    {"matmul-inner-mismatch",
     "graph root {\n  a = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  b = Data() "
     "{index = 1, out0.dtype = f32, out0.shape = [4, 5]}\n  s = MatMul(a, b)\n  out = "
     "NetOutput(s)\n}\n",
     4, 3, "'s': MatMul inner dimensions differ: [2, 3] x [4, 5]"},
    {"pad-pads-length",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  p = Const() "
     "{value = i64[3] {0, 0, 0}}\n  y = Pad(x, p)\n  out = NetOutput(y)\n}\n",
     4, 3, "'y': Pad: pads [0, 0, 0] must have 2 entries per padded axis of f32[2, 3]"},
    {"reducesum-axis-range",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  a = Const() "
     "{value = i64[1] {3}}\n  y = ReduceSum(x, a)\n  out = NetOutput(y)\n}\n",
     4, 3, "'y': axis 3 is out of range for rank 2"},
    {"relu-int-input",
     "graph root {\n  x = Data() {index = 0, out0.dtype = bool, out0.shape = [2]}\n  y = Relu(x)\n "
     " out = NetOutput(y)\n}\n",
     3, 3,
     "'y': Relu does not accept bool (input 0); allowed: i8, i16, i32, i64, f16, bf16, f32, f64"},
    {"reshape-element-count",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  s = Const() "
     "{value = i64[2] {4, 2}}\n  r = Reshape(x, s)\n  out = NetOutput(r)\n}\n",
     4, 3, "'r': Reshape: shape [4, 2] does not hold the 6 elements of f32[2, 3]"},
    {"reshape-two-minus-one",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  s = Const() "
     "{value = i64[2] {-1, -1}}\n  r = Reshape(x, s)\n  out = NetOutput(r)\n}\n",
     4, 3, "'r': Reshape: shape [-1, -1] has more than one -1"},
    {"slice-zero-step",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [4]}\n  st = Const() "
     "{value = i64[1] {0}}\n  en = Const() {value = i64[1] {4}}\n  ax = Const() {value = i64[1] "
     "{0}}\n  sp = Const() {value = i64[1] {0}}\n  s = Slice(x, st, en, ax, sp)\n  out = "
     "NetOutput(s)\n}\n",
     7, 3, "'s': Slice: step must not be zero"},
    {"softmax-axis-range",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  s = "
     "Softmax(x) {axis = 5}\n  out = NetOutput(s)\n}\n",
     3, 3, "'s': axis 5 is out of range for rank 2"},
    {"splat-two-values",
     "graph root {\n  c = Const() {value = f32[2] splat(1, 2)}\n  out = NetOutput(c)\n}\n", 2, 38,
     "expected ')' after the splat value, found ','"},
    {"squeeze-not-one",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  a = Const() "
     "{value = i64[1] {0}}\n  s = Squeeze(x, a)\n  out = NetOutput(s)\n}\n",
     4, 3, "'s': Squeeze: axis 0 of f32[2, 3] does not have size 1"},
    {"transpose-perm-length",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  t = "
     "Transpose(x) {perm = [1, 0, 2]}\n  out = NetOutput(t)\n}\n",
     3, 3, "'t': Transpose: perm [1, 0, 2] is not a permutation of the axes of f32[2, 3]"},
    {"transpose-perm-repeats",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}\n  t = "
     "Transpose(x) {perm = [0, 0]}\n  out = NetOutput(t)\n}\n",
     3, 3, "'t': Transpose: perm [0, 0] is not a permutation of the axes of f32[2, 3]"},
    {"u8-literal-negative",
     "graph root {\n  c = Const() {value = u8[1] {-1}}\n  out = NetOutput(c)\n}\n", 2, 31,
     "'-1' is out of range for u8"},
    {"unknown-literal-dtype",
     "graph root {\n  c = Const() {value = f8[1] {1}}\n  out = NetOutput(c)\n}\n", 2, 24,
     "unknown dtype 'f8' in a tensor literal (bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, "
     "bf16, f32, f64)"},
    {"where-cond-not-bool",
     "graph root {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}\n  w = Where(x, "
     "x, x)\n  out = NetOutput(w)\n}\n",
     3, 3, "'w': input 0 (condition) of Where must be one of bool, got f32"},
};

class MalformedGraph : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedGraph, IsOneErrorAtItsPosition) {
  const Malformed &c = GetParam();
  ParseResult r = parseModule(c.text);
  Diagnostics errors = r.diagnostics;
  if (r.module)
    errors = verifyModule(*r.module);
  ASSERT_FALSE(errors.empty()) << "accepted";
  const Diagnostic &d = errors.front();
  EXPECT_EQ(d.severity, Severity::Error);
  EXPECT_EQ(d.loc.line, c.line);
  EXPECT_EQ(d.loc.col, c.col);
  EXPECT_EQ(d.message, c.message);
}

INSTANTIATE_TEST_SUITE_P(Numbers, MalformedGraph, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Malformed> &info) {
                           std::string n = info.param.name;
                           for (char &ch : n)
                             if (ch == '-')
                               ch = '_';
                           return n;
                         });

} // namespace
} // namespace graphvet
