// The cache-organised kernels (Conv and ConvTranspose by output plane,
// MatMul and Gemm by output row) against the straightforward loops they
// replace (KernelContext::referenceLoops): the same bits for every shape,
// attribute, layout and dtype, specials included. The canonical summation
// order of tensor-semantics.md §3 is what makes this exact, so a fast path
// that reorders a sum fails here.
#include "../props/prop_support.h"
#include "nn_test_util.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

using namespace graphvet;
using namespace graphvet::testing;
using namespace graphvet::testing::nn;

namespace {

/// Elements drawn from a mix of ordinary values and the specials that show
/// a reordered sum or a wrong padding term: ±0, ±inf, NaN, large values
/// whose sums cancel, and values that round differently in f16.
Tensor genOperand(DType dt, const Shape &shape) {
  static constexpr double kValues[] = {1.0,   -1.0,    0.5,   -2.0,   3.0,  0.0,
                                       -0.0,  1e30,    -1e30, 65504., 1e-3, 0.1,
                                       -7.25, 1.0 / 3, 1e-40, 2049.0, 0.0};
  Tensor t(TensorType{dt, shape});
  const bool specials = *rc::gen::inRange(0, 4) == 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    size_t k = *rc::gen::inRange<size_t>(0, std::size(kValues));
    double v = kValues[k];
    if (specials && *rc::gen::inRange(0, 8) == 0)
      v = *rc::gen::element(std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN());
    t.setDouble(i, v);
  }
  return t;
}

DType genFloatType() {
  return *rc::gen::element(DType::F32, DType::F16, DType::F64);
}

/// Runs `n` on `inputs` twice, fast and reference, and asserts the same
/// types, indeterminate elements and bits, NaNs being equal to each other
/// (or the same refusal).
void assertFastEqualsReference(const Node &n, const std::vector<const Tensor *> &inputs) {
  std::string fastError, refError;
  auto fast = evaluateNode(n, inputs, fastError, nullptr, false);
  auto ref = evaluateNode(n, inputs, refError, nullptr, true);
  RC_ASSERT(fast.has_value() == ref.has_value());
  if (!fast) {
    RC_ASSERT(fastError == refError);
    RC_TAG("refused");
    return;
  }
  RC_ASSERT(fast->size() == ref->size());
  for (size_t k = 0; k < fast->size(); ++k) {
    const Tensor &f = (*fast)[k], &r = (*ref)[k];
    RC_ASSERT(f.type() == r.type());
    const size_t width = dtypeBytes(f.dtype());
    for (int64_t i = 0; i < f.size(); ++i) {
      if (f.isUndef(i) != r.isUndef(i))
        RC_FAIL(fmt::format("{} output {} element {}: indeterminate in one only", n.type, k, i));
      if (f.isUndef(i) || (std::isnan(f.getDouble(i)) && std::isnan(r.getDouble(i))))
        continue; // every NaN equals every other (tensor-semantics.md §7)
      if (std::memcmp(f.at(i), r.at(i), width) != 0)
        RC_FAIL(fmt::format("{} output {} element {}: fast {} reference {}", n.type, k, i,
                            f.getDouble(i), r.getDouble(i)));
    }
  }
  RC_TAG("compared");
}

} // namespace

/// Conv over 1-3 spatial axes: groups (depthwise included), strides,
/// dilations, pads or auto_pad, bias or not, NCHW or NHWC.
GRAPHVET_PROP(FastKernels, ConvByPlaneEqualsReference, 400, ()) {
  const DType dt = genFloatType();
  const int64_t rank = *rc::gen::inRange<int64_t>(1, 4); // spatial axes
  const int64_t group = *rc::gen::inRange<int64_t>(1, 4);
  const int64_t cg = *rc::gen::inRange<int64_t>(1, 4), mg = *rc::gen::inRange<int64_t>(1, 4);
  const int64_t batch = *rc::gen::inRange<int64_t>(1, 3);
  Shape xs{batch, cg * group}, ws{mg * group, cg};
  AttrMap attrs;
  std::vector<int64_t> strides, dilations, pads(2 * static_cast<size_t>(rank));
  for (int64_t a = 0; a < rank; ++a) {
    const int64_t k = *rc::gen::inRange<int64_t>(1, 4);
    const int64_t d = *rc::gen::inRange<int64_t>(1, 3);
    xs.push_back((k - 1) * d + *rc::gen::inRange<int64_t>(1, rank == 3 ? 4 : 7));
    ws.push_back(k);
    strides.push_back(*rc::gen::inRange<int64_t>(1, 4));
    dilations.push_back(d);
    pads[static_cast<size_t>(a)] = *rc::gen::inRange<int64_t>(0, k);
    pads[static_cast<size_t>(a + rank)] = *rc::gen::inRange<int64_t>(0, k);
  }
  attrs["strides"] = ints(strides);
  attrs["dilations"] = ints(dilations);
  if (*rc::gen::inRange(0, 4) == 0)
    attrs["auto_pad"] = str(*rc::gen::element<std::string>("SAME_UPPER", "SAME_LOWER", "VALID"));
  else
    attrs["pads"] = ints(pads);
  if (group > 1)
    attrs["group"] = AttrValue::ofInt(group);
  Tensor x = genOperand(dt, xs), w = genOperand(dt, ws);
  Tensor b = genOperand(dt, {mg * group});
  const bool bias = *rc::gen::arbitrary<bool>();
  const bool nhwc = rank == 2 && *rc::gen::arbitrary<bool>();
  if (nhwc) {
    attrs["layout"] = str("NHWC");
    x = toChannelsLast(x);
    w = toChannelsLast(w);
  }
  Node n = opNode("Conv", bias ? 3 : 2, attrs);
  std::vector<const Tensor *> ins{&x, &w};
  if (bias)
    ins.push_back(&b);
  assertFastEqualsReference(n, ins);
}

