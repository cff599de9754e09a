// The rewrite-rule language's helpers: term builders, term text, attribute
// resolution and the value-preservation table of casts (tensor-semantics.md
// §4). The rules themselves are in simplify_rules.cpp.
#include "ir/rewrite_rule.h"

#include "ir/printer.h"

#include <fmt/format.h>

#include <cmath>

namespace graphvet::rewrite {
namespace {

/// Binary digits of precision (implicit bit included) of a float dtype.
int precisionBits(DType t) {
  switch (t) {
  case DType::F16:
    return 11;
  case DType::BF16:
    return 8;
  case DType::F32:
    return 24;
  case DType::F64:
    return 53;
  default:
    return 0;
  }
}

/// Bits of magnitude of an integer dtype: every value v has |v| <= 2^bits.
int magnitudeBits(DType t) {
  int bits = static_cast<int>(dtypeBytes(t)) * 8;
  return isSignedInteger(t) ? bits - 1 : bits;
}

std::string attrText(const AttrTerm &a) {
  switch (a.kind) {
  case AttrTerm::Kind::Literal:
    return a.key + " = " + formatAttrValue(a.literal);
  case AttrTerm::Kind::Var:
    return a.key + " = " + a.var;
  case AttrTerm::Kind::Computed:
    return a.key + " = " + std::string(a.computed.name);
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
    return magnitudeBits(from) <= precisionBits(to);
  if (isFloat(from) && isFloat(to)) {
    // Wider in both exponent and precision: f16/bf16 -> f32 -> f64.
    if (to == DType::F64)
      return true;
    return to == DType::F32 && (from == DType::F16 || from == DType::BF16);
  }
  return false; // float -> integer: NaN, inf and fractions do not survive
}

std::string termText(const Term &t) {
  switch (t.kind) {
  case Term::Kind::Var:
    return t.var;
  case Term::Kind::Constant:
    return fmt::format("{}:splat({})", t.var,
                       std::signbit(t.splat) && t.splat == 0 ? std::string("-0")
                                                             : fmt::format("{}", t.splat));
  case Term::Kind::Op:
    break;
  }
  std::string s = t.op + "(";
  for (size_t i = 0; i < t.args.size(); ++i)
    s += (i ? ", " : "") + termText(t.args[i]);
  for (size_t i = 0; i < t.attrs.size(); ++i)
    s += (i || !t.args.empty() ? ", " : "") + attrText(t.attrs[i]);
  s += ")";
  if (t.result != 0) { // two appends: GCC 12's -Wrestrict misfires on "#" + to_string
    s += '#';
    s += std::to_string(t.result);
  }
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
