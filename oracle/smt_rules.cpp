// The Z3 encoding of a rewrite-rule instance (oracle/smt_rules.h): every
// tensor is a vector of elements, each a value (a bit-vector of the dtype's
// width for integers and bool, an IEEE float of Z3's FP theory for floats)
// and an indeterminate flag (tensor-semantics.md §2). Ops are written here
// from tensor-semantics.md and ONNX, independently of the kernels in
// src/ir/ops, which replay every counterexample (oracle/prove.cpp): a bug in
// either shows up as a counterexample that does not replay. Shapes are
// concrete, so shape ops are index arithmetic done in C++.
#include "oracle/smt_rules.h"

#include "ir/op_def.h"

#include <fmt/format.h>
#include <z3++.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

namespace graphvet::oracle {
namespace {

/// An op or form the encoder does not model: the instance is an error.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One Z3 context per thread (a context costs tens of milliseconds to
/// create). The solver is made per query: Z3 4.8's QF_FPBV solver ignores a
/// timeout set on it after a reset() until its next reset, so a reused one
/// ran its first query without a budget.
struct ThreadSolver {
  z3::context ctx;
};

ThreadSolver &threadSolver() {
  thread_local std::unique_ptr<ThreadSolver> ts;
  if (!ts)
    ts = std::make_unique<ThreadSolver>();
  return *ts;
}

struct Elem {
  z3::expr v; ///< the value (meaningless when u holds)
  z3::expr u; ///< indeterminate
};
using Port = std::vector<Elem>;

unsigned widthOf(DType t) {
  return dtypeBytes(t) * 8;
}

std::vector<int64_t> coordsOf(int64_t flat, const Shape &s) {
  std::vector<int64_t> c(s.size(), 0);
  for (size_t d = s.size(); d-- > 0;) {
    c[d] = flat % s[d];
    flat /= s[d];
  }
  return c;
}

int64_t flatOf(const std::vector<int64_t> &c, const Shape &s) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d)
    f = f * s[d] + c[d];
  return f;
}

int64_t product(const Shape &s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i)
    n *= s[i];
  return n;
}

class Encoder {
public:
  Encoder(z3::context &c, const InstGraph &g) : c_(c), g_(g) {}

