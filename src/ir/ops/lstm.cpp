// LSTM (ONNX opset 14): forward, reverse or bidirectional; optional B,
// sequence_lens, initial_h, initial_c, P (peepholes); activations with
// alpha/beta; clip; input_forget; ONNX's integer `layout` (0: X is
// [seq, batch, input], Y [seq, dirs, batch, hidden], Y_h/Y_c
// [dirs, batch, hidden]; 1: batch first, X [batch, seq, input],
// Y [batch, seq, dirs, hidden], Y_h/Y_c [batch, dirs, hidden]). Outputs Y,
// Y_h, Y_c are always computed; any may be left unused.
//
// Numerics: all arithmetic in A = f32 (f16, f32) or f64 (f64), one rounding
// per operation, the states H and C kept in A between steps (only outputs
// are rounded to the dtype). Per gate element, in the spec's order:
//   pre = dot(x_t, W[g]) + dot(H, R[g])     (each dot product accumulated
//                                            in input order; then summed)
//   pre = pre + P[g] * C (i, f: previous C; o: the new C) + Wb[g] + Rb[g]
//   activation(clip(pre))
//   i = f(..), f = input_forget ? 1 - i : f(..), c = g(..)
//   C' = f * C + i * c;  o = f(..);  H' = o * h(C')
// clip (when given) bounds the gates' pre-activations (the inputs of f and
// g) to [-clip, clip]; the cell C' and h's input are not clipped (as
// onnxruntime computes it).
// Activations are computed in f64 from the A value and rounded once to A.
// Activation alpha/beta values are consumed in order by the activations
// that take them (defaults: LeakyRelu 0.01, ThresholdedRelu 1, ScaledTanh
// 1, 1, HardSigmoid 0.2, 0.5, Elu 1, Affine 1, 0).
//
// sequence_lens (i32, per batch entry): steps t >= len of Y are 0; Y_h/Y_c
// are the states after the last step (0 when len == 0, as onnxruntime
// does); the reverse direction runs t = len - 1 down to 0. A length outside
// [0, seq_length] is undefined in ONNX: that batch entry's outputs are
// indeterminate.
//
// Indeterminate elements: a gate element is indeterminate when x_t's row,
// its W or R row, any element of H, its biases or peepholes, or (with a
// peephole) its C element is; C' and H' follow through the equations.
#include "ir/ops/nn_common.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

