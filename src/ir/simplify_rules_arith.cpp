// The arithmetic identities (x*1, x/1, x+(-0), x-(+0)) and the forwarding
// no-ops (Identity, inference Dropout, Pad by zeros, Expand to its own shape,
// Slice of the whole range, single-input Concat, Split into one) of the
// simplify rule table. Each replaces its node by an operand, so the pass's
// aliasing checks apply (docs/passes/simplify.md).
#include "ir/simplify_rules_support.h"

#include <cmath>
#include <limits>

namespace graphvet::rewrite::detail {
namespace {

/// x has the type of the result: the constant neither changes the dtype nor
/// broadcasts the result larger, and it is the rule's splat.
bool neutralConstant(const Binding &b, double splat) {
  const TensorType *x = operandType(b, "x");
  auto c = b.constants.find("c");
  if (!x || c == b.constants.end() || !c->second)
    return false;
  const Tensor &t = *c->second;
  return t.dtype() == x->dtype && isSplat(t, splat) &&
         broadcastShapes(x->shape, t.shape()) == x->shape;
}

Binding arithBinding(DType t, Shape xs, Shape cs, double splat) {
  Binding b;
  b.operands["x"] = TensorType{t, std::move(xs)};
  b.constants["c"] = splatTensor(t, cs, splat);
  return b;
}

std::string splatText(double splat) {
  return std::signbit(splat) && splat == 0 ? "-0" : std::to_string(static_cast<int>(splat));
}

/// x OP c -> x (or c OP x -> x with `constLeft`) for every numeric dtype.
Rule arithRule(std::string_view name, std::string_view summary, const char *opType, double splat,
               bool constLeft) {
  Term c = constant("c", splat);
  Term pattern = constLeft ? op(opType, {c, var("x")}) : op(opType, {var("x"), c});
  return Rule{
      name,
      summary,
      pattern,
      var("x"),
      "c has the dtype of x, every element of c is the splat bit for bit, and c broadcasts to the "
      "shape of x",
      [splat](const Binding &b) { return neutralConstant(b, splat); },
      [splat, opType] {
        std::vector<Instance> out;
        std::string s = splatText(splat);
        for (DType t : kNumericDTypes) {
          std::string dt(dtypeName(t));
          out.push_back(
              {dt + " x[2] " + opType + " c[1] = " + s, arithBinding(t, {2}, {1}, splat)});
          out.push_back(
              {dt + " x[2] " + opType + " c[2] = " + s, arithBinding(t, {2}, {2}, splat)});
          // Outside: the constant broadcasts the result larger.
          out.push_back({dt + " x[1] " + opType + " c[2] = " + s + " (broadcasts larger)",
                         arithBinding(t, {1}, {2}, splat)});
          // Outside: the other zero of a float (x + (+0) is +0 at x = -0).
          if (isFloat(t) && splat == 0)
            out.push_back({dt + " x[1] " + opType + " c[1] = other zero",
                           arithBinding(t, {1}, {1}, std::signbit(splat) ? 0.0 : -0.0)});
        }
        return out;
      }};
}

Instance single(std::string label, DType t, Shape s) {
  Binding b;
  b.operands["x"] = TensorType{t, std::move(s)};
  return {std::move(label), std::move(b)};
}

/// Whether Slice(x, starts, ends, axes, steps) takes every element in order.
bool sliceIsWhole(const Binding &b) {
  const TensorType *x = operandType(b, "x");
  auto starts = constantInts(b, "starts");
  auto ends = constantInts(b, "ends");
  if (!x || !starts || !ends || starts->size() != ends->size())
    return false;
  int64_t rank = x->rank();
  std::vector<int64_t> axes(starts->size());
  for (size_t i = 0; i < axes.size(); ++i)
    axes[i] = static_cast<int64_t>(i);
  if (b.constants.count("axes")) {
    auto a = constantInts(b, "axes");
    if (!a || a->size() != starts->size())
      return false;
    axes = *a;
  }
  if (b.constants.count("steps")) {
    auto s = constantInts(b, "steps");
    if (!s || s->size() != starts->size())
      return false;
    for (int64_t step : *s)
      if (step != 1)
        return false;
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < -rank || a >= rank)
      return false;
    size_t k = static_cast<size_t>(a < 0 ? a + rank : a);
    if (seen[k])
      return false;
    seen[k] = true;
    int64_t d = x->shape[k];
    int64_t s = (*starts)[i], e = (*ends)[i];
    s = s < 0 ? std::max<int64_t>(s + d, 0) : std::min(s, d);
    e = e < 0 ? std::max<int64_t>(e + d, 0) : std::min(e, d);
    if (s != 0 || e != d)
      return false;
  }
  return true;
}

Instance sliceInstance(std::string label, DType t, Shape xs, std::vector<int64_t> starts,
                       std::vector<int64_t> ends, std::optional<std::vector<int64_t>> axes,
                       std::optional<std::vector<int64_t>> steps) {
  Instance in = single(std::move(label), t, std::move(xs));
  in.binding.constants["starts"] = i64Tensor(starts);
  in.binding.constants["ends"] = i64Tensor(ends);
  if (axes)
    in.binding.constants["axes"] = i64Tensor(*axes);
  if (steps)
    in.binding.constants["steps"] = i64Tensor(*steps);
  return in;
}

void addSliceRules(std::vector<Rule> &rules) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const char *pre = "starts and ends (clamped, negative from the end) cover every sliced axis "
                    "whole, axes are distinct and every step is 1";
  rules.push_back(Rule{"slice-whole", "a Slice of the whole range is its input",
                       op("Slice", {var("x"), anyConstant("starts"), anyConstant("ends")}),
                       var("x"), pre, sliceIsWhole, [] {
                         std::vector<Instance> out;
                         for (DType t : kAllDTypes)
                           out.push_back(sliceInstance(std::string(dtypeName(t)) + " [2] 0:2", t,
                                                       {2}, {0}, {2}, std::nullopt, std::nullopt));
                         out.push_back(sliceInstance("f32 [2] 0:INT64_MAX", DType::F32, {2}, {0},
                                                     {kMax}, std::nullopt, std::nullopt));
                         out.push_back(sliceInstance("f32 [2] -2:2", DType::F32, {2}, {-2}, {2},
                                                     std::nullopt, std::nullopt));
                         out.push_back(sliceInstance("f32 [2] 1:2 (a part)", DType::F32, {2}, {1},
                                                     {2}, std::nullopt, std::nullopt));
                         return out;
                       }});
  rules.push_back(Rule{
      "slice-whole-axes", "a Slice of the whole range along given axes is its input",
      op("Slice", {var("x"), anyConstant("starts"), anyConstant("ends"), anyConstant("axes")}),
      var("x"), pre, sliceIsWhole, [] {
        std::vector<Instance> out;
        for (DType t : kAllDTypes)
          out.push_back(sliceInstance(std::string(dtypeName(t)) + " [2, 3] axis 1 0:3", t, {2, 3},
                                      {0}, {3}, std::vector<int64_t>{1}, std::nullopt));
        out.push_back(sliceInstance("f32 [2, 3] axis -1 -3:INT64_MAX", DType::F32, {2, 3}, {-3},
                                    {kMax}, std::vector<int64_t>{-1}, std::nullopt));
        out.push_back(sliceInstance("f32 [2, 3] axis 1 0:2 (a part)", DType::F32, {2, 3}, {0}, {2},
                                    std::vector<int64_t>{1}, std::nullopt));
        // A negative axis counts from the end: axis -1 is the 3, so 0:2 is a
        // part (the whole of axis 0, which a wrong mapping would look at).
        out.push_back(sliceInstance("f32 [2, 3] axis -1 0:2 (a part)", DType::F32, {2, 3}, {0}, {2},
                                    std::vector<int64_t>{-1}, std::nullopt));
        return out;
      }});
  rules.push_back(
      Rule{"slice-whole-steps", "a Slice of the whole range with unit steps is its input",
           op("Slice", {var("x"), anyConstant("starts"), anyConstant("ends"), anyConstant("axes"),
                        anyConstant("steps")}),
           var("x"), pre, sliceIsWhole, [] {
             std::vector<Instance> out;
             for (DType t : kAllDTypes)
               out.push_back(sliceInstance(std::string(dtypeName(t)) + " [2] 0:2:1", t, {2}, {0},
                                           {2}, std::vector<int64_t>{0}, std::vector<int64_t>{1}));
             out.push_back(sliceInstance("f32 [2] 0:2:2 (every other)", DType::F32, {2}, {0}, {2},
                                         std::vector<int64_t>{0}, std::vector<int64_t>{2}));
             return out;
           }});
}

} // namespace