  void run() {
    vals_.resize(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      vals_[i] = encodeNode(g_.nodes[i]);
  }

  const Port &port(InstRef r) const { return vals_[static_cast<size_t>(r.node)][r.port]; }

  /// Operand name -> per element (bits, indeterminate flag) variables.
  std::map<std::string, std::vector<std::pair<z3::expr, z3::expr>>> operandVars;

  /// Refinement equality of two determinate elements of dtype t: bit for
  /// bit, every NaN equal to every other (SMT-LIB `=` on floats has one NaN
  /// and tells -0 from +0), bools by truth.
  z3::expr same(DType t, const z3::expr &a, const z3::expr &b) {
    if (t == DType::Bool)
      return (a == bv(0, 8)) == (b == bv(0, 8));
    return a == b;
  }

private:
  z3::context &c_;
  const InstGraph &g_;
  std::vector<std::vector<Port>> vals_;
  /// Exact widenings made so far: result AST id -> (source, source dtype).
  std::map<unsigned, std::pair<z3::expr, DType>> widened_;
  /// Floats that hold an integer exactly (an integer cast to a float with
  /// enough precision): AST id -> (the integer, its dtype).
  std::map<unsigned, std::pair<z3::expr, DType>> exactInts_;
  /// Every AST whose id keys the two maps, held so that its id cannot be
  /// reused by another term while the encoder lives.
  std::vector<z3::expr> keyed_;

  // ---- Sorts, numerals, rounding ------------------------------------------

  z3::sort fpSort(DType t) {
    switch (t) {
    case DType::F16:
      return c_.fpa_sort(5, 11);
    case DType::BF16:
      return c_.fpa_sort(8, 8);
    case DType::F32:
      return c_.fpa_sort(8, 24);
    case DType::F64:
      return c_.fpa_sort(11, 53);
    default:
      throw Unsupported("not a float dtype");
    }
  }
  z3::expr rne() { return z3::expr(c_, Z3_mk_fpa_rne(c_)); }
  z3::expr rtz() { return z3::expr(c_, Z3_mk_fpa_rtz(c_)); }
  z3::expr bv(uint64_t v, unsigned w) { return c_.bv_val(v, w); }
  z3::expr fromBits(DType t, const z3::expr &bits) {
    if (!isFloat(t))
      return bits;
    return z3::expr(c_, Z3_mk_fpa_to_fp_bv(c_, bits, fpSort(t)));
  }
  /// Float-to-float conversion, rounding to nearest even. An exact
  /// widening (f16/bf16 -> f32 -> f64) is remembered, and converting a
  /// remembered widening converts its source instead: the two values are
  /// the same number (same sign of zero, NaN, inf), so the rounding is the
  /// same, and both sides of a rule then share terms that Z3's rewriting can
  /// cancel instead of bit-blasting both chains.
  z3::expr toFloat(const z3::expr &v, DType from, DType to) {
    if (from == to)
      return v;
    if (auto it = exactInts_.find(Z3_get_ast_id(c_, v));
        it != exactInts_.end() && !widensExactly(from, to)) {
      // v is exactly the integer x: rounding v is converting x (one rounding).
      auto [x, ti] = it->second;
      return z3::expr(c_, isSignedInteger(ti) ? Z3_mk_fpa_to_fp_signed(c_, rne(), x, fpSort(to))
                                              : Z3_mk_fpa_to_fp_unsigned(c_, rne(), x, fpSort(to)));
    }
    z3::expr src = v;
    DType srcType = from;
    if (auto it = widened_.find(Z3_get_ast_id(c_, v)); it != widened_.end()) {
      src = it->second.first;
      srcType = it->second.second;
      if (srcType == to)
        return src;
    }
    z3::expr r(c_, Z3_mk_fpa_to_fp_float(c_, rne(), src, fpSort(to)));
    if (widensExactly(srcType, to))
      widened_.insert_or_assign(keyOf(r), std::make_pair(src, srcType));
    if (auto it = exactInts_.find(Z3_get_ast_id(c_, v));
        it != exactInts_.end() && widensExactly(from, to))
      exactInts_.insert_or_assign(keyOf(r), it->second);
    return r;
  }
  unsigned keyOf(const z3::expr &e) {
    keyed_.push_back(e);
    return Z3_get_ast_id(c_, e);
  }
  static bool widensExactly(DType from, DType to) {
    if (to == DType::F64)
      return from != DType::F64;
    return to == DType::F32 && (from == DType::F16 || from == DType::BF16);
  }
  /// Whether v is the constant `d` of float dtype t (bit for bit).
  bool isConstant(const z3::expr &v, DType t, double d) {
    Tensor k(TensorType{t, {}});
    k.setDouble(0, d);
    return z3::eq(v, elemOf(t, k, 0).v);
  }
  z3::expr f64(double d) {
    return z3::expr(c_, Z3_mk_fpa_numeral_double(c_, d, fpSort(DType::F64)));
  }
  z3::expr isZero(const z3::expr &v) { return z3::expr(c_, Z3_mk_fpa_is_zero(c_, v)); }
  Elem elemOf(DType t, const Tensor &x, int64_t i) {
    uint64_t bits = 0;
    std::memcpy(&bits, x.at(i), dtypeBytes(t));
    return Elem{fromBits(t, bv(bits, widthOf(t))).simplify(), c_.bool_val(x.isUndef(i))};
  }

  // ---- Leaves ----------------------------------------------------------------

  std::vector<Port> encodeNode(const InstNode &n) {
    switch (n.kind) {
    case InstNode::Kind::Operand: {
      const TensorType &t = n.outputs[0];
      Port p;
      auto &vars = operandVars[n.name];
      for (int64_t i = 0; i < t.numElements(); ++i) {
        z3::expr bits = c_.bv_const(fmt::format("{}[{}]", n.name, i).c_str(), widthOf(t.dtype));
        z3::expr u = c_.bool_const(fmt::format("{}[{}].indeterminate", n.name, i).c_str());
        vars.emplace_back(bits, u);
        p.push_back(Elem{fromBits(t.dtype, bits), u});
      }
      return {p};
    }
    case InstNode::Kind::Constant: {
      Port p;
      for (int64_t i = 0; i < n.value->size(); ++i)
        p.push_back(elemOf(n.value->dtype(), *n.value, i));
      return {p};
    }
    case InstNode::Kind::Op:
      return encodeOp(n);
    }
    return {};
  }

  const Port &arg(const InstNode &n, size_t i) { return port(n.args.at(i)); }
  const TensorType &argType(const InstNode &n, size_t i) { return g_.typeOf(n.args.at(i)); }
  const Tensor *argConstant(const InstNode &n, size_t i) {
    if (i >= n.args.size())
      return nullptr;
    const InstNode &src = g_.nodes[static_cast<size_t>(n.args[i].node)];
    return src.kind == InstNode::Kind::Constant ? src.value.get() : nullptr;
  }
  /// The integer values of a constant operand (a shape operand).
  std::vector<int64_t> constInts(const InstNode &n, size_t i, const char *what) {
    const Tensor *t = argConstant(n, i);
    if (!t)
      throw Unsupported(fmt::format("{}: {} must be a constant term", n.node.type, what));
    std::vector<int64_t> out;
    for (int64_t k = 0; k < t->size(); ++k)
      out.push_back(t->getInt(k));
    return out;
  }

  // ---- Ops -------------------------------------------------------------------

  std::vector<Port> encodeOp(const InstNode &n) {
    const std::string &op = n.node.type;
    if (op == "Cast")
      return {castPort(arg(n, 0), argType(n, 0).dtype, n.outputs[0].dtype)};
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")
      return {binary(n)};
    if (op == "Neg")
      return {neg(arg(n, 0), argType(n, 0).dtype)};
    if (op == "Identity")
      return {arg(n, 0)};
    if (op == "Dropout")
      return dropout(n);
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze")
      return {arg(n, 0)}; // same row-major order under another shape
    if (op == "Transpose")
      return {transpose(n)};
    if (op == "Expand")
      return {expand(n)};
    if (op == "Slice")
      return {slice(n)};
    if (op == "Pad")
      return {pad(n)};
    if (op == "Concat")
      return {concat(n)};
    if (op == "Split")
      return split(n);
    throw Unsupported("the prover does not model op " + op);
  }

  // Cast (tensor-semantics.md §4).
  Port castPort(const Port &x, DType from, DType to) {
    Port out;
    for (const Elem &e : x)
      out.push_back(castElem(e, from, to));
    return out;
  }

  Elem castElem(const Elem &e, DType from, DType to) {
    if (from == to)
      return e; // the bytes are copied (a bool keeps its byte)
    if (isFloat(from)) {
      if (to == DType::Bool)
        return {z3::ite(isZero(e.v), bv(0, 8), bv(1, 8)), e.u}; // NaN is nonzero
      if (isFloat(to))
        return {toFloat(e.v, from, to), e.u};
      // Truncate toward zero; NaN, ±inf and out-of-range truncations are
      // indeterminate. Every float dtype widens exactly to f64, where the
      // integer bounds below are exact powers of two.
      unsigned w = widthOf(to);
      if (auto it = exactInts_.find(Z3_get_ast_id(c_, e.v)); it != exactInts_.end()) {
        // The float is exactly the integer x: truncation keeps it, and the
        // cast is defined when x is in the target's range. Decided on
        // bit-vectors, without the float detour (same values, by §4).
        auto [x, ti] = it->second;
        unsigned xw = widthOf(ti);
        z3::expr x65 = isSignedInteger(ti) ? z3::sext(x, 65 - xw) : z3::zext(x, 65 - xw);
        uint64_t lo = isSignedInteger(to) ? ~uint64_t{0} << (w - 1) : 0;
        uint64_t hi = isSignedInteger(to) ? (uint64_t{1} << (w - 1)) - 1
                                          : (w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1);
        // lo sign-extended to 65 bits (negative or zero), hi zero-extended.
        z3::expr lo65 = z3::sext(bv(lo, 64), 1), hi65 = z3::zext(bv(hi, 64), 1);
        z3::expr inRange = z3::sle(lo65, x65) && z3::sle(x65, hi65);
        return {x65.extract(w - 1, 0), e.u || !inRange};
      }
      z3::expr wide = toFloat(e.v, from, DType::F64);
      z3::expr t(c_, Z3_mk_fpa_round_to_integral(c_, rtz(), wide));
      double lo = isSignedInteger(to) ? -std::ldexp(1.0, static_cast<int>(w) - 1) : 0.0;
      double hiExcl = std::ldexp(1.0, static_cast<int>(isSignedInteger(to) ? w - 1 : w));
      z3::expr inRange = z3::expr(c_, Z3_mk_fpa_leq(c_, f64(lo), t)) &&
                         z3::expr(c_, Z3_mk_fpa_lt(c_, t, f64(hiExcl)));
      z3::expr v = isSignedInteger(to) ? z3::expr(c_, Z3_mk_fpa_to_sbv(c_, rtz(), t, w))
                                       : z3::expr(c_, Z3_mk_fpa_to_ubv(c_, rtz(), t, w));
      return {v, e.u || !inRange};
    }
    // Integer or bool source; a bool reads as 0/1 (any nonzero byte is true).
    z3::expr v = e.v;
    bool isSigned = isSignedInteger(from);
    if (from == DType::Bool)
      v = z3::ite(v == bv(0, 8), bv(0, 8), bv(1, 8));
    if (to == DType::Bool)
      return {z3::ite(v == bv(0, widthOf(from)), bv(0, 8), bv(1, 8)), e.u};
    if (isFloat(to)) {
      z3::expr r(c_, isSigned ? Z3_mk_fpa_to_fp_signed(c_, rne(), v, fpSort(to))
                              : Z3_mk_fpa_to_fp_unsigned(c_, rne(), v, fpSort(to)));
      // Exact when every value's magnitude fits the significand (which
      // also keeps it below the dtype's overflow threshold).
      int magnitude = static_cast<int>(widthOf(from)) - (isSigned ? 1 : 0);
      if (from == DType::Bool)
        magnitude = 1;
      if (magnitude <= significandBits(to))
        exactInts_.insert_or_assign(keyOf(r),
                                    std::make_pair(v, from == DType::Bool ? DType::U8 : from));
      return {r, e.u};
    }
    unsigned fw = widthOf(from), tw = widthOf(to);
    if (tw < fw)
      v = v.extract(tw - 1, 0);
    else if (tw > fw)
      v = isSigned ? z3::sext(v, tw - fw) : z3::zext(v, tw - fw);
    return {v, e.u};
  }

  /// Float arithmetic: f16/bf16 compute in f32 and round once to their
  /// dtype; f32 and f64 in their own precision (tensor-semantics.md §3).
  z3::expr floatOp(const std::string &op, DType t, const z3::expr &a, const z3::expr &b) {
    // IEEE identities, exact in every dtype and rounding (x * 1, x / 1,
    // x + -0, x - +0 are x, NaN and signed zeros included): a sound
    // shortcut that spares bit-blasting a multiplier.
    if (((op == "Mul" || op == "Div") && isConstant(b, t, 1.0)) ||
        (op == "Add" && isConstant(b, t, -0.0)) || (op == "Sub" && isConstant(b, t, 0.0)))
      return a;
    if ((op == "Mul" && isConstant(a, t, 1.0)) || (op == "Add" && isConstant(a, t, -0.0)))
      return b;
    bool narrow = t == DType::F16 || t == DType::BF16;
    z3::expr x = narrow ? toFloat(a, t, DType::F32) : a;
    z3::expr y = narrow ? toFloat(b, t, DType::F32) : b;
    Z3_ast r;
    if (op == "Add")
      r = Z3_mk_fpa_add(c_, rne(), x, y);
    else if (op == "Sub")
      r = Z3_mk_fpa_sub(c_, rne(), x, y);
    else if (op == "Mul")
      r = Z3_mk_fpa_mul(c_, rne(), x, y);
    else
      r = Z3_mk_fpa_div(c_, rne(), x, y);
    z3::expr out(c_, r);
    return narrow ? toFloat(out, DType::F32, t) : out;
  }

  Elem arith(const std::string &op, DType t, const Elem &a, const Elem &b) {
    if (isFloat(t))
      return {floatOp(op, t, a.v, b.v), a.u || b.u};
    if (t == DType::Bool)
      throw Unsupported(op + " of bool");
    // Integers wrap; division truncates toward zero; x / 0 and
    // INT_MIN / -1 are indeterminate.
    unsigned w = widthOf(t);
    z3::expr u = a.u || b.u;
    if (op == "Add")
      return {a.v + b.v, u};
    if (op == "Sub")
      return {a.v - b.v, u};
    if (op == "Mul")
      return {a.v * b.v, u};
    u = u || b.v == bv(0, w);
    if (isSignedInteger(t)) {
      u = u || (a.v == bv(uint64_t{1} << (w - 1), w) && b.v == bv(~uint64_t{0}, w));
      return {z3::expr(c_, Z3_mk_bvsdiv(c_, a.v, b.v)), u};
    }
    return {z3::expr(c_, Z3_mk_bvudiv(c_, a.v, b.v)), u};
  }

  Port binary(const InstNode &n) {
    const Shape &os = n.outputs[0].shape;
    const Shape &as = argType(n, 0).shape, &bs = argType(n, 1).shape;
    DType t = argType(n, 0).dtype;
    Port out;
    for (int64_t k = 0; k < n.outputs[0].numElements(); ++k)
      out.push_back(arith(n.node.type, t, arg(n, 0)[static_cast<size_t>(broadcastIndex(k, os, as))],
                          arg(n, 1)[static_cast<size_t>(broadcastIndex(k, os, bs))]));
    return out;
  }

  Port neg(const Port &x, DType t) {
    Port out;
    for (const Elem &e : x) {
      if (isFloat(t))
        out.push_back({z3::expr(c_, Z3_mk_fpa_neg(c_, e.v)), e.u});
      else
        out.push_back({-e.v, e.u}); // wraps: -INT_MIN = INT_MIN
    }
    return out;
  }

  // Dropout in inference mode: output 0 is the input, the mask all true.
  std::vector<Port> dropout(const InstNode &n) {
    bool undefined = false;
    if (n.args.size() > 2) {
      const Tensor *mode = argConstant(n, 2);
      if (!mode)
        throw Unsupported("Dropout: training_mode must be a constant term");
      if (mode->isUndef(0))
        undefined = true;
      else if (mode->getBool(0))
        throw Unsupported("Dropout in training mode (random) is not modelled");
    }
    std::vector<Port> outs(n.outputs.size());
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      for (int64_t i = 0; i < n.outputs[k].numElements(); ++i) {
        z3::expr v = k == 0 ? arg(n, 0)[static_cast<size_t>(i)].v : bv(1, 8);
        z3::expr u = k == 0 ? arg(n, 0)[static_cast<size_t>(i)].u : c_.bool_val(false);
        outs[k].push_back({v, undefined ? c_.bool_val(true) : u});
      }
    }
    return outs;
  }

