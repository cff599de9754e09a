// Catalogue entries of the logic family: comparisons, boolean ops, Where,
// IsNaN, IsInf, and Cast/CastLike over every pair of dtypes.
#include "props/typed_builder.h"
#include "props/typed_shape.h"

namespace graphvet::props::typed {
namespace {

constexpr DTypeSet kBool = dtypeBit(DType::Bool);

/// Equal (any dtype), Less, Greater, LessOrEqual, GreaterOrEqual (no bool):
/// a bool of the broadcast shape.
void buildCompare(Builder &b, const std::string &op) {
  Value a = b.input(op == "Equal" ? kAllDTypes : kNumericDTypes);
  Value p = b.partner(a, a.dtype(), a.type.shape, false);
  b.emit1(op, {a, p}, {}, {DType::Bool, *broadcastOf(a.type.shape, p.type.shape)});
}

void buildNot(Builder &b, const std::string &op) {
  Value x = b.input(kBool);
  b.emit1(op, {x}, {}, x.type);
}

void buildLogic(Builder &b, const std::string &op) {
  Value a = b.input(kBool);
  Value p = b.partner(a, DType::Bool, a.type.shape, false);
  b.emit1(op, {a, p}, {}, {DType::Bool, *broadcastOf(a.type.shape, p.type.shape)});
}

/// Where(cond, x, y): a three-way broadcast; the condition is an earlier
/// bool that fits or a new one.
void buildWhere(Builder &b, const std::string &op) {
  Value x = b.input(kAllDTypes);
  Value y = b.partner(x, x.dtype(), x.type.shape, false);
  Shape xy = *broadcastOf(x.type.shape, y.type.shape);
  uint8_t back = b.nextRef();
  std::optional<Value> cond;
  if (b.ch.below(2) == 0)
    cond = b.find(back, [&](const Value &v) {
      auto s = v.dtype() == DType::Bool ? broadcastOf(v.type.shape, xy) : std::nullopt;
      return s && elementsOf(*s) <= kMaxValueElements;
    });
  if (!cond)
    cond = b.source({DType::Bool, broadcastPartner(xy, false, b.ch)});
  b.emit1(op, {*cond, x, y}, {}, {x.dtype(), *broadcastOf(cond->type.shape, xy)});
}

void buildIsNaN(Builder &b, const std::string &op) {
  Value x = b.input(kFloatDTypes);
  b.emit1(op, {x}, {}, {DType::Bool, x.type.shape});
}

void buildIsInf(Builder &b, const std::string &op) {
  Value x = b.input(dtypeBit(DType::F32) | dtypeBit(DType::F64));
  AttrMap attrs;
  for (const char *name : {"detect_positive", "detect_negative"})
    if (b.ch.chance(30))
      attrs[name] = AttrValue::ofInt(b.ch.below(2));
  b.emit1(op, {x}, std::move(attrs), {DType::Bool, x.type.shape});
}

/// Cast from any dtype to any dtype (`to` as an identifier, sometimes a
/// string): the input is mostly of a chosen dtype (an earlier value, or
/// one cast to it), so that every pair of dtypes occurs.
void buildCast(Builder &b, const std::string &op) {
  const DType from = pickDType(kAllDTypes, b.ch.next());
  Value x = b.ch.chance(70) ? b.input(dtypeBit(from)) : b.any();
  DType to = pickDType(kAllDTypes, b.ch.next());
  AttrMap attrs;
  attrs["to"] = b.ch.chance(15) ? AttrValue::ofString(std::string(dtypeName(to))) : ident(to);
  b.emit1(op, {x}, std::move(attrs), {to, x.type.shape});
}

/// CastLike(x, like): like is an earlier value or a new source of any dtype.
void buildCastLike(Builder &b, const std::string &op) {
  Value x = b.any();
  Value like =
      b.ch.chance(40) ? b.source({pickDType(kAllDTypes, b.ch.next()), {b.ch.below(3)}}) : b.any();
  b.emit1(op, {x, like}, {}, {like.dtype(), x.type.shape});
}

constexpr CatalogueEntry kEntries[] = {
    {"Equal", buildCompare},
    {"Less", buildCompare},
    {"Greater", buildCompare},
    {"LessOrEqual", buildCompare},
    {"GreaterOrEqual", buildCompare},
    {"Not", buildNot},
    {"And", buildLogic},
    {"Or", buildLogic},
    {"Xor", buildLogic},
    {"Where", buildWhere},
    {"IsNaN", buildIsNaN},
    {"IsInf", buildIsInf},
    {"Cast", buildCast},
    {"CastLike", buildCastLike},
};

} // namespace

std::span<const CatalogueEntry> logicEntries() {
  return kEntries;
}

} // namespace graphvet::props::typed
