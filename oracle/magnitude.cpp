// The shadow evaluation of the `approx` contract; see magnitude.h. Each op
// gets one rule: its own kernel run in f64 on the magnitudes (ops whose
// result, on non-negative operands, is a sum of products of them), a
// renamed kernel where a sign matters (Sub as Add, Min as Max), a Lipschitz
// or first-order rule for smooth non-linear ops, or no rule (infinite
// magnitude: the check cannot bound the element).
#include "oracle/magnitude.h"

#include "ir/op_def.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

namespace graphvet::oracle {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// How an op's magnitude follows from its inputs'.
enum class Rule {
  Kernel,      ///< the op's kernel on magnitudes (non-float inputs keep their values)
  AsAdd,       ///< Sub: |a - b| <= |a| + |b|
  AsMax,       ///< Min: the larger magnitude bounds either operand
  AsReduceMax, ///< ReduceMin
  Gemm,        ///< the kernel with |alpha| and |beta|
  PassThrough, ///< 1-Lipschitz and exact on its own: |f(x) - f(y)| <= |x - y|
  Lipschitz,   ///< smooth, derivative bounded by a constant: L * M + |out|
  Exp,         ///< |out| * M + |out|
  Log,         ///< M / |x| + |out|
  Sqrt,        ///< M / (2 |out|) + |out|
  Reciprocal,  ///< M / x^2 + |out|
  Div,         ///< Ma / |b| + |a| Mb / b^2 + |out|
  Softmax,     ///< 2 |out| max M + |out|
  LogSoftmax,  ///< 2 max M + |out|
  BatchNorm,   ///< the kernel on (Mx, Mscale, Mbias, -Mmean, var)
  Normalize,   ///< Instance/LayerNormalization: docs/numbers.md's statistics bound
  Discrete,    ///< exact from exact inputs, unbounded otherwise (Floor, ArgMax...)
  ShapeOnly,   ///< depends on shapes only: always exact (Shape, Size)
  None,        ///< no rule: unbounded
};

struct RuleRow {
  std::string_view op;
  Rule rule;
  double lipschitz = 1;
};

constexpr RuleRow kRules[] = {
    // Sums of products of non-negative operands, and data movement.
    {"Add", Rule::Kernel},
    {"Mul", Rule::Kernel},
    {"Sum", Rule::Kernel},
    {"Mean", Rule::Kernel},
    {"MatMul", Rule::Kernel},
    {"Conv", Rule::Kernel},
    {"ConvTranspose", Rule::Kernel},
    {"AveragePool", Rule::Kernel},
    {"GlobalAveragePool", Rule::Kernel},
    {"MaxPool", Rule::Kernel},
    {"GlobalMaxPool", Rule::Kernel},
    {"ReduceSum", Rule::Kernel},
    {"ReduceMean", Rule::Kernel},
    {"ReduceMax", Rule::Kernel},
    {"ReduceL1", Rule::Kernel},
    {"ReduceL2", Rule::Kernel},
    {"ReduceSumSquare", Rule::Kernel},
    {"CumSum", Rule::Kernel},
    {"Max", Rule::Kernel},
    {"Relu", Rule::Kernel},
    {"Abs", Rule::Kernel},
    {"Where", Rule::Kernel},
    {"Reshape", Rule::Kernel},
    {"Flatten", Rule::Kernel},
    {"Squeeze", Rule::Kernel},
    {"Unsqueeze", Rule::Kernel},
    {"Transpose", Rule::Kernel},
    {"Concat", Rule::Kernel},
    {"Split", Rule::Kernel},
    {"Slice", Rule::Kernel},
    {"Gather", Rule::Kernel},
    {"Expand", Rule::Kernel},
    {"Tile", Rule::Kernel},
    {"Pad", Rule::Kernel},
    {"DepthToSpace", Rule::Kernel},
    {"SpaceToDepth", Rule::Kernel},
    {"Resize", Rule::Kernel},
    {"Identity", Rule::Kernel},
    {"Dropout", Rule::Kernel},
    {"Sub", Rule::AsAdd},
    {"Min", Rule::AsMax},
    {"ReduceMin", Rule::AsReduceMax},
    {"Gemm", Rule::Gemm},
    {"Neg", Rule::PassThrough},
    {"Clip", Rule::PassThrough},
    {"LeakyRelu", Rule::PassThrough},
    {"Cast", Rule::PassThrough},
    {"CastLike", Rule::PassThrough},
    {"Sigmoid", Rule::Lipschitz, 0.25},
    {"Tanh", Rule::Lipschitz, 1},
    {"Softsign", Rule::Lipschitz, 1},
    {"Softplus", Rule::Lipschitz, 1},
    {"Erf", Rule::Lipschitz, 1.1283791670955126}, // 2 / sqrt(pi)
    {"HardSwish", Rule::Lipschitz, 1.5},
    {"Celu", Rule::Lipschitz, 1},
    {"Exp", Rule::Exp},
    {"Log", Rule::Log},
    {"Sqrt", Rule::Sqrt},
    {"Reciprocal", Rule::Reciprocal},
    {"Div", Rule::Div},
    {"Softmax", Rule::Softmax},
    {"LogSoftmax", Rule::LogSoftmax},
    {"BatchNormalization", Rule::BatchNorm},
    {"InstanceNormalization", Rule::Normalize},
    {"LayerNormalization", Rule::Normalize},
    {"Floor", Rule::Discrete},
    {"Ceil", Rule::Discrete},
    {"Round", Rule::Discrete},
    {"Sign", Rule::Discrete},
    {"ArgMax", Rule::Discrete},
    {"ArgMin", Rule::Discrete},
    {"Hardmax", Rule::Discrete},
    {"Equal", Rule::Discrete},
    {"Less", Rule::Discrete},
    {"Greater", Rule::Discrete},
    {"LessOrEqual", Rule::Discrete},
    {"GreaterOrEqual", Rule::Discrete},
    {"IsNaN", Rule::Discrete},
    {"IsInf", Rule::Discrete},
    {"Not", Rule::Discrete},
    {"And", Rule::Discrete},
    {"Or", Rule::Discrete},
    {"Xor", Rule::Discrete},
    {"Shape", Rule::ShapeOnly},
    {"Size", Rule::ShapeOnly},
    {"ConstantOfShape", Rule::ShapeOnly},
    {"Range", Rule::Discrete},
};

/// The row for `type`, with the parameterised Lipschitz constants of the
/// ELU family and HardSigmoid read from the node.
RuleRow ruleOf(const Node &n) {
  // Celu's slope on the negative side is exp(x / alpha): at most 1 only for
  // alpha > 0 (a typed campaign finding with alpha = -2.5).
  if (n.type == "Celu" && !(attrFloat(n, "alpha", 1.0) > 0))
    return {"Celu", Rule::None};
  for (const RuleRow &r : kRules)
    if (r.op == n.type)
      return r;
  if (n.type == "Elu")
    return {"Elu", Rule::Lipschitz, std::max(1.0, std::fabs(attrFloat(n, "alpha", 1.0)))};
  if (n.type == "Selu")
    return {"Selu", Rule::Lipschitz,
            std::fabs(attrFloat(n, "gamma", 1.0507009873554805)) *
                std::max(1.0, std::fabs(attrFloat(n, "alpha", 1.6732632423543772)))};
  if (n.type == "HardSigmoid")
    return {"HardSigmoid", Rule::Lipschitz, std::fabs(attrFloat(n, "alpha", 0.2))};
  return {n.type, Rule::None};
}

/// The number of elements one statistic of an Instance/LayerNormalization
/// sums: the spatial positions of a (batch, channel) plane, or the row from
/// `axis` to the last axis. 1 when the input is missing or malformed.
int64_t normalizedGroupSize(const Node &n, std::span<const Tensor *const> in) {
  if (in.empty() || !in[0])
    return 1;
  const Shape &s = in[0]->shape();
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t size = 1;
  if (n.type == "InstanceNormalization") {
    if (rank < 3)
      return 1;
    bool nhwc = attrString(n, "layout", "NCHW") == "NHWC";
    for (int64_t a = nhwc ? 1 : 2; a < (nhwc ? rank - 1 : rank); ++a)
      size *= s[static_cast<size_t>(a)];
    return std::max<int64_t>(size, 1);
  }
  int64_t axis = attrInt(n, "axis", -1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return 1;
  for (int64_t a = axis; a < rank; ++a)
    size *= s[static_cast<size_t>(a)];
  return std::max<int64_t>(size, 1);
}

/// Roundings one execution of the op adds to the longest chain behind an
/// output element: the number of terms it sums (recursive summation of k
/// terms is within gamma_k), plus the products and the bias.
uint32_t roundingsOf(const Node &n, std::span<const Tensor *const> in,
                     std::span<const Tensor> out) {
  auto size = [](const Tensor *t) { return t ? std::max<int64_t>(t->size(), 1) : 1; };
  auto axisLen = [&](int64_t def) -> int64_t {
    if (in.empty() || !in[0] || in[0]->shape().empty())
      return 1;
    int64_t rank = static_cast<int64_t>(in[0]->shape().size());
    int64_t axis = attrInt(n, "axis", def);
    if (axis < 0)
      axis += rank;
    return axis >= 0 && axis < rank ? in[0]->shape()[static_cast<size_t>(axis)] : 1;
  };
  int64_t k = 1;
  const std::string &t = n.type;
  if ((t == "MatMul" || t == "Gemm") && in.size() >= 2 && in[0] && !in[0]->shape().empty()) {
    const Shape &a = in[0]->shape();
    bool transA = t == "Gemm" && attrInt(n, "transA", 0) != 0;
    k = (transA && a.size() >= 2 ? a[a.size() - 2] : a.back()) + 3;
  } else if ((t == "Conv" || t == "ConvTranspose") && in.size() >= 2 && in[1] &&
             in[1]->shape().size() >= 2) {
    const Shape &w = in[1]->shape();
    int64_t perOut = size(in[1]) / std::max<int64_t>(t == "Conv" ? w[0] : w[1], 1);
    k = perOut + 2;
  } else if (t == "Softmax" || t == "LogSoftmax") {
    k = axisLen(-1) + 3;
  } else if (t == "CumSum") {
    k = size(in.empty() ? nullptr : in[0]) + 1;
  } else if (t == "Sum" || t == "Mean") {
    k = static_cast<int64_t>(in.size()) + 1;
  } else if (t == "BatchNormalization") {
    k = 5;
  } else if (t == "InstanceNormalization" || t == "LayerNormalization") {
    // Two sums of the group's size (mean, variance) and ten element-wise
    // steps (centre, square, divisions, epsilon, sqrt, scale, bias).
    k = 2 * normalizedGroupSize(n, in) + 10;
  } else if (t.starts_with("Reduce") || t.ends_with("Pool")) {
    int64_t outSize = out.empty() ? 1 : std::max<int64_t>(out[0].size(), 1);
    int64_t ratio = size(in.empty() ? nullptr : in[0]) / outSize;
    if (auto ks = attrInts(n, "kernel_shape")) {
      ratio = 1;
      for (int64_t d : *ks)
        ratio *= std::max<int64_t>(d, 1);
    }
    k = std::max<int64_t>(ratio, 1) + 2;
  } else if (t == "Exp" || t == "Log" || t == "Sqrt" || t == "Erf" || t == "Tanh" ||
             t == "Sigmoid" || t == "Softplus" || t == "Div" || t == "Resize") {
    k = 2;
  }
  return static_cast<uint32_t>(std::min<int64_t>(k, UINT32_MAX / 4));
}

/// An input's magnitudes as an f64 tensor of its shape.
Tensor magnitudeTensor(const Tensor &value, const Magnitude *s, bool negate = false) {
  Tensor t(TensorType{DType::F64, value.shape()});
  bool usable = s && static_cast<int64_t>(s->m.size()) == value.size();
  for (int64_t i = 0; i < value.size(); ++i) {
    double m = usable ? s->m[static_cast<size_t>(i)] : std::fabs(value.getDouble(i));
    t.setDouble(i, negate ? -m : m);
  }
  return t;
}

/// Runs `kernel` with every float input replaced by its magnitudes (input
/// `negated` by their negation); nullopt when the kernel refuses.
std::optional<std::vector<Tensor>> kernelOnMagnitudes(const Node &n, KernelFn kernel,
                                                      std::span<const Tensor *const> in,
                                                      std::span<const Magnitude *const> shadows,
                                                      std::span<const Tensor> out, int negated = -1,
                                                      std::span<const size_t> valuesKept = {}) {
  if (!kernel)
    return std::nullopt;
  std::vector<Tensor> mags(in.size());
  std::vector<const Tensor *> ptrs(in.size(), nullptr);
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i])
      continue;
    bool keep = std::find(valuesKept.begin(), valuesKept.end(), i) != valuesKept.end();
    if (!isFloat(in[i]->dtype()) || keep) {
      ptrs[i] = in[i];
      continue;
    }
    mags[i] = magnitudeTensor(*in[i], i < shadows.size() ? shadows[i] : nullptr,
                              static_cast<int>(i) == negated);
    ptrs[i] = &mags[i];
  }
  std::vector<Tensor> outs;
  for (const Tensor &o : out)
    outs.emplace_back(TensorType{isFloat(o.dtype()) ? DType::F64 : o.dtype(), o.shape()});
  try {
    KernelContext ctx{n, ptrs, outs, nullptr};
    kernel(ctx);
  } catch (const std::exception &) {
    return std::nullopt;
  }
  return outs;
}