  // ---- Shape ops: concrete index arithmetic -----------------------------------

  Port transpose(const InstNode &n) {
    const Shape &is = argType(n, 0).shape, &os = n.outputs[0].shape;
    std::vector<int64_t> perm(is.size());
    if (auto p = attrInts(n.node, "perm"))
      perm = *p;
    else
      std::iota(perm.rbegin(), perm.rend(), 0);
    Port out;
    for (int64_t k = 0; k < n.outputs[0].numElements(); ++k) {
      std::vector<int64_t> oc = coordsOf(k, os), ic(is.size());
      for (size_t j = 0; j < perm.size(); ++j)
        ic[static_cast<size_t>(perm[j])] = oc[j];
      out.push_back(arg(n, 0)[static_cast<size_t>(flatOf(ic, is))]);
    }
    return out;
  }

  Port expand(const InstNode &n) {
    const Shape &is = argType(n, 0).shape, &os = n.outputs[0].shape;
    Port out;
    for (int64_t k = 0; k < n.outputs[0].numElements(); ++k)
      out.push_back(arg(n, 0)[static_cast<size_t>(broadcastIndex(k, os, is))]);
    return out;
  }

  /// Slice's starts/ends/axes/steps: inputs 1-4, or attributes (opset 1).
  std::optional<std::vector<int64_t>> sliceList(const InstNode &n, size_t i, const char *name) {
    if (n.args.size() == 1) {
      if (i > 3)
        return std::nullopt;
      return attrInts(n.node, name);
    }
    if (i >= n.args.size())
      return std::nullopt;
    return constInts(n, i, name);
  }

