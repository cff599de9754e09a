// Catalogue entries of the elementwise family: binary and variadic
// arithmetic with numpy broadcasting, unary math, activations and Clip. Each
// builder picks inputs of the op's ONNX dtypes, solves broadcasting partners
// and attributes from the step's choices, and states the output type by the
// ONNX definition.
#include "props/typed_attrs.h"
#include "props/typed_builder.h"
#include "props/typed_shape.h"

namespace graphvet::props::typed {
namespace {

constexpr DTypeSet kPowBase = kFloatDTypes | dtypeBit(DType::I32) | dtypeBit(DType::I64);
constexpr DTypeSet kPRelu = kFloatDTypes | dtypeBit(DType::I32) | dtypeBit(DType::I64) |
                            dtypeBit(DType::U32) | dtypeBit(DType::U64);
constexpr DTypeSet kSignedNumeric = kFloatDTypes | kSignedIntDTypes;

/// Add, Sub, Mul, Div, Pow, Mod, PRelu (two inputs) and Max, Min, Sum, Mean
/// (one to four): one dtype (Pow: any exponent dtype), broadcast shapes
/// (PRelu: the slope broadcasts to X).
void buildArithmetic(Builder &b, const std::string &op) {
  const bool variadic = op == "Max" || op == "Min" || op == "Sum" || op == "Mean";
  const bool prelu = op == "PRelu";
  DTypeSet set = op == "Sum" || op == "Mean" ? kFloatDTypes
                 : op == "Pow"               ? kPowBase
                 : prelu                     ? kPRelu
                                             : kNumericDTypes;
  Value a = b.input(set);
  size_t n = variadic ? 1 + b.ch.below(4) : 2;
  Inputs ins{a};
  Shape shape = a.type.shape;
  for (size_t i = 1; i < n; ++i) {
    DType dt = a.dtype();
    if (op == "Pow" && b.ch.chance(30))
      dt = pickDType(kNumericDTypes, b.ch.next());
    Value p = b.partner(a, dt, shape, prelu);
    shape = *broadcastOf(shape, p.type.shape);
    ins.push_back(p);
  }
  AttrMap attrs;
  if (op == "Mod") {
    // fmod = 0 (Python's remainder) is for integers only.
    bool cFmod = isFloat(a.dtype()) || b.ch.chance(50);
    if (cFmod || b.ch.chance(30))
      attrs["fmod"] = AttrValue::ofInt(cFmod ? 1 : 0);
  }
  b.emit1(op, ins, std::move(attrs), {a.dtype(), prelu ? a.type.shape : shape});
}

struct UnaryRule {
  std::string_view op;
  DTypeSet dtypes;
  /// Float attributes and their usual values.
  std::vector<std::pair<std::string, std::vector<double>>> attrs;
};

const std::vector<UnaryRule> &unaryRules() {
  static const std::vector<UnaryRule> rules = {
      {"Abs", kNumericDTypes, {}},
      {"Neg", kSignedNumeric, {}},
      {"Sign", kNumericDTypes, {}},
      {"Exp", kFloatDTypes, {}},
      {"Log", kFloatDTypes, {}},
      {"Sqrt", kFloatDTypes, {}},
      {"Reciprocal", kFloatDTypes, {}},
      {"Tanh", kFloatDTypes, {}},
      {"Erf", kNumericDTypes, {}},
      {"Floor", kFloatDTypes, {}},
      {"Ceil", kFloatDTypes, {}},
      {"Round", kFloat3DTypes, {}},
      {"Relu", kSignedNumeric, {}},
      {"LeakyRelu", kFloatDTypes, {{"alpha", {0.01, 0.2, 1.0}}}},
      {"Elu", kFloat3DTypes, {{"alpha", {1.0, 0.5, 2.0}}}},
      {"Selu", kFloat3DTypes, {{"alpha", {1.67326, 1.0}}, {"gamma", {1.0507, 2.0}}}},
      {"Celu", dtypeBit(DType::F32), {{"alpha", {1.0, 0.5, 3.0}}}},
      {"Sigmoid", kFloatDTypes, {}},
      {"HardSigmoid", kFloat3DTypes, {{"alpha", {0.2, 0.5}}, {"beta", {0.5, 0.0, 1.0}}}},
      {"HardSwish", kFloat3DTypes, {}},
      {"Softplus", kFloat3DTypes, {}},
      {"Softsign", kFloat3DTypes, {}},
  };
  return rules;
}

void buildUnary(Builder &b, const std::string &op) {
  const UnaryRule *rule = nullptr;
  for (const UnaryRule &r : unaryRules())
    if (r.op == op)
      rule = &r;
  Value x = b.input(rule->dtypes);
  AttrMap attrs;
  for (const auto &[name, usual] : rule->attrs)
    if (b.ch.chance(60))
      attrs[name] = AttrValue::ofFloat(pickFloatAttr(usual, b.ch));
  b.emit1(op, {x}, std::move(attrs), x.type);
}

/// Clip: no bounds, min, min and max, `_` and max (inputs of one element,
/// X's dtype), or the attributes min/max of opset < 11 (floats only).
void buildClip(Builder &b, const std::string &op) {
  Value x = b.input(kNumericDTypes);
  Inputs ins{x};
  AttrMap attrs;
  auto bound = [&] { return b.source({x.dtype(), b.ch.chance(50) ? Shape{} : Shape{1}}); };
  switch (b.ch.below(5)) {
  case 0:
    break;
  case 1:
    ins.push_back(bound());
    break;
  case 2:
    ins.push_back(bound());
    ins.push_back(bound());
    break;
  case 3:
    ins.push_back(std::nullopt);
    ins.push_back(bound());
    break;
  default:
    if (isFloat(x.dtype())) {
      if (b.ch.chance(70))
        attrs["min"] = AttrValue::ofFloat(pickFloatAttr({-1.0, 0.0, -6.0}, b.ch));
      if (attrs.empty() || b.ch.chance(70))
        attrs["max"] = AttrValue::ofFloat(pickFloatAttr({1.0, 6.0, 0.5}, b.ch));
    }
    break;
  }
  b.emit1(op, ins, std::move(attrs), x.type);
}

constexpr CatalogueEntry kEntries[] = {
    {"Add", buildArithmetic},  {"Sub", buildArithmetic},   {"Mul", buildArithmetic},
    {"Div", buildArithmetic},  {"Pow", buildArithmetic},   {"Mod", buildArithmetic},
    {"Max", buildArithmetic},  {"Min", buildArithmetic},   {"Sum", buildArithmetic},
    {"Mean", buildArithmetic}, {"PRelu", buildArithmetic}, {"Abs", buildUnary},
    {"Neg", buildUnary},       {"Sign", buildUnary},       {"Exp", buildUnary},
    {"Log", buildUnary},       {"Sqrt", buildUnary},       {"Reciprocal", buildUnary},
    {"Tanh", buildUnary},      {"Erf", buildUnary},        {"Floor", buildUnary},
    {"Ceil", buildUnary},      {"Round", buildUnary},      {"Relu", buildUnary},
    {"LeakyRelu", buildUnary}, {"Elu", buildUnary},        {"Selu", buildUnary},
    {"Celu", buildUnary},      {"Sigmoid", buildUnary},    {"HardSigmoid", buildUnary},
    {"HardSwish", buildUnary}, {"Softplus", buildUnary},   {"Softsign", buildUnary},
    {"Clip", buildClip},
};

} // namespace

std::span<const CatalogueEntry> elementwiseEntries() {
  return kEntries;
}

} // namespace graphvet::props::typed