bool exactInputs(std::span<const Magnitude *const> shadows) {
  return std::all_of(shadows.begin(), shadows.end(),
                     [](const Magnitude *s) { return !s || s->unit == 0; });
}

double at(const Magnitude *s, const Tensor &value, int64_t i) {
  if (s && static_cast<int64_t>(s->m.size()) == value.size())
    return s->m[static_cast<size_t>(i)];
  return std::fabs(value.getDouble(i));
}

/// Index into `t` of output element `i` under ONNX broadcasting to `outShape`.
int64_t broadcastAt(const Tensor &t, const Shape &outShape, int64_t i) {
  if (t.size() == 1)
    return 0;
  return broadcastIndex(i, outShape, t.shape());
}

double largestFinite(DType t) {
  switch (t) {
  case DType::F16:
    return 65504;
  case DType::BF16:
    return 3.3895313892515355e38;
  case DType::F32:
    return std::numeric_limits<float>::max();
  default:
    return std::numeric_limits<double>::max();
  }
}

/// The smallest positive subnormal of a float dtype (0 for others).
double smallestSubnormal(DType t) {
  switch (t) {
  case DType::F16:
    return std::ldexp(1.0, -24);
  case DType::BF16:
    return std::ldexp(1.0, -133);
  case DType::F32:
    return std::ldexp(1.0, -149);
  case DType::F64:
    return std::numeric_limits<double>::denorm_min();
  default:
    return 0;
  }
}

