// The rewrite-rule language's helpers: term builders, term text, attribute
// resolution and the value-preservation table of casts (tensor-semantics.md
// §4). The rules themselves are in simplify_rules.cpp.
#include "ir/rewrite_rule.h"

#include "ir/printer.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace graphvet::rewrite {
namespace {

/// Bits of magnitude of an integer dtype: every value v has |v| <= 2^bits.
int magnitudeBits(DType t) {
  int bits = static_cast<int>(dtypeBytes(t)) * 8;
  return isSignedInteger(t) ? bits - 1 : bits;
}

std::string attrText(const AttrTerm &a) {
  switch (a.kind) {
  case AttrTerm::Kind::Literal:
    return fmt::format("{} = {}", a.key, formatAttrValue(a.literal));
  case AttrTerm::Kind::Var:
    return fmt::format("{} = {}", a.key, a.var);
  case AttrTerm::Kind::Computed:
    return fmt::format("{} = {}", a.key, a.computed.name);
  }
  return a.key;
}

} // namespace

bool castPreservesValues(DType from, DType to) {
  if (from == to || from == DType::Bool)
    return true;
  if (to == DType::Bool)
    return false;
  if (isInteger(from) && isInteger(to)) {
    int fromBits = static_cast<int>(dtypeBytes(from)) * 8;
    int toBits = static_cast<int>(dtypeBytes(to)) * 8;
    if (isSignedInteger(from) == isSignedInteger(to))
      return toBits >= fromBits;
    // Unsigned into a wider signed type; signed never fits an unsigned one.
    return !isSignedInteger(from) && toBits > fromBits;
  }
  if (isInteger(from) && isFloat(to))
    return magnitudeBits(from) <= significandBits(to);
  if (isFloat(from) && isFloat(to)) {
    // Wider in both exponent and precision: f16/bf16 -> f32 -> f64.
    if (to == DType::F64)
      return true;
    return to == DType::F32 && (from == DType::F16 || from == DType::BF16);
  }
  return false; // float -> integer: NaN, inf and fractions do not survive
}

bool castRoundTrips(DType from, DType to) {
  if (castPreservesValues(from, to))
    return true;
  return isInteger(from) && isInteger(to) && dtypeBytes(to) >= dtypeBytes(from);
}

namespace {

/// Whether the cast keeps zero and nonzero apart (what a later cast to bool
/// reads): integers widen or flip sign injectively, an integer never rounds
/// to 0 in a float (overflow gives inf, nonzero), and among floats only a
/// target with the exponent range of the source keeps every tiny value.
bool castKeepsZeroness(DType from, DType to) {
  if (castRoundTrips(from, to))
    return true;
  if (isInteger(from) && isFloat(to))
    return true;
  return from == DType::F16 && to == DType::BF16;
}

/// The largest finite value of a float dtype.
double maxFinite(DType t) {
  switch (t) {
  case DType::F16:
    return 65504.0;
  case DType::BF16:
    return 3.3895313892515355e38;
  case DType::F32:
    return 3.4028234663852886e38;
  default:
    return 1.7976931348623157e308;
  }
}

} // namespace

bool castChainCollapses(DType a, DType b, DType c) {
  if (c == a)
    return false; // a pair there and back: the `cast-pair` rule
  // 1. The first cast keeps every value, so the second sees x itself.
  if (castPreservesValues(a, b))
    return true;
  // 2. Integers all the way, the last no wider than the middle: the low bits
  //    of the low bits (or of a sign or zero extension of x) are x's.
  if (isInteger(a) && isInteger(b) && isInteger(c) && dtypeBytes(c) <= dtypeBytes(b))
    return true;
  // 3. Into bool only zero-ness counts, and the first cast keeps it.
  if (c == DType::Bool && castKeepsZeroness(a, b))
    return true;
  // 4. A float truncated into an integer that the last integer dtype holds
  //    entirely: wherever the original is determinate the truncation fits both.
  if (isFloat(a) && isInteger(b) && isInteger(c) && castPreservesValues(b, c))
    return true;
  // 5. An integer through a float into an integer: every value of c's range,
  //    and its neighbour below the minimum, is exact in b, so in-range values
  //    pass unchanged and out-of-range ones stay out (indeterminate).
  if (isInteger(a) && isFloat(b) && isInteger(c) && magnitudeBits(c) + 1 <= significandBits(b))
    return true;
  // 6. An integer through a float into a float whose finite range ends below
  //    2^precision(b): what c can hold is exact in b, the rest overflows both ways.
  if (isInteger(a) && isFloat(b) && isFloat(c) &&
      maxFinite(c) < std::ldexp(1.0, significandBits(b)))
    return true;
  return false;
}

