// The target table: parsing (nlohmann-json, with FILE:LINE:COL errors) and
// the "is this node supported on target T" question.
#include "passes/targets.h"

#include "ir/op_def.h"

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace graphvet {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kFormat = "graphvet-targets-1";

/// "LINE:COL" (1-based) of byte offset `at` of `text`.
std::string lineCol(std::string_view text, size_t at) {
  at = std::min(at, text.size());
  size_t line = 1, col = 1;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("{}:{}", line, col);
}

/// Where the entry at `path` (object keys from the root) starts in `text`:
/// each key is searched, quoted, after the previous one. A table is a tree
/// of objects written in order, so this finds the entry unless a key's
/// spelling also occurs inside an earlier string; then the position is an
/// approximation (the message names the full path anyway).
size_t locate(std::string_view text, const std::vector<std::string> &path) {
  size_t at = 0;
  for (const std::string &key : path) {
    size_t found = text.find("\"" + key + "\"", at);
    if (found == std::string_view::npos)
      return at;
    at = found;
  }
  return at;
}

class TableParser {
public:
  TableParser(std::string_view text, const std::string &file, Diagnostics &errors)
      : text_(text), file_(file), errors_(errors) {}

  std::optional<TargetTable> parse() {
    Json root;
    try {
      root = Json::parse(text_.begin(), text_.end());
    } catch (const Json::parse_error &e) {
      // e.byte is 1-based: the offending character is at e.byte - 1.
      size_t at = e.byte > 0 ? e.byte - 1 : 0;
      std::string what = e.what();
      // nlohmann's message: "[json.exception.parse_error.101] parse error at
      // line L, column C: DETAIL"; keep the detail only.
      if (size_t colon = what.find(": "); colon != std::string::npos)
        what = what.substr(colon + 2);
      fail({}, fmt::format("malformed JSON: {}", what), at);
      return std::nullopt;
    }
    if (!root.is_object())
      return failed({}, "the table must be a JSON object with a \"targets\" object");
    for (const auto &[key, value] : root.items()) {
      if (key == "format") {
        if (!value.is_string() || value.get<std::string>() != kFormat)
          return failed({"format"}, fmt::format("\"format\" must be \"{}\"", kFormat));
      } else if (key != "targets") {
        return failed({key},
                      fmt::format("unknown key \"{}\" (expected \"format\", \"targets\")", key));
      }
    }
    auto targets = root.find("targets");
    if (targets == root.end() || !targets->is_object())
      return failed({}, "the table needs a \"targets\" object");
    TargetTable table;
    for (const auto &[name, value] : targets->items()) {
      Target t;
      t.name = name;
      if (!parseTarget(name, value, t))
        return std::nullopt;
      table.targets.emplace(name, std::move(t));
    }
    return table;
  }

private:
  bool parseTarget(const std::string &name, const Json &value, Target &t) {
    std::vector<std::string> path = {"targets", name};
    if (!value.is_object())
      return fail(path, fmt::format("target \"{}\" must be an object", name));
    for (const auto &[key, v] : value.items()) {
      if (key == "description") {
        if (!v.is_string())
          return fail({"targets", name, key}, "\"description\" must be a string");
        t.description = v.get<std::string>();
      } else if (key != "ops") {
        return fail({"targets", name, key},
                    fmt::format("unknown key \"{}\" in target \"{}\" (expected \"description\", "
                                "\"ops\")",
                                key, name));
      }
    }
    auto ops = value.find("ops");
    if (ops == value.end() || !ops->is_object())
      return fail(path, fmt::format("target \"{}\" needs an \"ops\" object", name));
    for (const auto &[op, spec] : ops->items()) {
      TargetOp o;
      if (!parseOp(name, op, spec, o))
        return false;
      t.ops.emplace(op, std::move(o));
    }
    return true;
  }

  bool parseOp(const std::string &target, const std::string &op, const Json &spec, TargetOp &o) {
    std::vector<std::string> path = {"targets", target, "ops", op};
    if (!spec.is_object())
      return fail(path, fmt::format("op \"{}\" must be an object ({{}} for no limit)", op));
    for (const auto &[key, v] : spec.items()) {
      std::vector<std::string> at = path;
      at.push_back(key);
      if (key == "dtypes") {
        if (!v.is_array() || v.empty())
          return fail(at, "\"dtypes\" must be a non-empty array of dtype names");
        for (const Json &d : v) {
          std::optional<DType> t = d.is_string() ? parseDType(d.get<std::string>()) : std::nullopt;
          if (!t)
            return fail(at, fmt::format("\"{}\" is not a dtype (bool, i8, u8, i16, u16, i32, "
                                        "u32, i64, u64, f16, bf16, f32, f64)",
                                        d.is_string() ? d.get<std::string>() : d.dump()));
          o.dtypes.insert(*t);
        }
      } else if (key == "channels_multiple_of") {
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (1 << 16))
          return fail(at, "\"channels_multiple_of\" must be an integer in [1, 65536]");
        o.channelsMultipleOf = v.get<int64_t>();
      } else {
        return fail(at, fmt::format("unknown key \"{}\" in op \"{}\" (expected \"dtypes\", "
                                    "\"channels_multiple_of\")",
                                    key, op));
      }
    }
    return true;
  }

  bool fail(const std::vector<std::string> &path, const std::string &message) {
    return fail(path, message, locate(text_, path));
  }
  bool fail(const std::vector<std::string> &path, const std::string &message, size_t at) {
    std::string where;
    for (const std::string &k : path)
      where += (where.empty() ? "" : ".") + k;
    Diagnostic d;
    d.message = fmt::format("{}:{}: {}{}", file_, lineCol(text_, at),
                            where.empty() ? "" : "at " + where + ": ", message);
    errors_.push_back(std::move(d));
    return false;
  }
  std::nullopt_t failed(const std::vector<std::string> &path, const std::string &message) {
    fail(path, message);
    return std::nullopt;
  }

  std::string_view text_;
  const std::string &file_;
  Diagnostics &errors_;
};