  Port slice(const InstNode &n) {
    const Shape &is = argType(n, 0).shape, &os = n.outputs[0].shape;
    size_t r = is.size();
    auto starts = sliceList(n, 1, "starts"), ends = sliceList(n, 2, "ends");
    auto axes = sliceList(n, 3, "axes"), steps = sliceList(n, 4, "steps");
    if (!starts || !ends)
      throw Unsupported("Slice without starts/ends");
    std::vector<int64_t> first(r, 0), step(r, 1);
    for (size_t i = 0; i < starts->size(); ++i) {
      int64_t a = axes ? (*axes)[i] : static_cast<int64_t>(i);
      if (a < 0)
        a += static_cast<int64_t>(r);
      size_t ax = static_cast<size_t>(a);
      int64_t dim = is[ax], s = (*starts)[i], st = steps ? (*steps)[i] : 1;
      if (s < 0)
        s += dim;
      // ONNX clamps starts to [0, dim] going forward, [0, dim - 1] backward.
      s = st > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
      first[ax] = s;
      step[ax] = st;
    }
    Port out;
    for (int64_t k = 0; k < n.outputs[0].numElements(); ++k) {
      std::vector<int64_t> c = coordsOf(k, os);
      for (size_t d = 0; d < r; ++d)
        c[d] = first[d] + c[d] * step[d];
      out.push_back(arg(n, 0)[static_cast<size_t>(flatOf(c, is))]);
    }
    return out;
  }

