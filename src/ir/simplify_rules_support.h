// Helpers shared by the files of the simplify rule table (simplify_rules*.cpp):
// dtype lists, binding accessors and instance builders, and the shape
// functions the shape rules' preconditions and derived constants use. Not
// part of the rule language's interface (rewrite_rule.h).
#pragma once

#include "ir/rewrite_rule.h"

#include <optional>
#include <string>
#include <vector>

namespace graphvet::rewrite::detail {

inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I8,  DType::U8,  DType::I16, DType::U16,
                                       DType::I32,  DType::U32, DType::I64, DType::U64, DType::F16,
                                       DType::BF16, DType::F32, DType::F64};
/// Every dtype but bool (what Add, Sub, Mul and Div accept).
inline constexpr DType kNumericDTypes[] = {DType::I8,  DType::U8,   DType::I16, DType::U16,
                                           DType::I32, DType::U32,  DType::I64, DType::U64,
                                           DType::F16, DType::BF16, DType::F32, DType::F64};
inline constexpr DType kFloatDTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

AttrValue dtypeAttr(DType t);
/// The dtype an attribute variable holds (`to = f16`), if it is one.
std::optional<DType> boundDType(const Binding &b, const std::string &v);
/// The integer an attribute variable holds, or `def` when it is unbound.
std::optional<int64_t> boundInt(const Binding &b, const std::string &v, int64_t def);
/// The integer list an attribute variable holds, if bound and a list of ints.
std::optional<std::vector<int64_t>> boundInts(const Binding &b, const std::string &v);
/// The elements of a bound integer constant (a shape operand), if any.
std::optional<std::vector<int64_t>> constantInts(const Binding &b, const std::string &v);
/// The type of a bound operand, if bound.
const TensorType *operandType(const Binding &b, const std::string &v);
/// A one-dimensional i64 tensor (a shape operand's value).
std::shared_ptr<const Tensor> i64Tensor(const std::vector<int64_t> &values);
/// Stable storage for a generated rule's name or text (Rule holds views).
std::string_view intern(std::string text);
std::string chainLabel(std::initializer_list<DType> ts);
std::string listText(const std::vector<int64_t> &v);

/// The numpy broadcast of two shapes, or nullopt when they do not broadcast.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);
/// Output shapes of the shape ops (ONNX semantics), nullopt when invalid.
std::optional<Shape> reshapeShape(const Shape &in, const std::vector<int64_t> &spec,
                                  bool allowZero);
std::optional<Shape> flattenShape(const Shape &in, int64_t axis);
std::optional<Shape> squeezeShape(const Shape &in, const std::optional<std::vector<int64_t>> &axes);
std::optional<Shape> unsqueezeShape(const Shape &in, const std::vector<int64_t> &axes);

void addCastRules(std::vector<Rule> &rules);
void addArithmeticRules(std::vector<Rule> &rules);
void addForwardingRules(std::vector<Rule> &rules); // Identity, Dropout, Pad, Expand, Slice, ...
void addTransposeRules(std::vector<Rule> &rules);
void addReshapeRules(std::vector<Rule> &rules);

} // namespace graphvet::rewrite::detail