/// Element `i` of an Instance/LayerNormalization input: its statistics group
/// (a (batch, channel) plane, or a row) and the index of its Scale / B value.
struct NormSlot {
  int64_t group = 0;
  int64_t param = 0;
};

/// The slot of every element of `x`, or nullopt for a shape the op rejects.
std::optional<std::vector<NormSlot>> normSlots(const Node &n, const Tensor &x) {
  const Shape &s = x.shape();
  int64_t rank = static_cast<int64_t>(s.size());
  std::vector<NormSlot> slots(static_cast<size_t>(x.size()));
  if (n.type == "InstanceNormalization") {
    if (rank < 3)
      return std::nullopt;
    bool nhwc = attrString(n, "layout", "NCHW") == "NHWC";
    int64_t c = nhwc ? s.back() : s[1];
    int64_t plane = normalizedGroupSize(n, std::span<const Tensor *const>(std::array{&x}));
    if (c <= 0 || plane <= 0)
      return std::nullopt;
    for (int64_t i = 0; i < x.size(); ++i) {
      int64_t ch = nhwc ? i % c : (i / plane) % c;
      int64_t batch = i / (plane * c);
      slots[static_cast<size_t>(i)] = {batch * c + ch, ch};
    }
    return slots;
  }
  int64_t cols = normalizedGroupSize(n, std::span<const Tensor *const>(std::array{&x}));
  for (int64_t i = 0; i < x.size(); ++i)
    slots[static_cast<size_t>(i)] = {i / cols, i % cols};
  return slots;
}