namespace graphvet::ops::nn {
namespace {

enum class Act {
  Relu,
  Tanh,
  Sigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

struct ActInfo {
  const char *name;
  Act act;
  int params; // how many of alpha, beta it takes (0, 1 = alpha, 2 = both)
  double alpha, beta;
};

constexpr ActInfo kActs[] = {
    {"relu", Act::Relu, 0, 0, 0},
    {"tanh", Act::Tanh, 0, 0, 0},
    {"sigmoid", Act::Sigmoid, 0, 0, 0},
    {"affine", Act::Affine, 2, 1.0, 0.0},
    {"leakyrelu", Act::LeakyRelu, 1, 0.01f, 0},
    {"thresholdedrelu", Act::ThresholdedRelu, 1, 1.0, 0},
    {"scaledtanh", Act::ScaledTanh, 2, 1.0, 1.0},
    {"hardsigmoid", Act::HardSigmoid, 2, 0.2f, 0.5f},
    {"elu", Act::Elu, 1, 1.0, 0},
    {"softsign", Act::Softsign, 0, 0, 0},
    {"softplus", Act::Softplus, 0, 0, 0},
};

struct Activation {
  Act act = Act::Sigmoid;
  double alpha = 0, beta = 0;
};

double apply(const Activation &a, double x) {
  switch (a.act) {
  case Act::Relu:
    return x < 0 ? 0.0 : x;
  case Act::Tanh:
    return std::tanh(x);
  case Act::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case Act::Affine:
    return a.alpha * x + a.beta;
  case Act::LeakyRelu:
    return x >= 0 ? x : a.alpha * x;
  case Act::ThresholdedRelu:
    return x >= a.alpha ? x : (std::isnan(x) ? x : 0.0);
  case Act::ScaledTanh:
    return a.alpha * std::tanh(a.beta * x);
  case Act::HardSigmoid:
    return std::isnan(x) ? x : std::min(std::max(a.alpha * x + a.beta, 0.0), 1.0);
  case Act::Elu:
    return x >= 0 ? x : a.alpha * std::expm1(x);
  case Act::Softsign:
    return x / (1.0 + std::fabs(x));
  case Act::Softplus:
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  return x;
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct LstmConfig {
  int64_t layout = 0, dirs = 1, seq = 0, batch = 0, input = 0, hidden = 0;
  std::string direction;
  std::vector<Activation> acts; // 3 per direction: f, g, h
  std::optional<double> clip;
  bool inputForget = false;
};

bool lstmConfig(const Node &n, const TensorType &x, const TensorType &r, LstmConfig &c,
                std::string &error) {
  auto fail = [&](std::string m) {
    error = std::move(m);
    return false;
  };
  c.layout = attrInt(n, "layout", 0);
  if (c.layout != 0 && c.layout != 1)
    return fail(fmt::format("layout of LSTM must be 0 or 1, got {}", c.layout));
  c.direction = attrString(n, "direction", "forward");
  if (c.direction != "forward" && c.direction != "reverse" && c.direction != "bidirectional")
    return fail(fmt::format("direction must be forward, reverse or bidirectional, got \"{}\"",
                            c.direction));
  c.dirs = c.direction == "bidirectional" ? 2 : 1;
  c.seq = x.shape[c.layout == 0 ? 0 : 1];
  c.batch = x.shape[c.layout == 0 ? 1 : 0];
  c.input = x.shape[2];
  c.hidden = r.shape[2];
  std::vector<std::string> names;
  if (const AttrValue *v = n.attr("activations")) {
    if (v->text())
      names.push_back(*v->text());
    else if (v->isList())
      for (const AttrValue &e : v->asList()) {
        if (!e.text())
          return fail("activations must be a list of strings");
        names.push_back(*e.text());
      }
    else
      return fail("activations must be a list of strings");
    if (names.size() != static_cast<size_t>(3 * c.dirs))
      return fail(fmt::format("activations must name {} functions (f, g, h per direction), got {}",
                              3 * c.dirs, names.size()));
  } else {
    for (int64_t d = 0; d < c.dirs; ++d)
      names.insert(names.end(), {"Sigmoid", "Tanh", "Tanh"});
  }
  std::vector<double> alphas = attrFloats(n, "activation_alpha").value_or(std::vector<double>());
  std::vector<double> betas = attrFloats(n, "activation_beta").value_or(std::vector<double>());
  size_t ai = 0, bi = 0;
  for (const std::string &name : names) {
    std::string l = lower(name);
    const ActInfo *info = nullptr;
    for (const ActInfo &k : kActs)
      if (l == k.name)
        info = &k;
    if (!info)
      return fail(fmt::format("unknown LSTM activation \"{}\"", name));
    Activation a{info->act, info->alpha, info->beta};
    if (info->params >= 1 && ai < alphas.size())
      a.alpha = static_cast<float>(alphas[ai++]);
    if (info->params >= 2 && bi < betas.size())
      a.beta = static_cast<float>(betas[bi++]);
    c.acts.push_back(a);
  }
  if (n.attr("clip")) {
    double clip = static_cast<float>(attrFloat(n, "clip", 0));
    if (!(clip > 0))
      return fail(fmt::format("clip must be positive, got {}", clip));
    c.clip = clip;
  }
  int64_t inputForget = attrInt(n, "input_forget", 0);
  if (inputForget != 0 && inputForget != 1)
    return fail(fmt::format("input_forget must be 0 or 1, got {}", inputForget));
  c.inputForget = inputForget == 1;
  return true;
}

/// Any-undef flag of each row of `rows` x `cols` starting at `offset`.
std::vector<uint8_t> rowFlags(const Tensor *t, int64_t offset, int64_t rows, int64_t cols) {
  std::vector<uint8_t> f(static_cast<size_t>(rows), 0);
  if (t && t->anyUndef())
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        if (t->isUndef(offset + r * cols + k))
          f[static_cast<size_t>(r)] = 1;
  return f;
}

template <class A> void lstmKernel(KernelContext &ctx) {
  const Node &n = ctx.node;
  const Tensor &x = ctx.in(0), &w = ctx.in(1), &r = ctx.in(2);
  auto opt = [&](size_t i) -> const Tensor * { return ctx.has(i) ? &ctx.in(i) : nullptr; };
  const Tensor *b = opt(3), *lens = opt(4), *h0 = opt(5), *c0 = opt(6), *p = opt(7);
  LstmConfig c;
  std::string error;
  lstmConfig(n, x.type(), r.type(), c, error);
  Tensor &Y = ctx.out(0), &Yh = ctx.out(1), &Yc = ctx.out(2);
  if (Y.size() == 0 && Yh.size() == 0) // no hidden unit or no batch entry: nothing to do
    return;
  int64_t S = c.seq, B = c.batch, I = c.input, H = c.hidden, D = c.dirs;
  std::vector<A> xv = loadAllAs<A>(x), wv = loadAllAs<A>(w), rv = loadAllAs<A>(r);
  std::vector<A> bv = b ? loadAllAs<A>(*b) : std::vector<A>();
  std::vector<A> pv = p ? loadAllAs<A>(*p) : std::vector<A>();
  auto xIndex = [&](int64_t t, int64_t bb) {
    return c.layout == 0 ? (t * B + bb) * I : (bb * S + t) * I;
  };
  auto stateIndex = [&](int64_t d, int64_t bb) {
    return c.layout == 0 ? (d * B + bb) * H : (bb * D + d) * H;
  };
  auto yIndex = [&](int64_t t, int64_t d, int64_t bb) {
    return c.layout == 0 ? ((t * D + d) * B + bb) * H : ((bb * S + t) * D + d) * H;
  };
  std::vector<uint8_t> xRowU = rowFlags(&x, 0, S * B, I);
  auto clip = [&](A v) {
    if (!c.clip)
      return v;
    A lim = static_cast<A>(*c.clip);
    return v < -lim ? -lim : (v > lim ? lim : v);
  };
  auto act = [&](const Activation &a, A v) {
    return static_cast<A>(apply(a, static_cast<double>(v)));
  };

  for (int64_t d = 0; d < D; ++d) {
    bool reverse = c.direction == "reverse" || d == 1;
    const Activation &f = c.acts[static_cast<size_t>(3 * d)];
    const Activation &g = c.acts[static_cast<size_t>(3 * d + 1)];
    const Activation &h = c.acts[static_cast<size_t>(3 * d + 2)];
    std::vector<uint8_t> wU = rowFlags(&w, d * 4 * H * I, 4 * H, I);
    std::vector<uint8_t> rU = rowFlags(&r, d * 4 * H * H, 4 * H, H);
    std::vector<uint8_t> bU = rowFlags(b, d * 8 * H, 8 * H, 1);
    std::vector<uint8_t> pU = rowFlags(p, d * 3 * H, 3 * H, 1);
    for (int64_t bb = 0; bb < B; ++bb) {
      int64_t len = lens ? lens->getInt(bb) : S;
      bool lenUndef = lens && lens->isUndef(bb);
      int64_t s0 = stateIndex(d, bb);
      if (lenUndef || len < 0 || len > S) { // undefined in ONNX
        for (int64_t t = 0; t < S; ++t)
          for (int64_t j = 0; j < H; ++j)
            Y.setUndef(yIndex(t, d, bb) + j);
        for (int64_t j = 0; j < H; ++j) {
          Yh.setUndef(s0 + j);
          Yc.setUndef(s0 + j);
        }
        continue;
      }
      std::vector<A> hs(static_cast<size_t>(H), A(0)), cs(static_cast<size_t>(H), A(0));
      std::vector<uint8_t> hU(static_cast<size_t>(H), 0), cU(static_cast<size_t>(H), 0);
      for (int64_t j = 0; j < H; ++j) {
        if (h0) {
          hs[static_cast<size_t>(j)] = static_cast<A>(h0->getDouble(s0 + j));
          hU[static_cast<size_t>(j)] = h0->isUndef(s0 + j);
        }
        if (c0) {
          cs[static_cast<size_t>(j)] = static_cast<A>(c0->getDouble(s0 + j));
          cU[static_cast<size_t>(j)] = c0->isUndef(s0 + j);
        }
      }
      std::vector<A> pre(static_cast<size_t>(4 * H));
      std::vector<uint8_t> preU(static_cast<size_t>(4 * H));
      std::vector<A> nh(static_cast<size_t>(H)), nc(static_cast<size_t>(H));
      std::vector<uint8_t> nhU(static_cast<size_t>(H)), ncU(static_cast<size_t>(H));
      for (int64_t step = 0; step < len; ++step) {
        int64_t t = reverse ? len - 1 - step : step;
        int64_t xo = xIndex(t, bb);
        bool hAny = std::any_of(hU.begin(), hU.end(), [](uint8_t u) { return u != 0; });
        // Gate rows in ONNX's order i, o, f, c.
        for (int64_t gr = 0; gr < 4 * H; ++gr) {
          int64_t wo = (d * 4 * H + gr) * I, ro = (d * 4 * H + gr) * H;
          A ax = A(-0.0), ah = A(-0.0);
          for (int64_t k = 0; k < I; ++k)
            ax = ax + xv[static_cast<size_t>(xo + k)] * wv[static_cast<size_t>(wo + k)];
          for (int64_t k = 0; k < H; ++k)
            ah = ah + hs[static_cast<size_t>(k)] * rv[static_cast<size_t>(ro + k)];
          if (I == 0)
            ax = A(0);
          if (H == 0)
            ah = A(0);
          pre[static_cast<size_t>(gr)] = ax + ah;
          preU[static_cast<size_t>(gr)] =
              xRowU[static_cast<size_t>(c.layout == 0 ? t * B + bb : bb * S + t)] ||
              wU[static_cast<size_t>(gr)] || rU[static_cast<size_t>(gr)] || hAny;
        }
        auto bias = [&](int64_t gate, int64_t j, A v, bool &u) {
          if (!b)
            return v;
          size_t wb = static_cast<size_t>(d * 8 * H + gate * H + j);
          size_t rb = wb + static_cast<size_t>(4 * H);
          u = u || bU[wb - static_cast<size_t>(d * 8 * H)] ||
              bU[rb - static_cast<size_t>(d * 8 * H)];
          v = v + bv[wb];
          return v + bv[rb];
        };
        auto peep = [&](int64_t k, int64_t j, A cell, bool cellU, A v, bool &u) {
          if (!p)
            return v;
          size_t pi = static_cast<size_t>(d * 3 * H + k * H + j);
          u = u || pU[static_cast<size_t>(k * H + j)] || cellU;
          return v + pv[pi] * cell;
        };
        for (int64_t j = 0; j < H; ++j) {
          size_t jj = static_cast<size_t>(j);
          A cPrev = cs[jj];
          bool cPrevU = cU[jj];
          // input gate (peephole P[0])
          bool iu = preU[jj];
          A iv = peep(0, j, cPrev, cPrevU, pre[jj], iu);
          iv = act(f, clip(bias(0, j, iv, iu)));
          // forget gate (peephole P[2])
          bool fu = preU[static_cast<size_t>(2 * H + j)];
          A fv;
          if (c.inputForget) {
            fv = A(1) - iv;
            fu = iu;
          } else {
            fv = peep(2, j, cPrev, cPrevU, pre[static_cast<size_t>(2 * H + j)], fu);
            fv = act(f, clip(bias(2, j, fv, fu)));
          }
          // cell gate
          bool gu = preU[static_cast<size_t>(3 * H + j)];
          A gv = act(g, clip(bias(3, j, pre[static_cast<size_t>(3 * H + j)], gu)));
          A cell = fv * cPrev + iv * gv;
          bool cellU = fu || cPrevU || iu || gu;
          // output gate (peephole P[1], on the new cell)
          bool ou = preU[static_cast<size_t>(H + j)];
          A ov = peep(1, j, cell, cellU, pre[static_cast<size_t>(H + j)], ou);
          ov = act(f, clip(bias(1, j, ov, ou)));
          nh[jj] = ov * act(h, cell);
          nc[jj] = cell;
          nhU[jj] = ou || cellU;
          ncU[jj] = cellU;
        }
        hs.swap(nh);
        cs.swap(nc);
        hU.swap(nhU);
        cU.swap(ncU);
        int64_t yo = yIndex(t, d, bb);
        for (int64_t j = 0; j < H; ++j) {
          Y.setDouble(yo + j, static_cast<double>(hs[static_cast<size_t>(j)]));
          if (hU[static_cast<size_t>(j)])
            Y.setUndef(yo + j);
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        size_t jj = static_cast<size_t>(j);
        bool none = len == 0; // onnxruntime: zero states for an empty sequence
        Yh.setDouble(s0 + j, none ? 0.0 : static_cast<double>(hs[jj]));
        Yc.setDouble(s0 + j, none ? 0.0 : static_cast<double>(cs[jj]));
        if (!none && hU[jj])
          Yh.setUndef(s0 + j);
        if (!none && cU[jj])
          Yc.setUndef(s0 + j);
      }
    }
  }
}

} // namespace

bool inferLSTM(InferContext &ctx) {
  size_t ni = ctx.numInputs();
  if (ni < 3 || ni > 8)
    return ctx.fail(fmt::format("LSTM takes 3 to 8 inputs (X, W, R, B, sequence_lens, "
                                "initial_h, initial_c, P), got {}",
                                ni));
  static const char *names[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  for (size_t i = 0; i < 3; ++i)
    if (!ctx.has(i))
      return ctx.fail(fmt::format("input {} ({}) of LSTM is required", i, names[i]));
  const TensorType &x = ctx.in(0), &w = ctx.in(1), &r = ctx.in(2);
  if (!checkDType(ctx, 0, "X", x.dtype, kConvTypes))
    return false;
  for (size_t i = 1; i < ni; ++i) {
    if (!ctx.has(i))
      continue;
    DType want = i == 4 ? DType::I32 : x.dtype;
    if (ctx.in(i).dtype != want)
      return ctx.fail(fmt::format("input {} ({}) must be {}, got {}", i, names[i], dtypeName(want),
                                  dtypeName(ctx.in(i).dtype)));
  }
  for (size_t i = 0; i < 3; ++i)
    if (ctx.in(i).rank() != 3)
      return ctx.fail(
          fmt::format("input {} ({}) must have rank 3, got {}", i, names[i], ctx.in(i).str()));
  LstmConfig c;
  std::string error;
  if (!lstmConfig(ctx.node, x, r, c, error))
    return ctx.fail(error);
  int64_t H = c.hidden, D = c.dirs;
  if (H > (int64_t{1} << 40))
    return ctx.fail(fmt::format("hidden size {} is too large", H));
  if (ctx.node.attr("hidden_size") && attrInt(ctx.node, "hidden_size", 0) != H)
    return ctx.fail(fmt::format("hidden_size {} does not match R's {}",
                                attrInt(ctx.node, "hidden_size", 0), r.str()));
  auto expect = [&](size_t i, const Shape &s) {
    if (!ctx.has(i) || ctx.in(i).shape == s)
      return true;
    return ctx.fail(fmt::format("input {} ({}) must have shape {}, got {}", i, names[i],
                                shapeStr(s), ctx.in(i).str()));
  };
  Shape state = c.layout == 0 ? Shape{D, c.batch, H} : Shape{c.batch, D, H};
  if (!expect(1, {D, 4 * H, c.input}) || !expect(2, {D, 4 * H, H}) || !expect(3, {D, 8 * H}) ||
      !expect(4, {c.batch}) || !expect(5, state) || !expect(6, state) || !expect(7, {D, 3 * H}))
    return false;
  (void)w;
  Shape y = c.layout == 0 ? Shape{c.seq, D, c.batch, H} : Shape{c.batch, c.seq, D, H};
  ctx.outputs.push_back({x.dtype, y});
  ctx.outputs.push_back({x.dtype, state});
  ctx.outputs.push_back({x.dtype, state});
  return true;
}

void kernelLSTM(KernelContext &ctx) {
  if (ctx.in(0).dtype() == DType::F64)
    lstmKernel<double>(ctx);
  else
    lstmKernel<float>(ctx);
}

} // namespace graphvet::ops::nn
