// Attribute readers, broadcasting, random streams and the one-node
// evaluation shared by the interpreter, constant folding and the tests.
#include "ir/op_def.h"

#include "ir/op_library.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <numbers>
#include <string_view>
#include <unordered_map>

namespace graphvet {

bool InferContext::fail(std::string message) {
  if (error.empty())
    error = std::move(message);
  return false;
}

namespace {

uint64_t splitmix(uint64_t &x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

} // namespace

RandomStream::RandomStream(uint64_t runSeed, std::string_view qualifiedName, uint64_t execution) {
  uint64_t h = 0xcbf29ce484222325ull; // FNV-1a of the name
  for (char c : qualifiedName)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  state_ = runSeed;
  splitmix(state_);
  state_ ^= h;
  splitmix(state_);
  state_ ^= execution * 0xd1b54a32d192ed03ull;
}

uint64_t RandomStream::next() {
  return splitmix(state_);
}

double RandomStream::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double RandomStream::normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 <= 0)
    u1 = 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

int64_t attrInt(const Node &n, const std::string &key, int64_t def) {
  const AttrValue *v = n.attr(key);
  if (!v)
    return def;
  if (v->isInt())
    return v->asInt();
  if (v->isBool())
    return v->asBool() ? 1 : 0;
  return def;
}

double attrFloat(const Node &n, const std::string &key, double def) {
  const AttrValue *v = n.attr(key);
  if (!v)
    return def;
  if (v->isFloat())
    return v->asFloat();
  if (v->isInt())
    return static_cast<double>(v->asInt());
  if (const std::string *t = v->text()) {
    if (*t == "inf")
      return INFINITY;
    if (*t == "-inf")
      return -INFINITY;
    if (*t == "nan")
      return NAN;
  }
  return def;
}

std::string attrString(const Node &n, const std::string &key, const std::string &def) {
  const AttrValue *v = n.attr(key);
  if (v && v->text())
    return *v->text();
  return def;
}

std::optional<std::vector<int64_t>> attrInts(const Node &n, const std::string &key) {
  const AttrValue *v = n.attr(key);
  if (!v)
    return std::nullopt;
  if (v->isInt())
    return std::vector<int64_t>{v->asInt()};
  if (!v->isList())
    return std::nullopt;
  std::vector<int64_t> out;
  for (const AttrValue &e : v->asList()) {
    if (!e.isInt())
      return std::nullopt;
    out.push_back(e.asInt());
  }
  return out;
}

std::optional<std::vector<double>> attrFloats(const Node &n, const std::string &key) {
  const AttrValue *v = n.attr(key);
  if (!v)
    return std::nullopt;
  auto one = [](const AttrValue &e) -> std::optional<double> {
    if (e.isFloat())
      return e.asFloat();
    if (e.isInt())
      return static_cast<double>(e.asInt());
    return std::nullopt;
  };
  if (!v->isList()) {
    auto d = one(*v);
    if (!d)
      return std::nullopt;
    return std::vector<double>{*d};
  }
  std::vector<double> out;
  for (const AttrValue &e : v->asList()) {
    auto d = one(e);
    if (!d)
      return std::nullopt;
    out.push_back(*d);
  }
  return out;
}

std::optional<DType> attrDType(const Node &n, const std::string &key) {
  const AttrValue *v = n.attr(key);
  if (!v || !v->text())
    return std::nullopt;
  return parseDType(*v->text());
}

const Tensor *attrTensor(const Node &n, const std::string &key) {
  const AttrValue *v = n.attr(key);
  return v && v->isTensor() ? &v->asTensor() : nullptr;
}

namespace {

enum class AttrKind { Float, Int, Ints, Floats, Text };

/// The kind of ONNX's numeric-op attributes by name: ONNX gives each name
/// one kind across the ops that use it, so one table serves every op (an
/// attribute the table does not name is left to the op's inference).
/// `layout` is absent on purpose: tensor-semantics.md §5's string differs
/// from LSTM's integer.
constexpr std::pair<std::string_view, AttrKind> kAttrKinds[] = {
    {"alpha", AttrKind::Float},
    {"beta", AttrKind::Float},
    {"gamma", AttrKind::Float},
    {"epsilon", AttrKind::Float},
    {"momentum", AttrKind::Float},
    {"lambd", AttrKind::Float},
    {"bias", AttrKind::Float},
    {"cubic_coeff_a", AttrKind::Float},
    {"extrapolation_value", AttrKind::Float},
    {"clip", AttrKind::Float},
    {"high", AttrKind::Float},
    {"low", AttrKind::Float},
    {"axis", AttrKind::Int},
    {"keepdims", AttrKind::Int},
    {"group", AttrKind::Int},
    {"transA", AttrKind::Int},
    {"transB", AttrKind::Int},
    {"training_mode", AttrKind::Int},
    {"exclusive", AttrKind::Int},
    {"reverse", AttrKind::Int},
    {"select_last_index", AttrKind::Int},
    {"ceil_mode", AttrKind::Int},
    {"count_include_pad", AttrKind::Int},
    {"allowzero", AttrKind::Int},
    {"noop_with_empty_axes", AttrKind::Int},
    {"storage_order", AttrKind::Int},
    {"blocksize", AttrKind::Int},
    {"fmod", AttrKind::Int},
    {"detect_negative", AttrKind::Int},
    {"detect_positive", AttrKind::Int},
    {"exclude_outside", AttrKind::Int},
    {"hidden_size", AttrKind::Int},
    {"input_forget", AttrKind::Int},
    {"pads", AttrKind::Ints},
    {"strides", AttrKind::Ints},
    {"dilations", AttrKind::Ints},
    {"kernel_shape", AttrKind::Ints},
    {"perm", AttrKind::Ints},
    {"axes", AttrKind::Ints},
    {"output_padding", AttrKind::Ints},
    {"output_shape", AttrKind::Ints},
    {"split", AttrKind::Ints},
    {"activation_alpha", AttrKind::Floats},
    {"activation_beta", AttrKind::Floats},
    {"mode", AttrKind::Text},
    {"auto_pad", AttrKind::Text},
    {"direction", AttrKind::Text},
    {"coordinate_transformation_mode", AttrKind::Text},
    {"nearest_mode", AttrKind::Text},
};

bool hasKind(const AttrValue &v, AttrKind k) {
  auto isNumber = [](const AttrValue &e) { return e.isFloat() || e.isInt(); };
  switch (k) {
  case AttrKind::Float:
    return isNumber(v) ||
           (v.isIdent() && (v.asIdent() == "inf" || v.asIdent() == "-inf" || v.asIdent() == "nan"));
  case AttrKind::Int:
    return v.isInt() || v.isBool();
  case AttrKind::Ints:
    return v.isInt() || (v.isList() && std::all_of(v.asList().begin(), v.asList().end(),
                                                   [](const AttrValue &e) { return e.isInt(); }));
  case AttrKind::Floats:
    return isNumber(v) ||
           (v.isList() && std::all_of(v.asList().begin(), v.asList().end(), isNumber));
  case AttrKind::Text:
    return v.text() != nullptr;
  }
  return true;
}

std::string_view kindName(AttrKind k) {
  switch (k) {
  case AttrKind::Float:
    return "a float";
  case AttrKind::Int:
    return "an integer";
  case AttrKind::Ints:
    return "a list of integers";
  case AttrKind::Floats:
    return "a list of floats";
  case AttrKind::Text:
    return "a string";
  }
  return "";
}

std::string_view valueKindName(const AttrValue &v) {
  if (v.isInt())
    return "an integer";
  if (v.isBool())
    return "a bool";
  if (v.isFloat())
    return "a float";
  if (v.isString())
    return "a string";
  if (v.isIdent())
    return "an identifier";
  if (v.isList())
    return "a list";
  return "a tensor";
}

} // namespace

std::optional<std::string> attributeKindError(const Node &n) {
  // Type inference asks this of every node in every pass: one hash lookup
  // per attribute instead of a scan of the table (its names are distinct).
  static const std::unordered_map<std::string_view, AttrKind> kinds(std::begin(kAttrKinds),
                                                                    std::end(kAttrKinds));
  for (const auto &[key, value] : n.attrs) {
    auto it = kinds.find(key);
    if (it != kinds.end() && !hasKind(value, it->second))
      return fmt::format("attribute '{}' of {} must be {}, got {}", key, n.type,
                         kindName(it->second), valueKindName(value));
  }
  return std::nullopt;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<Shape> broadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else
      return std::nullopt;
  }
  return out;
}