/// Magnitudes of an Instance/LayerNormalization's outputs (Y, and
/// LayerNormalization's Mean and InvStdDev) -- the first-order bound derived
/// in docs/numbers.md ("Normalizations"). Per group of n elements, from the
/// original's values (x, in f64: mean mu, variance var, s = sqrt(var + eps))
/// and the input's magnitudes Mx:
///   V  = var + eps + 8 mean(Mx^2) + 4 tiny/u   (bounds the variance's error / gamma)
///   D  = Mx_i + mean(Mx) + tiny/u              (bounds x_i - mu's error / gamma)
///   N  = D / s + |z| (V / (2 s^2) + 2),  z = (x_i - mu) / s
///   Y  = Mscale (N + 2 |z|) + 2 Mbias
/// A group whose sums may overflow the data dtype (sum Mx^2 or sum Mx near
/// its largest finite value), or whose s is 0, is unbounded: a rewrite
/// computing in that dtype may overflow where the fused kernel did not.
std::optional<std::vector<std::vector<double>>>
normalizeMagnitudes(const Node &n, std::span<const Tensor *const> in,
                    std::span<const Magnitude *const> shadows, std::span<const Tensor> out,
                    double unit) {
  if (in.size() < 2 || !in[0] || !in[1] || out.empty() || out[0].size() != in[0]->size())
    return std::nullopt;
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor *bias = in.size() > 2 ? in[2] : nullptr;
  auto shadow = [&](size_t i) -> const Magnitude * {
    return i < shadows.size() ? shadows[i] : nullptr;
  };
  auto slots = normSlots(n, x);
  if (!slots || unit <= 0)
    return std::nullopt;
  int64_t groups = 0;
  for (const NormSlot &sl : *slots)
    groups = std::max(groups, sl.group + 1);
  DType t = x.dtype();
  double eps = static_cast<double>(static_cast<float>(attrFloat(n, "epsilon", 1e-5)));
  double tinyOverU = smallestSubnormal(t) / unit;
  // Per group: count, sum x, sum Mx, sum Mx^2, then sum (x - mu)^2.
  std::vector<double> count(static_cast<size_t>(groups)), sumX(count), sumM(count), sumM2(count),
      sumD2(count);
  for (int64_t i = 0; i < x.size(); ++i) {
    size_t g = static_cast<size_t>((*slots)[static_cast<size_t>(i)].group);
    double v = x.getDouble(i), m = at(shadow(0), x, i);
    count[g] += 1;
    sumX[g] += v;
    sumM[g] += m;
    sumM2[g] += m * m;
  }
  auto mean = [&](const std::vector<double> &sum, size_t g) { return sum[g] / count[g]; };
  for (int64_t i = 0; i < x.size(); ++i) {
    size_t g = static_cast<size_t>((*slots)[static_cast<size_t>(i)].group);
    double d = x.getDouble(i) - mean(sumX, g);
    sumD2[g] += d * d;
  }
  double limit = largestFinite(t);
  std::vector<std::vector<double>> result(out.size());
  result[0].resize(static_cast<size_t>(x.size()));
  for (int64_t i = 0; i < x.size(); ++i) {
    const NormSlot &sl = (*slots)[static_cast<size_t>(i)];
    size_t g = static_cast<size_t>(sl.group);
    double var = mean(sumD2, g), s = std::sqrt(var + eps);
    double &m = result[0][static_cast<size_t>(i)];
    if (!(s > 0) || !std::isfinite(s) || sumM2[g] >= limit || sumM[g] >= limit) {
      m = kInf;
      continue;
    }
    double bigV = var + eps + 8 * mean(sumM2, g) + 4 * tinyOverU;
    double z = std::fabs(x.getDouble(i) - mean(sumX, g)) / s;
    double bigD = at(shadow(0), x, i) + mean(sumM, g) + tinyOverU;
    double normed = bigD / s + z * (bigV / (2 * s * s) + 2);
    int64_t si = scale.size() == 1 ? 0 : sl.param;
    double mScale = si < scale.size() ? at(shadow(1), scale, si) : kInf;
    double mBias = 0;
    if (bias) {
      int64_t bi = bias->size() == 1 ? 0 : sl.param;
      mBias = bi < bias->size() ? at(shadow(2), *bias, bi) : kInf;
    }
    m = mScale * (normed + 2 * z) + 2 * mBias;
  }
  // LayerNormalization's Mean and InvStdDev, one per row.
  for (size_t k = 1; k < out.size(); ++k) {
    result[k].assign(static_cast<size_t>(out[k].size()), kInf);
    for (int64_t r = 0; r < out[k].size() && r < groups; ++r) {
      size_t g = static_cast<size_t>(r);
      double var = mean(sumD2, g), s = std::sqrt(var + eps);
      if (!(s > 0) || !std::isfinite(s) || sumM2[g] >= limit)
        continue;
      double bigV = var + eps + 8 * mean(sumM2, g) + 4 * tinyOverU;
      result[k][g] = k == 1 ? 2 * mean(sumM, g) : bigV / (2 * s * s * s) + 2 / s;
    }
  }
  return result;
}

} // namespace

