// The numeric contract a pass declares (tensor-semantics.md §7): `exact`
// results must equal the original's bit for bit (NaNs equal, indeterminate
// elements free); `approx` results may differ within the bound the check
// derives from the magnitudes behind each element (oracle/magnitude.h).
#pragma once

#include <optional>
#include <string_view>

namespace graphvet {

enum class NumericContract { Exact, Approx };

constexpr std::string_view contractName(NumericContract c) {
  return c == NumericContract::Exact ? "exact" : "approx";
}

constexpr std::optional<NumericContract> parseContract(std::string_view s) {
  if (s == "exact")
    return NumericContract::Exact;
  if (s == "approx")
    return NumericContract::Approx;
  return std::nullopt;
}

} // namespace graphvet