int64_t broadcastIndex(int64_t outIndex, std::span<const int64_t> outShape,
                       std::span<const int64_t> inShape) {
  int64_t in = 0, inStride = 1;
  size_t offset = outShape.size() - inShape.size();
  for (size_t i = outShape.size(); i-- > 0;) {
    int64_t coord = outIndex % outShape[i];
    outIndex /= outShape[i];
    if (i >= offset) {
      int64_t d = inShape[i - offset];
      if (d != 1)
        in += coord * inStride;
      inStride *= d;
    }
  }
  return in;
}

std::optional<std::vector<TensorType>>
inferNodeTypes(const Node &n, std::span<const std::optional<TensorType>> inputs,
               std::span<const Tensor *const> constants, std::string &error) {
  const OpInfo &op = lookupOp(n.type);
  if (!op.infer) {
    error = "op '" + n.type + "' has no type inference";
    return std::nullopt;
  }
  if (std::optional<std::string> bad = attributeKindError(n)) {
    error = *bad;
    return std::nullopt;
  }
  std::vector<const Tensor *> consts(inputs.size(), nullptr);
  for (size_t i = 0; i < consts.size() && i < constants.size(); ++i)
    consts[i] = constants[i];
  InferContext ctx{n, inputs, consts, {}, {}};
  if (!op.infer(ctx)) {
    error = ctx.error.empty() ? "type inference failed" : ctx.error;
    return std::nullopt;
  }
  return std::move(ctx.outputs);
}

std::optional<std::vector<Tensor>> evaluateNode(const Node &n,
                                                std::span<const Tensor *const> inputs,
                                                std::string &error, RandomStream *random,
                                                bool referenceLoops) {
  const OpInfo &op = lookupOp(n.type);
  if (!op.kernel) {
    error = "op '" + n.type + "' has no kernel";
    return std::nullopt;
  }
  std::vector<std::optional<TensorType>> types;
  for (const Tensor *t : inputs)
    types.push_back(t ? std::optional<TensorType>(t->type()) : std::nullopt);
  auto outTypes = inferNodeTypes(n, types, inputs, error);
  if (!outTypes)
    return std::nullopt;
  std::vector<Tensor> outs;
  for (TensorType &t : *outTypes)
    outs.emplace_back(std::move(t));
  KernelContext ctx{n, inputs, outs, random, referenceLoops};
  op.kernel(ctx);
  return outs;
}

} // namespace graphvet