double unitRoundoff(DType t) {
  switch (t) {
  case DType::F16:
    return std::ldexp(1.0, -11);
  case DType::BF16:
    return std::ldexp(1.0, -8);
  case DType::F32:
    return std::ldexp(1.0, -24);
  case DType::F64:
    return std::ldexp(1.0, -53);
  default:
    return 0;
  }
}

Magnitude exactMagnitude(const Tensor &t) {
  Magnitude s;
  s.m.resize(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i)
    s.m[static_cast<size_t>(i)] = std::fabs(t.getDouble(i));
  return s;
}

/// May a legitimate rewrite of an element of magnitude `m` (chain `depth`,
/// unit roundoff `unit`) overflow? It may land anywhere within 2 * gamma * m
/// of the original; past the largest finite value that includes infinity (an
/// f16 BatchNormalization at 65504 whose rewrite rounds up: a campaign
/// finding).
bool nearOverflow(double m, uint32_t depth, double unit, DType t) {
  double limit = largestFinite(t);
  if (!std::isfinite(m) || m >= limit)
    return true;
  double nu = static_cast<double>(depth + kRewriteSlack) * unit;
  if (nu >= 0.5)
    return false; // no gamma: the caller treats the element as unbounded anyway
  return m * (1 + 2 * nu / (1 - nu)) >= limit;
}

