// The simplify pass's rule table (docs/passes/simplify.md): each row a
// pattern, a replacement and a precondition, with the instances the prover
// checks. Kept as data so that the pass and `graphvet prove` read one table.
#include "ir/rewrite_rule.h"

namespace graphvet::rewrite {
namespace {

constexpr DType kAllDTypes[] = {DType::Bool, DType::I8,  DType::U8,  DType::I16, DType::U16,
                                DType::I32,  DType::U32, DType::I64, DType::U64, DType::F16,
                                DType::BF16, DType::F32, DType::F64};

AttrValue dtypeAttr(DType t) {
  return AttrValue::ofIdent(std::string(dtypeName(t)));
}

/// The dtype an attribute variable holds (`to = f16`), if it is one.
std::optional<DType> boundDType(const Binding &b, const std::string &v) {
  auto it = b.attrs.find(v);
  if (it == b.attrs.end() || !it->second.isIdent())
    return std::nullopt;
  return parseDType(it->second.asIdent());
}

DType operandDType(const Binding &b, const std::string &v) {
  return b.operands.at(v).dtype;
}

/// x of dtype `a` (one element: the cast rules are element-wise).
Binding castBinding(DType a, std::initializer_list<std::pair<const char *, DType>> tos) {
  Binding b;
  b.operands["x"] = TensorType{a, {1}};
  for (const auto &[name, t] : tos)
    b.attrs[name] = dtypeAttr(t);
  return b;
}

std::string chainLabel(std::initializer_list<DType> ts) {
  std::string s;
  for (DType t : ts)
    s += (s.empty() ? "" : " -> ") + std::string(dtypeName(t));
  return s;
}

std::vector<Rule> buildRules() {
  std::vector<Rule> rules;

  rules.push_back(Rule{"cast-same-type", "a Cast to the dtype its input already has is its input",
                       op("Cast", {var("x")}, {attrVar("to", "$A")}), var("x"),
                       "$A is the dtype of x",
                       [](const Binding &b) { return boundDType(b, "$A") == operandDType(b, "x"); },
                       [] {
                         std::vector<Instance> out;
                         for (DType a : kAllDTypes)
                           for (DType to : kAllDTypes)
                             out.push_back({chainLabel({a, to}), castBinding(a, {{"$A", to}})});
                         return out;
                       }});

  rules.push_back(Rule{
      "cast-pair", "a Cast there and back is its input when the first cast keeps every value",
      op("Cast", {op("Cast", {var("x")}, {attrVar("to", "$B")})}, {attrVar("to", "$A")}), var("x"),
      "$A is the dtype of x, and $B holds every value of $A",
      [](const Binding &b) {
        DType a = operandDType(b, "x");
        auto mid = boundDType(b, "$B");
        return boundDType(b, "$A") == a && mid && castPreservesValues(a, *mid);
      },
      [] {
        std::vector<Instance> out;
        for (DType a : kAllDTypes)
          for (DType mid : kAllDTypes)
            if (mid != a)
              out.push_back({chainLabel({a, mid, a}), castBinding(a, {{"$B", mid}, {"$A", a}})});
        return out;
      }});

  rules.push_back(
      Rule{"cast-chain", "a Cast of a Cast is one Cast when the first cast keeps every value",
           op("Cast", {op("Cast", {var("x")}, {attrVar("to", "$B")})}, {attrVar("to", "$C")}),
           op("Cast", {var("x")}, {attrVar("to", "$C")}),
           "$B holds every value of the dtype of x, and $C differs from it",
           [](const Binding &b) {
             DType a = operandDType(b, "x");
             auto mid = boundDType(b, "$B");
             auto last = boundDType(b, "$C");
             return mid && last && *last != a && castPreservesValues(a, *mid);
           },
           [] {
             std::vector<Instance> out;
             for (DType a : kAllDTypes)
               for (DType mid : kAllDTypes)
                 for (DType last : kAllDTypes)
                   if (mid != a && last != a && last != mid)
                     out.push_back(
                         {chainLabel({a, mid, last}), castBinding(a, {{"$B", mid}, {"$C", last}})});
             return out;
           }});

  return rules;
}

} // namespace

std::span<const Rule> simplifyRules() {
  static const std::vector<Rule> rules = buildRules();
  return rules;
}

const Rule *findRule(std::string_view name) {
  for (const Rule &r : simplifyRules())
    if (r.name == name)
      return &r;
  return nullptr;
}

} // namespace graphvet::rewrite
