// The Cast rows of the simplify rule table: a Cast to the dtype it already
// has, a Cast pair there and back, a Cast chain collapsed to one Cast, and an
// integer narrowing chain collapsed (tensor-semantics.md §4).
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
      "$A is the dtype of x, and $B holds every value of $A",
      [](const Binding &b) {
        DType a = xDType(b);
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

  rules.push_back(Rule{"cast-chain",
                       "a Cast of a Cast is one Cast when the first cast keeps every value",
                       castOf(castOf(var("x"), "$B"), "$C"), castOf(var("x"), "$C"),
                       "$B holds every value of the dtype of x, and $C differs from it",
                       [](const Binding &b) {
                         DType a = xDType(b);
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
                                 out.push_back({chainLabel({a, mid, last}),
                                                castBinding(a, {{"$B", mid}, {"$C", last}})});
                         return out;
                       }});

  // Integer casts keep the low bits (wrap): keeping the low 16 bits and then
  // the low 8 is keeping the low 8, whatever the signs.
  rules.push_back(
      Rule{"cast-int-narrowing",
           "integer casts that end no wider than the middle one are one Cast (low bits kept)",
           castOf(castOf(var("x"), "$B"), "$C"), castOf(var("x"), "$C"),
           "x, $B and $C are integer dtypes, and $C is no wider than $B",
           [](const Binding &b) {
             auto mid = boundDType(b, "$B");
             auto last = boundDType(b, "$C");
             return mid && last && isInteger(xDType(b)) && isInteger(*mid) && isInteger(*last) &&
                    dtypeBytes(*last) <= dtypeBytes(*mid);
           },
           [] {
             std::vector<Instance> out;
             for (DType a : kNumericDTypes)
               for (DType mid : kNumericDTypes)
                 for (DType last : kNumericDTypes)
                   if (isInteger(a) && isInteger(mid) && isInteger(last) && mid != a && last != mid)
                     out.push_back(
                         {chainLabel({a, mid, last}), castBinding(a, {{"$B", mid}, {"$C", last}})});
             // Outside the precondition: a float in the middle, an integer widening at the end.
             out.push_back({chainLabel({DType::I32, DType::F32, DType::I8}),
                            castBinding(DType::I32, {{"$B", DType::F32}, {"$C", DType::I8}})});
             out.push_back({chainLabel({DType::I32, DType::I8, DType::I16}),
                            castBinding(DType::I32, {{"$B", DType::I8}, {"$C", DType::I16}})});
             return out;
           }});
}

} // namespace graphvet::rewrite::detail
