// The simplify pass's rule table (docs/passes/simplify.md): the registry in
// the order the driver tries the rules, and the helpers the rule files
// share. The rows themselves are in simplify_rules_cast.cpp (casts),
// simplify_rules_arith.cpp (arithmetic identities and forwarding no-ops) and
// simplify_rules_shape.cpp (Transpose and the Reshape family). Kept as data so
// that the pass and `graphvet prove` read one table.
#include "ir/rewrite_rule.h"
#include "ir/simplify_rules_support.h"

#include <algorithm>
#include <deque>

namespace graphvet::rewrite {
namespace detail {

AttrValue dtypeAttr(DType t) {
  return AttrValue::ofIdent(std::string(dtypeName(t)));
}

std::optional<DType> boundDType(const Binding &b, const std::string &v) {
  auto it = b.attrs.find(v);
  if (it == b.attrs.end() || !it->second.isIdent())
    return std::nullopt;
  return parseDType(it->second.asIdent());
}

std::optional<int64_t> boundInt(const Binding &b, const std::string &v, int64_t def) {
  auto it = b.attrs.find(v);
  if (it == b.attrs.end())
    return def;
  if (!it->second.isInt())
    return std::nullopt;
  return it->second.asInt();
}

std::optional<std::vector<int64_t>> boundInts(const Binding &b, const std::string &v) {
  auto it = b.attrs.find(v);
  if (it == b.attrs.end() || !it->second.isList())
    return std::nullopt;
  std::vector<int64_t> out;
  for (const AttrValue &e : it->second.asList()) {
    if (!e.isInt())
      return std::nullopt;
    out.push_back(e.asInt());
  }
  return out;
}

std::optional<std::vector<int64_t>> constantInts(const Binding &b, const std::string &v) {
  auto it = b.constants.find(v);
  if (it == b.constants.end() || !it->second)
    return std::nullopt;
  const Tensor &t = *it->second;
  if ((t.dtype() != DType::I64 && t.dtype() != DType::I32) || t.shape().size() > 1 || t.anyUndef())
    return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.size(); ++i)
    out.push_back(t.getInt(i));
  return out;
}

const TensorType *operandType(const Binding &b, const std::string &v) {
  auto it = b.operands.find(v);
  return it == b.operands.end() ? nullptr : &it->second;
}

std::shared_ptr<const Tensor> i64Tensor(const std::vector<int64_t> &values) {
  auto t =
      std::make_shared<Tensor>(TensorType{DType::I64, Shape{static_cast<int64_t>(values.size())}});
  for (size_t i = 0; i < values.size(); ++i)
    t->setInt(static_cast<int64_t>(i), values[i]);
  return t;
}

std::string_view intern(std::string text) {
  static std::deque<std::string> storage; // deque: elements never move
  return storage.emplace_back(std::move(text));
}

std::string chainLabel(std::initializer_list<DType> ts) {
  std::string s;
  for (DType t : ts) {
    if (!s.empty())
      s += " -> ";
    s += dtypeName(t);
  }
  return s;
}

std::string listText(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(v[i]);
  }
  s += "]";
  return s;
}

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::optional<Shape> reshapeShape(const Shape &in, const std::vector<int64_t> &spec,
                                  bool allowZero) {
  int64_t total = 1;
  for (int64_t d : in)
    total *= d;
  Shape out;
  int64_t known = 1;
  std::optional<size_t> inferred;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allowZero) {
      if (i >= in.size())
        return std::nullopt;
      d = in[i];
    } else if (d == -1) {
      if (inferred)
        return std::nullopt;
      inferred = i;
      out.push_back(-1);
      continue;
    } else if (d < 0) {
      return std::nullopt;
    }
    out.push_back(d);
    known *= d;
  }
  if (inferred) {
    if (known == 0 || total % known != 0)
      return std::nullopt;
    out[*inferred] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return out;
}

std::optional<Shape> flattenShape(const Shape &in, int64_t axis) {
  int64_t rank = static_cast<int64_t>(in.size());
  if (axis < -rank || axis > rank)
    return std::nullopt;
  if (axis < 0)
    axis += rank;
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? rows : cols) *= in[static_cast<size_t>(i)];
  return Shape{rows, cols};
}

std::optional<Shape> squeezeShape(const Shape &in,
                                  const std::optional<std::vector<int64_t>> &axes) {
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (!axes) {
    for (size_t i = 0; i < in.size(); ++i)
      drop[i] = in[i] == 1;
  } else {
    for (int64_t a : *axes) {
      if (a < -rank || a >= rank)
        return std::nullopt;
      size_t k = static_cast<size_t>(a < 0 ? a + rank : a);
      if (in[k] != 1 || drop[k])
        return std::nullopt;
      drop[k] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i])
      out.push_back(in[i]);
  return out;
}

std::optional<Shape> unsqueezeShape(const Shape &in, const std::vector<int64_t> &axes) {
  int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return std::nullopt;
    size_t k = static_cast<size_t>(a < 0 ? a + rank : a);
    if (inserted[k])
      return std::nullopt;
    inserted[k] = true;
  }
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < inserted.size(); ++i)
    out.push_back(inserted[i] ? 1 : in[next++]);
  return out;
}

} // namespace detail

namespace {

std::vector<Rule> buildRules() {
  std::vector<Rule> rules;
  detail::addCastRules(rules);
  detail::addArithmeticRules(rules);
  detail::addForwardingRules(rules);
  detail::addTransposeRules(rules);
  detail::addReshapeRules(rules);
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
