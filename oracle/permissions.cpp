// Strict parser for the memory-reuse options (semantics.md §4).
#include "oracle/permissions.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <string_view>

namespace graphvet::oracle {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

/// A non-negative decimal integer below 2^31, or nullopt.
std::optional<int64_t> number(std::string_view raw) {
  std::string_view t = trim(raw);
  if (t.empty() || t.size() > 10)
    return std::nullopt;
  int64_t v = 0;
  for (char c : t) {
    if (c < '0' || c > '9')
      return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > INT32_MAX)
    return std::nullopt;
  return v;
}

std::string badToken(const char *option, std::string_view token, const char *why) {
  return fmt::format("option {}: bad token `{}` ({}); the option grants nothing", option,
                     std::string(token), why);
}

} // namespace

bool Permissions::inputUnspecified(int64_t k) const {
  if (std::find(reusableInputs.begin(), reusableInputs.end(), k) != reusableInputs.end())
    return true;
  return std::any_of(outputInput.begin(), outputInput.end(),
                     [&](const auto &p) { return p.second == k; });
}

bool Permissions::mayShare(int64_t output, int64_t input) const {
  if (std::find(reusableInputs.begin(), reusableInputs.end(), input) != reusableInputs.end())
    return true;
  return std::find(outputInput.begin(), outputInput.end(), std::make_pair(output, input)) !=
         outputInput.end();
}

Permissions parsePermissions(const std::map<std::string, std::string> &options) {
  Permissions p;
  if (auto it = options.find(kOutputReuseOption);
      it != options.end() && !trim(it->second).empty()) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    std::string warning;
    for (std::string_view group : split(it->second, '|')) {
      std::vector<std::string_view> tokens = split(group, ',');
      if (tokens.size() != 2) {
        warning = badToken(kOutputReuseOption, group, "expected a pair `output,input`");
        break;
      }
      auto j = number(tokens[0]), k = number(tokens[1]);
      if (!j || !k) {
        warning = badToken(kOutputReuseOption, !j ? tokens[0] : tokens[1],
                           "expected a non-negative decimal integer");
        break;
      }
      pairs.push_back({*j, *k});
    }
    if (warning.empty())
      p.outputInput = std::move(pairs);
    else
      p.warnings.push_back(std::move(warning));
  }
  if (auto it = options.find(kInputReuseOption); it != options.end() && !trim(it->second).empty()) {
    std::vector<int64_t> inputs;
    std::string warning;
    for (std::string_view token : split(it->second, ',')) {
      auto k = number(token);
      if (!k) {
        warning = badToken(kInputReuseOption, token, "expected a non-negative decimal integer");
        break;
      }
      inputs.push_back(*k);
    }
    if (warning.empty())
      p.reusableInputs = std::move(inputs);
    else
      p.warnings.push_back(std::move(warning));
  }
  return p;
}

} // namespace graphvet::oracle