double allowedDistance(const Magnitude &s, size_t i, DType t) {
  if (s.unit == 0 || i >= s.m.size())
    return 0;
  double m = s.m[i];
  if (!std::isfinite(m) || m >= largestFinite(t))
    return kInf; // near overflow, a reordering may overflow where the original did not
  double nu = static_cast<double>(s.depth + kRewriteSlack) * s.unit;
  if (nu >= 0.5)
    return kInf;
  double gamma = nu / (1 - nu);
  if (nearOverflow(m, s.depth, s.unit, t))
    return kInf;
  double tiny = 0;
  switch (t) {
  case DType::F16:
    tiny = std::ldexp(1.0, -24);
    break;
  case DType::BF16:
    tiny = std::ldexp(1.0, -133);
    break;
  case DType::F32:
    tiny = std::ldexp(1.0, -149);
    break;
  case DType::F64:
    tiny = std::numeric_limits<double>::denorm_min();
    break;
  default:
    break;
  }
  return 2 * (gamma * m + static_cast<double>(s.depth + kRewriteSlack) * tiny);
}

namespace {

/// May a rewrite's value of element `i` of `x` lie on the other side of 0
/// (or on it)? Then an op with a pole or a domain edge there (Sqrt and Log of
/// a negative, a division by it) may give NaN or infinity in the rewrite
/// where the original had a number: that element's result is unbounded (a
/// typed campaign finding, InstanceNormalization before a Sqrt in f16).
/// Is the allowed distance of element `i` of `x` too large for the
/// first-order rule of an exponential? exp(x + d) - exp(x) = exp(x)(e^d - 1)
/// is within about exp(x) * d only while d is small; past 1/16 (e^d - 1 > 1.03 d)
/// the rule would promise too little (a Softmax after a Selu with gamma 1e30,
/// whose output underflowed to 0 in the original and was 0.5 in the rewrite:
/// a campaign finding): the result is unbounded.
bool pastFirstOrder(const Magnitude *s, const Tensor &x, int64_t i) {
  if (!s || !isFloat(x.dtype()))
    return false;
  return allowedDistance(*s, static_cast<size_t>(i), x.dtype()) > 0.0625;
}

bool mayCrossZero(const Magnitude *s, const Tensor &x, int64_t i) {
  if (!s || !isFloat(x.dtype()))
    return false;
  double d = allowedDistance(*s, static_cast<size_t>(i), x.dtype());
  return d > 0 && d >= std::fabs(x.getDouble(i));
}

} // namespace