/// ConvTranspose over 1-2 spatial axes: groups, strides, dilations, pads,
/// output_padding, output_shape, bias or not (positions no tap reaches hold
/// the bias alone).
GRAPHVET_PROP(FastKernels, ConvTransposeByPlaneEqualsReference, 300, ()) {
  const DType dt = genFloatType();
  const int64_t rank = *rc::gen::inRange<int64_t>(1, 3);
  const int64_t group = *rc::gen::inRange<int64_t>(1, 3);
  const int64_t cg = *rc::gen::inRange<int64_t>(1, 4), mg = *rc::gen::inRange<int64_t>(1, 4);
  Shape xs{1, cg * group}, ws{cg * group, mg};
  AttrMap attrs;
  std::vector<int64_t> strides, dilations, pads(2 * static_cast<size_t>(rank)), outPad;
  for (int64_t a = 0; a < rank; ++a) {
    const int64_t k = *rc::gen::inRange<int64_t>(1, 4);
    xs.push_back(*rc::gen::inRange<int64_t>(1, 5));
    ws.push_back(k);
    const int64_t s = *rc::gen::inRange<int64_t>(1, 4);
    strides.push_back(s);
    dilations.push_back(*rc::gen::inRange<int64_t>(1, 3));
    pads[static_cast<size_t>(a)] = *rc::gen::inRange<int64_t>(0, k);
    pads[static_cast<size_t>(a + rank)] = *rc::gen::inRange<int64_t>(0, k);
    outPad.push_back(*rc::gen::inRange<int64_t>(0, s));
  }
  attrs["strides"] = ints(strides);
  attrs["dilations"] = ints(dilations);
  attrs["pads"] = ints(pads);
  attrs["output_padding"] = ints(outPad);
  if (group > 1)
    attrs["group"] = AttrValue::ofInt(group);
  Tensor x = genOperand(dt, xs), w = genOperand(dt, ws);
  Tensor b = genOperand(dt, {mg * group});
  const bool bias = *rc::gen::arbitrary<bool>();
  Node n = opNode("ConvTranspose", bias ? 3 : 2, attrs);
  std::vector<const Tensor *> ins{&x, &w};
  if (bias)
    ins.push_back(&b);
  assertFastEqualsReference(n, ins);
}

/// MatMul: 1-D operands, batch dimensions that broadcast, K = 0.
GRAPHVET_PROP(FastKernels, MatMulByRowsEqualsReference, 400, ()) {
  const DType dt = genFloatType();
  const int64_t m = *rc::gen::inRange<int64_t>(1, 5), k = *rc::gen::inRange<int64_t>(0, 6),
                n = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t batch = *rc::gen::inRange<int64_t>(1, 3);
  Shape as{m, k}, bs{k, n};
  switch (*rc::gen::inRange(0, 4)) {
  case 0:
    as = {k}; // [K] x [K, N]
    break;
  case 1:
    bs = {k}; // [M, K] x [K]
    break;
  case 2:
    as.insert(as.begin(), batch);
    bs.insert(bs.begin(), {batch == 1 ? 2 : 1, 1}); // [b, M, K] x [x, 1, K, N]
    break;
  default:
    break;
  }
  Tensor a = genOperand(dt, as), b = genOperand(dt, bs);
  assertFastEqualsReference(opNode("MatMul", 2), {&a, &b});
}

/// Gemm: transA, transB, alpha, beta (0 included) and C of every
/// broadcastable shape, or none.
GRAPHVET_PROP(FastKernels, GemmByRowsEqualsReference, 400, ()) {
  const DType dt = genFloatType();
  const int64_t m = *rc::gen::inRange<int64_t>(1, 5), k = *rc::gen::inRange<int64_t>(0, 6),
                n = *rc::gen::inRange<int64_t>(1, 5);
  const bool transA = *rc::gen::arbitrary<bool>(), transB = *rc::gen::arbitrary<bool>();
  AttrMap attrs;
  if (transA)
    attrs["transA"] = AttrValue::ofInt(1);
  if (transB)
    attrs["transB"] = AttrValue::ofInt(1);
  if (*rc::gen::arbitrary<bool>())
    attrs["alpha"] = AttrValue::ofFloat(*rc::gen::element(0.5, -2.0, 0.1, 0.0));
  if (*rc::gen::arbitrary<bool>())
    attrs["beta"] = AttrValue::ofFloat(*rc::gen::element(0.5, -1.0, 0.0, 3.0));
  Tensor a = genOperand(dt, transA ? Shape{k, m} : Shape{m, k});
  Tensor b = genOperand(dt, transB ? Shape{n, k} : Shape{k, n});
  const Shape cShape =
      *rc::gen::element(Shape{}, Shape{1}, Shape{n}, Shape{1, n}, Shape{m, 1}, Shape{m, n});
  Tensor c = genOperand(dt, cShape);
  const bool withC = *rc::gen::arbitrary<bool>();
  std::vector<const Tensor *> ins{&a, &b};
  if (withC)
    ins.push_back(&c);
  assertFastEqualsReference(opNode("Gemm", ins.size(), attrs), ins);
}
