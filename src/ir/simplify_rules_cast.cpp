// The Cast rows of the simplify rule table: a Cast to the dtype it already
// has, a Cast pair there and back, and a Cast chain collapsed to one Cast
// (tensor-semantics.md §4; the clauses of the chain's precondition are in
// rewrite_rule.cpp, castChainCollapses).
#include "ir/simplify_rules_support.h"

namespace graphvet::rewrite::detail {
namespace {

DType xDType(const Binding &b) {
  return b.operands.at("x").dtype;
}

/// x of dtype `a` (one element: the cast rules are element-wise).
Binding castBinding(DType a, std::initializer_list<std::pair<const char *, DType>> tos) {
  Binding b;
  b.operands["x"] = TensorType{a, {1}};
  for (const auto &[name, t] : tos)
    b.attrs[name] = dtypeAttr(t);
  return b;
}

Term castOf(Term inner, const char *var) {
  return op("Cast", {std::move(inner)}, {attrVar("to", var)});
}

} // namespace

void addCastRules(std::vector<Rule> &rules) {
  rules.push_back(Rule{"cast-same-type", "a Cast to the dtype its input already has is its input",
                       castOf(var("x"), "$A"), var("x"), "$A is the dtype of x",
                       [](const Binding &b) { return boundDType(b, "$A") == xDType(b); },
                       [] {
                         std::vector<Instance> out;
                         for (DType a : kAllDTypes)
                           for (DType to : kAllDTypes)
                             out.push_back({chainLabel({a, to}), castBinding(a, {{"$A", to}})});
                         return out;
                       }});

  rules.push_back(Rule{
      "cast-pair", "a Cast there and back is its input when the first cast keeps every value",
      castOf(castOf(var("x"), "$B"), "$A"), var("x"),
      "$A is the dtype of x, and the cast to $B is injective on $A (it holds every value, or "
      "both are integers and $B is at least as wide)",
      [](const Binding &b) {
        DType a = xDType(b);
        auto mid = boundDType(b, "$B");
        return boundDType(b, "$A") == a && mid && castRoundTrips(a, *mid);
      },
      [] {
        std::vector<Instance> out;
        for (DType a : kAllDTypes)
          for (DType mid : kAllDTypes)
            if (mid != a)
              out.push_back({chainLabel({a, mid, a}), castBinding(a, {{"$B", mid}, {"$A", a}})});
        return out;
      }});

  rules.push_back(Rule{"cast-chain",
                       "a Cast of a Cast is one Cast when the chain computes what the last "
                       "cast alone computes",
                       castOf(castOf(var("x"), "$B"), "$C"), castOf(var("x"), "$C"),
                       "$C differs from the dtype A of x, and one of: $B holds every value of "
                       "A; all integers with $C no wider than $B; $C is bool and the first cast "
                       "keeps zero-ness; A float, $B and $C integers with $C holding every value "
                       "of $B; A integer, $B float, $C integer whose range (and one past its "
                       "minimum) is exact in $B; A integer, $B and $C floats with $C's finite "
                       "range below 2^precision($B)",
                       [](const Binding &b) {
                         auto mid = boundDType(b, "$B");
                         auto last = boundDType(b, "$C");
                         return mid && last && castChainCollapses(xDType(b), *mid, *last);
                       },
                       [] {
                         std::vector<Instance> out;
                         for (DType a : kAllDTypes)
                           for (DType mid : kAllDTypes)
                             for (DType last : kAllDTypes)
                               if (mid != a && last != a && last != mid)
                                 out.push_back({chainLabel({a, mid, last}),
                                                castBinding(a, {{"$B", mid}, {"$C", last}})});
                         return out;
                       }});
}

} // namespace graphvet::rewrite::detail