std::string termText(const Term &t) {
  switch (t.kind) {
  case Term::Kind::Var:
    return t.var;
  case Term::Kind::Constant:
    if (t.anyValue)
      return t.var;
    return fmt::format("{}:splat({})", t.var,
                       std::signbit(t.splat) && t.splat == 0 ? std::string("-0")
                                                             : fmt::format("{}", t.splat));
  case Term::Kind::Op:
    break;
  }
  std::vector<std::string> parts;
  for (const Term &a : t.args)
    parts.push_back(termText(a));
  for (const AttrTerm &a : t.attrs)
    parts.push_back(attrText(a));
  std::string s = t.op;
  s += '(';
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i)
      s += ", ";
    s += parts[i];
  }
  s += ')';
  if (t.result != 0)
    s += fmt::format("#{}", t.result);
  return s;
}

AttrMap resolveAttrs(const Term &t, const Binding &b) {
  AttrMap out;
  for (const AttrTerm &a : t.attrs) {
    switch (a.kind) {
    case AttrTerm::Kind::Literal:
      out[a.key] = a.literal;
      break;
    case AttrTerm::Kind::Var:
      if (auto it = b.attrs.find(a.var); it != b.attrs.end())
        out[a.key] = it->second;
      break;
    case AttrTerm::Kind::Computed:
      out[a.key] = a.computed.fn(b);
      break;
    }
  }
  return out;
}

Term var(std::string name) {
  Term t;
  t.kind = Term::Kind::Var;
  t.var = std::move(name);
  return t;
}

Term constant(std::string name, double splat) {
  Term t;
  t.kind = Term::Kind::Constant;
  t.var = std::move(name);
  t.splat = splat;
  return t;
}

Term anyConstant(std::string name) {
  Term t = constant(std::move(name), 0);
  t.anyValue = true;
  return t;
}

bool isSplat(const Tensor &t, double splat) {
  if (t.size() == 0 || t.anyUndef())
    return false;
  std::shared_ptr<const Tensor> want = splatTensor(t.dtype(), {1}, splat);
  uint32_t bytes = dtypeBytes(t.dtype());
  for (int64_t i = 0; i < t.size(); ++i)
    if (std::memcmp(t.at(i), want->at(0), bytes) != 0)
      return false;
  return true;
}

std::shared_ptr<const Tensor> splatTensor(DType dt, const Shape &shape, double splat) {
  auto t = std::make_shared<Tensor>(TensorType{dt, shape});
  for (int64_t i = 0; i < t->size(); ++i) {
    if (isFloat(dt))
      t->setDouble(i, splat);
    else
      t->setInt(i, static_cast<int64_t>(splat));
  }
  return t;
}

Term op(std::string type, std::vector<Term> args, std::vector<AttrTerm> attrs) {
  Term t;
  t.kind = Term::Kind::Op;
  t.op = std::move(type);
  t.args = std::move(args);
  t.attrs = std::move(attrs);
  return t;
}

AttrTerm attrVar(std::string key, std::string v) {
  AttrTerm a;
  a.kind = AttrTerm::Kind::Var;
  a.key = std::move(key);
  a.var = std::move(v);
  return a;
}

AttrTerm attrLit(std::string key, AttrValue value) {
  AttrTerm a;
  a.kind = AttrTerm::Kind::Literal;
  a.key = std::move(key);
  a.literal = std::move(value);
  return a;
}

AttrTerm attrFn(std::string key, std::string_view name,
                std::function<AttrValue(const Binding &)> fn) {
  AttrTerm a;
  a.kind = AttrTerm::Kind::Computed;
  a.key = std::move(key);
  a.computed = AttrFn{name, std::move(fn)};
  return a;
}

} // namespace graphvet::rewrite