std::vector<Magnitude> propagateMagnitudes(const Node &n, const OpInfo &op,
                                           std::span<const Tensor *const> inputs,
                                           std::span<const Magnitude *const> shadows,
                                           std::span<const Tensor> outputs) {
  std::vector<Magnitude> result(outputs.size());
  RuleRow row = ruleOf(n);
  uint32_t depth = 0;
  double unit = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && i < shadows.size() && shadows[i]) {
      depth = std::max(depth, shadows[i]->depth);
      unit = std::max(unit, shadows[i]->unit);
    }
  bool exactIn = exactInputs(shadows);
  if (row.rule == Rule::ShapeOnly || (row.rule == Rule::Discrete && exactIn) ||
      op.nondeterministic) {
    // Exact (or a fresh draw the check compares by its own rules).
    for (size_t k = 0; k < outputs.size(); ++k)
      result[k] = exactMagnitude(outputs[k]);
    return result;
  }
  uint32_t chain = depth + roundingsOf(n, inputs, outputs);
  auto finish = [&](size_t k, std::vector<double> m) {
    // The error analysis holds only while nothing overflows: past an
    // infinity or NaN in the original, the element is unbounded; so is one
    // whose magnitude reaches the dtype's largest finite value (a rewrite's
    // partial sums may overflow where the original's did not). Infinity,
    // unlike a large finite magnitude, stays unbounded through the ops after
    // it (a Sqrt of it divided the magnitude back into range: a typed
    // campaign finding, fold-scale-axis before a Sqrt).
    if (isFloat(outputs[k].dtype())) {
      DType t = outputs[k].dtype();
      // Underflow: each rounding may also add an absolute error of one
      // smallest subnormal, which the ops after it scale like any other
      // error (a Selu with gamma 1e30 after a subnormal product: a campaign
      // finding). Carried as magnitude: tiny / u per rounding is the
      // magnitude whose relative bound is that absolute error.
      double u = unitRoundoff(t);
      double outUnit = std::max(unit, u);
      double underflow =
          u > 0 ? static_cast<double>(chain - depth + 1) * smallestSubnormal(t) / u : 0;
      for (size_t i = 0; i < m.size() && i < static_cast<size_t>(outputs[k].size()); ++i) {
        m[i] += underflow;
        if (!std::isfinite(outputs[k].getDouble(static_cast<int64_t>(i))) ||
            nearOverflow(m[i], chain, outUnit, t))
          m[i] = kInf;
      }
    }
    result[k].m = std::move(m);
    result[k].depth = chain;
    result[k].unit = std::max(unit, unitRoundoff(outputs[k].dtype()));
  };
  auto unbounded = [&](size_t k) {
    finish(k, std::vector<double>(static_cast<size_t>(outputs[k].size()), kInf));
  };
  // A discrete operand computed from rounded values (Where's condition, an
  // integer Div's operands, a Gather's indices) may take another value in
  // the rewrite, and then any element of the result may change: free.
  for (size_t i = 0; i < inputs.size() && i < shadows.size(); ++i)
    if (inputs[i] && shadows[i] && !isFloat(inputs[i]->dtype()) && shadows[i]->unit != 0) {
      for (size_t k = 0; k < outputs.size(); ++k)
        unbounded(k);
      return result;
    }
  auto fromTensors = [&](const std::vector<Tensor> &ts) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (k >= ts.size() || !isFloat(outputs[k].dtype()) || ts[k].size() != outputs[k].size()) {
        result[k] = exactMagnitude(outputs[k]);
        if (!isFloat(outputs[k].dtype()) && !exactIn)
          unbounded(k); // an index or flag computed from rounded values
        continue;
      }
      std::vector<double> m(static_cast<size_t>(ts[k].size()));
      for (int64_t i = 0; i < ts[k].size(); ++i)
        m[static_cast<size_t>(i)] = std::fabs(ts[k].getDouble(i));
      finish(k, std::move(m));
    }
  };
  auto input = [&](size_t i) -> const Tensor * { return i < inputs.size() ? inputs[i] : nullptr; };
  auto shadow = [&](size_t i) -> const Magnitude * {
    return i < shadows.size() ? shadows[i] : nullptr;
  };
  // L * M(input 0, broadcast) [+ extra] + |out| per element, for unary and
  // first-order rules.
  auto perElement = [&](auto &&f) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (!isFloat(outputs[k].dtype())) {
        result[k] = exactMagnitude(outputs[k]);
        if (!exactIn)
          unbounded(k); // a flag or integer computed from rounded values
        continue;
      }
      std::vector<double> m(static_cast<size_t>(outputs[k].size()));
      for (int64_t i = 0; i < outputs[k].size(); ++i)
        m[static_cast<size_t>(i)] = f(outputs[k], i) + std::fabs(outputs[k].getDouble(i));
      finish(k, std::move(m));
    }
  };
  const Tensor *x = input(0);
  switch (row.rule) {
  case Rule::Kernel:
  case Rule::BatchNorm:
  case Rule::AsAdd:
  case Rule::AsMax:
  case Rule::AsReduceMax:
  case Rule::Gemm: {
    if (row.rule == Rule::BatchNorm && attrInt(n, "training_mode", 0) != 0)
      break;
    KernelFn kernel = op.kernel;
    if (row.rule == Rule::AsAdd)
      kernel = lookupOp("Add").kernel;
    else if (row.rule == Rule::AsMax)
      kernel = lookupOp("Max").kernel;
    else if (row.rule == Rule::AsReduceMax)
      kernel = lookupOp("ReduceMax").kernel;
    Node absNode = n;
    if (row.rule == Rule::Gemm)
      for (const char *key : {"alpha", "beta"})
        absNode.attrs[key] = AttrValue::ofFloat(std::fabs(attrFloat(n, key, 1.0)));
    // Shape operands (Resize's scales, ...) keep their values: the kernel
    // reads them as parameters (their dtype checked), not as terms; an f64
    // magnitude in their place left Resize's parameters unset (a crash).
    // Resize: every input after X is a parameter (roi, and scales at slot 1
    // in the opset-10 form, which the shape-operand bits do not name).
    std::vector<size_t> kept;
    for (size_t i = 0; i < inputs.size() && i < 64; ++i)
      if (((op.shapeOperands >> i) & 1) || (n.type == "Resize" && i > 0))
        kept.push_back(i);
    if (row.rule == Rule::BatchNorm)
      kept.push_back(4);
    auto ts = row.rule == Rule::BatchNorm
                  ? kernelOnMagnitudes(absNode, kernel, inputs, shadows, outputs, 3, kept)
                  : kernelOnMagnitudes(absNode, kernel, inputs, shadows, outputs, -1, kept);
    if (!ts)
      break;
    fromTensors(*ts);
    return result;
  }
  case Rule::PassThrough:
    if (!x)
      break;
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (!isFloat(outputs[k].dtype()) || outputs[k].size() != x->size()) {
        result[k] = exactMagnitude(outputs[k]);
        if (!exactIn)
          unbounded(k);
        continue;
      }
      double scale =
          n.type == "LeakyRelu" ? std::max(1.0, std::fabs(attrFloat(n, "alpha", 0.01))) : 1.0;
      std::vector<double> m(static_cast<size_t>(x->size()));
      for (int64_t i = 0; i < x->size(); ++i)
        m[static_cast<size_t>(i)] = scale * at(shadow(0), *x, i);
      finish(k, std::move(m));
    }
    return result;
  case Rule::Lipschitz:
    if (!x)
      break;
    perElement([&](const Tensor &o, int64_t i) {
      return row.lipschitz * at(shadow(0), *x, broadcastAt(*x, o.shape(), i));
    });
    return result;
  case Rule::Exp:
    if (!x)
      break;
    perElement([&](const Tensor &o, int64_t i) {
      return pastFirstOrder(shadow(0), *x, i) ? kInf
                                              : std::fabs(o.getDouble(i)) * at(shadow(0), *x, i);
    });
    return result;
  case Rule::Log:
    if (!x)
      break;
    perElement([&](const Tensor &, int64_t i) {
      return mayCrossZero(shadow(0), *x, i) ? kInf
                                            : at(shadow(0), *x, i) / std::fabs(x->getDouble(i));
    });
    return result;
  case Rule::Sqrt:
    if (!x)
      break;
    perElement([&](const Tensor &o, int64_t i) {
      return mayCrossZero(shadow(0), *x, i)
                 ? kInf
                 : at(shadow(0), *x, i) / (2 * std::fabs(o.getDouble(i)));
    });
    return result;
  case Rule::Reciprocal:
    if (!x)
      break;
    perElement([&](const Tensor &, int64_t i) {
      double v = x->getDouble(i);
      return mayCrossZero(shadow(0), *x, i) ? kInf : at(shadow(0), *x, i) / (v * v);
    });
    return result;
  case Rule::Div: {
    const Tensor *b = input(1);
    if (!x || !b)
      break;
    perElement([&](const Tensor &o, int64_t i) {
      int64_t ia = broadcastAt(*x, o.shape(), i), ib = broadcastAt(*b, o.shape(), i);
      double vb = b->getDouble(ib);
      if (mayCrossZero(shadow(1), *b, ib))
        return kInf;
      return at(shadow(0), *x, ia) / std::fabs(vb) +
             std::fabs(x->getDouble(ia)) * at(shadow(1), *b, ib) / (vb * vb);
    });
    return result;
  }
  case Rule::Softmax:
  case Rule::LogSoftmax: {
    if (!x)
      break;
    double worst = 0;
    bool nonlinear = false;
    for (int64_t i = 0; i < x->size(); ++i) {
      worst = std::max(worst, at(shadow(0), *x, i));
      nonlinear = nonlinear || pastFirstOrder(shadow(0), *x, i);
    }
    if (nonlinear)
      break; // every element unbounded
    bool soft = row.rule == Rule::Softmax;
    perElement([&](const Tensor &o, int64_t i) {
      return 2 * worst * (soft ? std::fabs(o.getDouble(i)) : 1.0);
    });
    return result;
  }
  case Rule::Normalize: {
    // LayerNormalization's statistics run in its stash type (f32 by
    // default, bf16 for stash_type 16), whatever the data's dtype (f64 too).
    if (n.type == "LayerNormalization")
      unit = std::max(unit,
                      unitRoundoff(attrInt(n, "stash_type", 1) == 16 ? DType::BF16 : DType::F32));
    double u = x ? std::max(unit, unitRoundoff(x->dtype())) : 0;
    auto ms = normalizeMagnitudes(n, inputs, shadows, outputs, u);
    if (!ms)
      break;
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (!isFloat(outputs[k].dtype()) || k >= ms->size())
        unbounded(k);
      else
        finish(k, std::move((*ms)[k]));
    }
    return result;
  }
  case Rule::Discrete:
  case Rule::ShapeOnly:
  case Rule::None:
    break;
  }
  for (size_t k = 0; k < outputs.size(); ++k)
    unbounded(k);
  return result;
}

} // namespace graphvet::oracle