/// Conv's logical channel counts (C of X, M of W) from the physical shapes.
std::optional<std::pair<int64_t, int64_t>> convChannels(const Node &n, const TensorType *x,
                                                        const TensorType *w) {
  if (!x || !w || x->rank() < 3 || w->rank() != x->rank())
    return std::nullopt;
  bool nhwc = attrString(n, "layout", "NCHW") == "NHWC";
  int64_t c = nhwc ? x->shape.back() : x->shape[1];
  return std::pair{c, w->shape[0]};
}

} // namespace

bool Target::supportsOp(std::string_view op, DType dtype) const {
  auto it = ops.find(std::string(op));
  return it != ops.end() && (it->second.dtypes.empty() || it->second.dtypes.count(dtype) > 0);
}

std::optional<std::string>
Target::unsupportedReason(const Node &n, const std::vector<const TensorType *> &inputTypes) const {
  if (n.type == "Data" || n.type == "Const" || n.type == "NetOutput")
    return std::nullopt;
  auto it = ops.find(n.type);
  if (it == ops.end())
    return fmt::format("target {} has no {}", name, n.type);
  const TargetOp &o = it->second;
  const TensorType *x = inputTypes.empty() ? nullptr : inputTypes[0];
  if (!o.dtypes.empty()) {
    if (!x)
      return fmt::format("the dtype of {}'s input is unknown", n.name);
    if (!o.dtypes.count(x->dtype))
      return fmt::format("target {} has no {} of {}", name, n.type, dtypeName(x->dtype));
    if (n.type == "Cast")
      if (std::optional<DType> to = attrDType(n, "to"); to && !o.dtypes.count(*to))
        return fmt::format("target {} has no Cast to {}", name, dtypeName(*to));
  }
  if (o.channelsMultipleOf > 1 && n.type == "Conv") {
    auto ch = convChannels(n, x, inputTypes.size() > 1 ? inputTypes[1] : nullptr);
    if (!ch)
      return fmt::format("the channel counts of {} are unknown", n.name);
    if (ch->first % o.channelsMultipleOf != 0 || ch->second % o.channelsMultipleOf != 0)
      return fmt::format("target {} needs Conv channel counts that are multiples of {}, got {} "
                         "in and {} out",
                         name, o.channelsMultipleOf, ch->first, ch->second);
  }
  return std::nullopt;
}

const Target *TargetTable::find(std::string_view name) const {
  auto it = targets.find(std::string(name));
  return it == targets.end() ? nullptr : &it->second;
}

std::string TargetTable::names() const {
  std::string s;
  for (const auto &[name, t] : targets)
    s += (s.empty() ? "" : ", ") + name;
  return s;
}

std::optional<TargetTable> parseTargetTable(std::string_view text, const std::string &file,
                                            Diagnostics &errors) {
  return TableParser(text, file, errors).parse();
}

std::optional<TargetTable> loadTargetTable(const std::string &path, Diagnostics &errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Diagnostic d;
    d.message = fmt::format("{}: cannot read the targets file", path);
    errors.push_back(std::move(d));
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parseTargetTable(text.str(), path, errors);
}

const TargetTable &builtinTargetTable() {
  static const TargetTable table = [] {
    Diagnostics errors;
    std::optional<TargetTable> t =
        parseTargetTable(builtinTargetTableText(), "data/targets.json", errors);
    // The build's unit test parses the same text; a malformed shipped table
    // is a build defect, so an empty table stands in (every target unknown).
    return t ? std::move(*t) : TargetTable{};
  }();
  return table;
}

} // namespace graphvet