  Port pad(const InstNode &n) {
    const TensorType &it = argType(n, 0);
    const Shape &is = it.shape, &os = n.outputs[0].shape;
    size_t r = is.size();
    std::vector<int64_t> pads;
    if (n.args.size() > 1) {
      pads = constInts(n, 1, "pads");
    } else if (auto a = attrInts(n.node, "pads")) {
      pads = *a;
    } else {
      throw Unsupported("Pad without pads");
    }
    std::vector<int64_t> axes(r);
    std::iota(axes.begin(), axes.end(), 0);
    if (n.args.size() > 3)
      axes = constInts(n, 3, "axes");
    std::vector<int64_t> begin(r, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + static_cast<int64_t>(r) : axes[i];
      begin[static_cast<size_t>(a)] = pads[i];
    }
    std::string mode = attrString(n.node, "mode", "constant");
    // The fill value: input 2, attribute value (as a float first, then the
    // dtype), or zero.
    Elem fill{bv(0, 1), c_.bool_val(false)};
    if (n.args.size() > 2) {
      fill = arg(n, 2)[0];
    } else {
      Tensor f(TensorType{it.dtype, {}});
      double v = static_cast<float>(attrFloat(n.node, "value", 0.0));
      if (isFloat(it.dtype))
        f.setDouble(0, v);
      else
        f.setInt(0, it.dtype == DType::Bool ? (v != 0) : static_cast<int64_t>(v));
      fill = elemOf(it.dtype, f, 0);
    }
    Port out;
    for (int64_t k = 0; k < n.outputs[0].numElements(); ++k) {
      std::vector<int64_t> c = coordsOf(k, os);
      bool outside = false;
      for (size_t d = 0; d < r; ++d) {
        int64_t dim = is[d], i = c[d] - begin[d];
        if (i >= 0 && i < dim)
          c[d] = i;
        else if (mode == "constant")
          outside = true;
        else if (mode == "edge")
          c[d] = std::clamp<int64_t>(i, 0, dim - 1);
        else if (mode == "wrap")
          c[d] = ((i % dim) + dim) % dim;
        else if (dim == 1)
          c[d] = 0;
        else { // reflect, without repeating the edge element
          int64_t period = 2 * (dim - 1);
          int64_t m = ((i % period) + period) % period;
          c[d] = m >= dim ? period - m : m;
        }
      }
      out.push_back(outside ? fill : arg(n, 0)[static_cast<size_t>(flatOf(c, is))]);
    }
    return out;
  }