void addArithmeticRules(std::vector<Rule> &rules) {
  rules.push_back(arithRule("mul-one", "x * 1 is x", "Mul", 1, false));
  rules.push_back(arithRule("mul-one-left", "1 * x is x", "Mul", 1, true));
  rules.push_back(arithRule("div-one", "x / 1 is x", "Div", 1, false));
  // -0 is the additive identity of IEEE floats (x + -0 = x even at x = -0);
  // +0 is not (-0 + +0 = +0). For integers the splat -0 is the 0.
  rules.push_back(arithRule("add-zero", "x + (-0) is x (x + 0 for integers)", "Add", -0.0, false));
  rules.push_back(
      arithRule("add-zero-left", "(-0) + x is x ((0 + x for integers)", "Add", -0.0, true));
  // x - (+0) = x + (-0).
  rules.push_back(arithRule("sub-zero", "x - (+0) is x (x - 0 for integers)", "Sub", 0.0, false));
}

void addForwardingRules(std::vector<Rule> &rules) {
  rules.push_back(Rule{"identity", "an Identity is its input", op("Identity", {var("x")}), var("x"),
                       "none (the copy's fresh buffer is the pass's concern)",
                       [](const Binding &) { return true; },
                       [] {
                         std::vector<Instance> out;
                         for (DType t : kAllDTypes)
                           out.push_back(single(std::string(dtypeName(t)), t, {2}));
                         return out;
                       }});

  auto dropoutInstances = [](bool ratio, bool training) {
    return [ratio, training] {
      std::vector<Instance> out;
      for (DType t : kFloatDTypes) {
        Instance in = single(std::string(dtypeName(t)), t, {2});
        if (ratio)
          in.binding.operands["ratio"] = TensorType{DType::F32, {}};
        if (training)
          in.binding.constants["training"] = splatTensor(DType::Bool, {}, 0);
        out.push_back(std::move(in));
      }
      return out;
    };
  };
  const char *dropoutPre = "none beyond the pattern (output 0 only; the pass refuses a node "
                           "whose mask output is used)";
  rules.push_back(Rule{"dropout-inference", "a Dropout without training_mode is its input",
                       op("Dropout", {var("x")}), var("x"), dropoutPre,
                       [](const Binding &) { return true; }, dropoutInstances(false, false)});
  rules.push_back(Rule{"dropout-inference-ratio",
                       "a Dropout with a ratio but no training_mode is its input",
                       op("Dropout", {var("x"), var("ratio")}), var("x"), dropoutPre,
                       [](const Binding &) { return true; }, dropoutInstances(true, false)});
  rules.push_back(Rule{"dropout-training-false",
                       "a Dropout whose training_mode is a constant false is its input",
                       op("Dropout", {var("x"), var("ratio"), constant("training", 0)}), var("x"),
                       "training is false",
                       [](const Binding &b) {
                         auto t = b.constants.find("training");
                         return t != b.constants.end() && t->second && isSplat(*t->second, 0);
                       },
                       dropoutInstances(true, true)});

  auto padPre = [](const Binding &b) {
    const TensorType *x = operandType(b, "x");
    auto pads = constantInts(b, "pads");
    if (!x || !pads || pads->size() != 2 * x->shape.size())
      return false;
    for (int64_t p : *pads)
      if (p != 0)
        return false;
    return true;
  };
  auto padInstances = [](bool value) {
    return [value] {
      std::vector<Instance> out;
      auto add = [&](std::string label, DType t, Shape s, std::vector<int64_t> pads) {
        Instance in = single(std::move(label), t, std::move(s));
        in.binding.constants["pads"] = i64Tensor(pads);
        if (value)
          in.binding.operands["value"] = TensorType{t, {}};
        out.push_back(std::move(in));
      };
      for (DType t : kAllDTypes)
        add(std::string(dtypeName(t)) + " [2] pads [0, 0]", t, {2}, {0, 0});
      add("f32 [2, 3] pads [0, 0, 0, 0]", DType::F32, {2, 3}, {0, 0, 0, 0});
      add("f32 [2] pads [0, 1] (pads)", DType::F32, {2}, {0, 1});
      return out;
    };
  };
  rules.push_back(Rule{"pad-zero", "a Pad by zero on every side is its input",
                       op("Pad", {var("x"), anyConstant("pads")}), var("x"),
                       "pads has two entries per axis of x, all 0", padPre, padInstances(false)});
  rules.push_back(Rule{"pad-zero-value", "a Pad by zero on every side (any pad value) is its input",
                       op("Pad", {var("x"), anyConstant("pads"), var("value")}), var("x"),
                       "pads has two entries per axis of x, all 0", padPre, padInstances(true)});

  rules.push_back(
      Rule{"expand-noop", "an Expand to a shape x already has (broadcasting nothing) is its input",
           op("Expand", {var("x"), anyConstant("shape")}), var("x"),
           "broadcasting x with shape gives the shape of x",
           [](const Binding &b) {
             const TensorType *x = operandType(b, "x");
             auto shape = constantInts(b, "shape");
             return x && shape && broadcastShapes(x->shape, *shape) == x->shape;
           },
           [] {
             std::vector<Instance> out;
             auto add = [&](std::string label, DType t, Shape s, std::vector<int64_t> shape) {
               Instance in = single(std::move(label), t, std::move(s));
               in.binding.constants["shape"] = i64Tensor(shape);
               out.push_back(std::move(in));
             };
             for (DType t : kAllDTypes)
               add(std::string(dtypeName(t)) + " [2] to [2]", t, {2}, {2});
             add("f32 [2] to [1]", DType::F32, {2}, {1});
             add("f32 [2, 3] to [3]", DType::F32, {2, 3}, {3});
             add("f32 [1] to [2] (broadcasts larger)", DType::F32, {1}, {2});
             add("f32 [2] to [2, 2] (broadcasts larger)", DType::F32, {2}, {2, 2});
             return out;
           }});

  addSliceRules(rules);

  rules.push_back(Rule{"concat-one", "a Concat of one input is its input",
                       op("Concat", {var("x")}, {attrVar("axis", "$axis")}), var("x"), "none",
                       [](const Binding &) { return true; },
                       [] {
                         std::vector<Instance> out;
                         for (DType t : kAllDTypes) {
                           Instance in = single(std::string(dtypeName(t)), t, {2});
                           in.binding.attrs["$axis"] = AttrValue::ofInt(0);
                           out.push_back(std::move(in));
                         }
                         return out;
                       }});

  auto splitInstances = [](bool sizes) {
    return [sizes] {
      std::vector<Instance> out;
      auto add = [&](std::string label, DType t, int64_t n) {
        Instance in = single(std::move(label), t, {2});
        in.binding.attrs["$axis"] = AttrValue::ofInt(0);
        in.binding.counts["$n"] = n;
        if (sizes)
          in.binding.constants["sizes"] =
              i64Tensor(n == 1 ? std::vector<int64_t>{2} : std::vector<int64_t>{1, 1});
        out.push_back(std::move(in));
      };
      for (DType t : kAllDTypes)
        add(std::string(dtypeName(t)) + " into 1", t, 1);
      add("f32 into 2 (a part)", DType::F32, 2);
      return out;
    };
  };
  auto splitTerm = [](bool sizes) {
    Term t = sizes ? op("Split", {var("x"), anyConstant("sizes")}, {attrVar("axis", "$axis")})
                   : op("Split", {var("x")}, {attrVar("axis", "$axis")});
    t.countVar = "$n";
    return t;
  };
  auto splitPre = [](const Binding &b) {
    auto n = b.counts.find("$n");
    return n != b.counts.end() && n->second == 1;
  };
  rules.push_back(Rule{"split-one", "a Split into one output is its input", splitTerm(false),
                       var("x"), "the Split has one output ($n = 1)", splitPre,
                       splitInstances(false)});
  rules.push_back(Rule{"split-one-sizes", "a Split into one output by sizes is its input",
                       splitTerm(true), var("x"), "the Split has one output ($n = 1)", splitPre,
                       splitInstances(true)});
}

} // namespace graphvet::rewrite::detail
