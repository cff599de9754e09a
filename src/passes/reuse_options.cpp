// Strict parsing of the memory-reuse options; see reuse_options.h.
#include "passes/reuse_options.h"

#include <vector>

namespace graphvet {
namespace {

constexpr uint64_t kMaxIndex = (uint64_t{1} << 31) - 1;

bool isBlank(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && isBlank(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && isBlank(s.back()))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

/// One number token: blanks, digits, blanks. Leading zeros are accepted (they
/// are still decimal); signs, other characters and overflow are not.
std::optional<uint32_t> parseIndex(std::string_view raw, std::string &badToken, std::string &why) {
  std::string_view t = trim(raw);
  if (t.empty()) {
    badToken = std::string(raw);
    why = "expected a non-negative decimal integer, found nothing";
    return std::nullopt;
  }
  uint64_t v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') {
      badToken = std::string(t);
      why = "expected a non-negative decimal integer";
      return std::nullopt;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
    if (v > kMaxIndex) {
      badToken = std::string(t);
      why = "index out of range";
      return std::nullopt;
    }
  }
  return static_cast<uint32_t>(v);
}

} // namespace

bool ReuseGrants::mentionsInput(uint32_t k) const {
  if (reusableInputs.count(k))
    return true;
  for (const auto &[j, input] : outputInputPairs)
    if (input == k)
      return true;
  return false;
}

std::set<uint32_t> ReuseGrants::outputsFor(uint32_t k) const {
  std::set<uint32_t> outs;
  for (const auto &[j, input] : outputInputPairs)
    if (input == k)
      outs.insert(j);
  return outs;
}

std::optional<std::set<std::pair<uint32_t, uint32_t>>>
parseOutputReuseInputMemIndexes(std::string_view value, std::string &badToken, std::string &why) {
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  if (trim(value).empty())
    return pairs;
  for (std::string_view pair : split(value, '|')) {
    std::vector<std::string_view> items = split(pair, ',');
    if (items.size() != 2) {
      badToken = std::string(trim(pair));
      why = "expected a pair `j,k`";
      return std::nullopt;
    }
    auto j = parseIndex(items[0], badToken, why);
    if (!j)
      return std::nullopt;
    auto k = parseIndex(items[1], badToken, why);
    if (!k)
      return std::nullopt;
    pairs.insert({*j, *k});
  }
  return pairs;
}

std::optional<std::set<uint32_t>>
parseInputReuseMemIndexes(std::string_view value, std::string &badToken, std::string &why) {
  std::set<uint32_t> inputs;
  if (trim(value).empty())
    return inputs;
  for (std::string_view item : split(value, ',')) {
    auto k = parseIndex(item, badToken, why);
    if (!k)
      return std::nullopt;
    inputs.insert(*k);
  }
  return inputs;
}

ReuseGrants readReuseGrants(const std::map<std::string, std::string> &options,
                            const std::map<std::string, SourceLoc> &optionLocs,
                            Diagnostics &warnings) {
  ReuseGrants grants;
  auto warn = [&](std::string_view key, const std::string &value, const std::string &token,
                  const std::string &why) {
    Diagnostic d;
    auto loc = optionLocs.find(std::string(key));
    if (loc != optionLocs.end())
      d.loc = loc->second;
    d.severity = Severity::Warning;
    d.message = "option " + std::string(key) + " = \"" + value + "\": bad token '" + token + "' (" +
                why + "); the option grants nothing";
    warnings.push_back(std::move(d));
  };
  std::string token, why;
  if (auto it = options.find(std::string(kOutputReuseInputMemIndexes)); it != options.end()) {
    if (auto pairs = parseOutputReuseInputMemIndexes(it->second, token, why))
      grants.outputInputPairs = std::move(*pairs);
    else
      warn(kOutputReuseInputMemIndexes, it->second, token, why);
  }
  if (auto it = options.find(std::string(kInputReuseMemIndexes)); it != options.end()) {
    if (auto inputs = parseInputReuseMemIndexes(it->second, token, why))
      grants.reusableInputs = std::move(*inputs);
    else
      warn(kInputReuseMemIndexes, it->second, token, why);
  }
  return grants;
}

} // namespace graphvet