  size_t axisAttr(const InstNode &n, int64_t rank) {
    int64_t a = attrInt(n.node, "axis", 0);
    return static_cast<size_t>(a < 0 ? a + rank : a);
  }

  Port concat(const InstNode &n) {
    const Shape &os = n.outputs[0].shape;
    size_t ax = axisAttr(n, static_cast<int64_t>(os.size()));
    int64_t outer = product(os, 0, ax), inner = product(os, ax + 1, os.size());
    Port out;
    for (int64_t b = 0; b < outer; ++b)
      for (size_t i = 0; i < n.args.size(); ++i) {
        int64_t block = argType(n, i).shape[ax] * inner;
        for (int64_t j = 0; j < block; ++j)
          out.push_back(arg(n, i)[static_cast<size_t>(b * block + j)]);
      }
    return out;
  }

  std::vector<Port> split(const InstNode &n) {
    const Shape &is = argType(n, 0).shape;
    size_t ax = axisAttr(n, static_cast<int64_t>(is.size()));
    int64_t outer = product(is, 0, ax), inner = product(is, ax + 1, is.size());
    int64_t rowLen = is[ax] * inner, offset = 0;
    std::vector<Port> outs;
    for (const TensorType &t : n.outputs) {
      int64_t block = t.shape[ax] * inner;
      Port p;
      for (int64_t b = 0; b < outer; ++b)
        for (int64_t e = 0; e < block; ++e)
          p.push_back(arg(n, 0)[static_cast<size_t>(b * rowLen + offset + e)]);
      offset += block;
      outs.push_back(std::move(p));
    }
    return outs;
  }
};

/// Bit patterns of special values of dtype t (tensor-semantics.md §7's
/// list: signed zeros, NaN, infinities, extremes, values at 2^24, 65504 and
/// 1 + ulp), tried by substitution before the solver runs.
std::vector<uint64_t> specialBits(DType t) {
  std::vector<uint64_t> out;
  uint8_t buf[8] = {};
  auto push = [&] {
    uint64_t b = 0;
    std::memcpy(&b, buf, dtypeBytes(t));
    out.push_back(b);
  };
  if (isFloat(t)) {
    const double vals[] = {1.0001, -0.0,  70000.0,      1e-8,          16777217.0, 0.5,     -1.5,
                           1.0,    0.0,   NAN,          INFINITY,      -INFINITY,  65504.0, 65520.0,
                           3e38,   1e300, 2147483648.0, -2147483649.0, 9.3e18,     1.9e19,  255.5,
                           -128.5, 1e-40, 1e-310,       3.0,           0.1};
    for (double v : vals) {
      storeDouble(t, buf, v);
      push();
    }
    return out;
  }
  if (t == DType::Bool)
    return {0, 1, 2};
  const int64_t vals[] = {-1,
                          128,
                          255,
                          256,
                          -129,
                          65535,
                          65536,
                          16777217,
                          2147483648,
                          4294967297,
                          9007199254740993,
                          INT64_MIN,
                          INT64_MAX,
                          0,
                          1,
                          2593};
  for (int64_t v : vals) {
    storeInt(t, buf, v);
    push();
  }
  storeInt(t, buf, isSignedInteger(t) ? intMin(t) : -1);
  push();
  storeInt(t, buf, static_cast<int64_t>(intMax(t)));
  push();
  return out;
}

} // namespace

SmtRefinement checkRefinement(const InstGraph &g, unsigned timeoutMs, unsigned rlimit) {
  SmtRefinement ans;
  try {
    ThreadSolver &ts = threadSolver();
    z3::context &ctx = ts.ctx;
    Encoder enc(ctx, g);
    enc.run();
    const Port &orig = enc.port(g.original), &repl = enc.port(g.replacement);
    if (orig.size() != repl.size()) {
      ans.note = "the two sides have different element counts";
      return ans;
    }
    DType t = g.typeOf(g.original).dtype;
    // Not a refinement at element k: the original is determinate and the
    // replacement is indeterminate or differs.
    z3::expr_vector bad(ctx);
    for (size_t k = 0; k < orig.size(); ++k)
      bad.push_back((!orig[k].u && (repl[k].u || !enc.same(t, orig[k].v, repl[k].v))).simplify());
    z3::expr query = z3::mk_or(bad).simplify();
    if (query.is_false()) { // sound: the negated refinement is false by rewriting alone
      ans.kind = SmtRefinement::Kind::Proved;
      ans.bySimplification = true;
      return ans;
    }
    // Special inputs first (all elements alike, then staggered so that
    // shape ops see distinct elements): a substitution under which the
    // query simplifies to true is a model found without search; it is
    // replayed like any other.
    std::vector<std::pair<z3::expr, DType>> bitVars;
    z3::expr_vector undefVars(ctx), falses(ctx);
    for (int id : g.operands) {
      const InstNode &n = g.nodes[static_cast<size_t>(id)];
      for (const auto &[bits, u] : enc.operandVars.at(n.name)) {
        bitVars.emplace_back(bits, n.outputs[0].dtype);
        undefVars.push_back(u);
        falses.push_back(ctx.bool_val(false));
      }
    }
    std::map<DType, std::vector<uint64_t>> specials;
    size_t rounds = 0;
    for (const auto &[v, t] : bitVars) {
      auto it = specials.try_emplace(t, specialBits(t)).first;
      rounds = std::max(rounds, it->second.size());
    }
    for (size_t round = 0; round < 2 * rounds && !bitVars.empty(); ++round) {
      bool staggered = round >= rounds;
      if (staggered && bitVars.size() == 1)
        break;
      z3::expr_vector src(ctx), dst(ctx);
      std::vector<uint64_t> chosen;
      for (size_t i = 0; i < bitVars.size(); ++i) {
        const std::vector<uint64_t> &list = specials.at(bitVars[i].second);
        uint64_t b = list[(round % rounds + (staggered ? i : 0)) % list.size()];
        chosen.push_back(b);
        src.push_back(bitVars[i].first);
        dst.push_back(ctx.bv_val(b, bitVars[i].first.get_sort().bv_size()));
      }
      for (unsigned i = 0; i < undefVars.size(); ++i) {
        src.push_back(undefVars[i]);
        dst.push_back(falses[i]);
      }
      z3::expr q = query;
      if (!q.substitute(src, dst).simplify().is_true())
        continue;
      size_t next = 0;
      for (int id : g.operands) {
        const InstNode &n = g.nodes[static_cast<size_t>(id)];
        Tensor x(n.outputs[0]);
        for (int64_t i = 0; i < x.size(); ++i, ++next)
          std::memcpy(x.at(i), &chosen[next], dtypeBytes(x.dtype()));
        ans.inputs.emplace(n.name, std::move(x));
      }
      for (unsigned k = 0; k < bad.size() && ans.element < 0; ++k) {
        z3::expr bk = bad[k];
        if (bk.substitute(src, dst).simplify().is_true())
          ans.element = k;
      }
      ans.kind = SmtRefinement::Kind::Refuted;
      ans.bySpecialValue = true;
      return ans;
    }
    // QF_FPBV: Z3's tactic for floats and bit-vectors (fpa2bv, bit-blast,
    // SAT), several times faster here than the default solver.
    z3::solver s(ctx, "QF_FPBV");
    z3::params params(ctx);
    params.set("timeout", timeoutMs);
    if (rlimit > 0)
      params.set("rlimit", rlimit);
    s.set(params);
    s.add(query);
    z3::check_result r = s.check();
    if (r == z3::unsat) {
      ans.kind = SmtRefinement::Kind::Proved;
      return ans;
    }
    if (r == z3::unknown) {
      ans.kind = SmtRefinement::Kind::Unknown;
      ans.note = s.reason_unknown();
      return ans;
    }
    z3::model m = s.get_model();
    for (int id : g.operands) {
      const InstNode &n = g.nodes[static_cast<size_t>(id)];
      Tensor x(n.outputs[0]);
      const auto &vars = enc.operandVars.at(n.name);
      for (size_t i = 0; i < vars.size(); ++i) {
        uint64_t bits = 0;
        z3::expr v = m.eval(vars[i].first, true);
        if (!v.is_numeral_u64(bits))
          throw Unsupported("the model's value of " + n.name + " is not a numeral");
        std::memcpy(x.at(static_cast<int64_t>(i)), &bits, dtypeBytes(x.dtype()));
        if (m.eval(vars[i].second, true).is_true())
          x.setUndef(static_cast<int64_t>(i));
      }
      ans.inputs.emplace(n.name, std::move(x));
    }
    for (unsigned k = 0; k < bad.size() && ans.element < 0; ++k)
      if (m.eval(bad[k], true).is_true())
        ans.element = k;
    ans.kind = SmtRefinement::Kind::Refuted;
  } catch (const Unsupported &e) {
    ans.kind = SmtRefinement::Kind::Error;
    ans.note = e.what();
  } catch (const z3::exception &e) {
    ans.kind = SmtRefinement::Kind::Error;
    ans.note = std::string("z3: ") + e.msg();
  }
  return ans;
}

} // namespace graphvet::oracle
