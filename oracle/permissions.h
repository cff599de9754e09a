// The memory-reuse options of semantics.md §4, parsed strictly and
// independently of any pass: which user inputs have unspecified content after
// a run, and which graph outputs may share memory with which inputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace graphvet::oracle {

inline constexpr const char *kOutputReuseOption = "ge.exec.outputReuseInputMemIndexes";
inline constexpr const char *kInputReuseOption = "ge.exec.inputReuseMemIndexes";

struct Permissions {
  std::vector<std::pair<int64_t, int64_t>> outputInput; ///< (graph output j, user input k)
  std::vector<int64_t> reusableInputs;                  ///< from inputReuseMemIndexes
  std::vector<std::string> warnings; ///< one per malformed option (which grants nothing)

  /// User input k's content after a run is unspecified.
  bool inputUnspecified(int64_t k) const;
  /// Graph output j may share memory with user input k.
  bool mayShare(int64_t output, int64_t input) const;
};

/// Parses both options from a module's option map. Grammar: non-negative
/// decimal integers, optional spaces (or tabs) around each token; pairs are
/// "j,k" separated by '|'; the input list is "k,k2,...". An empty or blank
/// value grants nothing without a warning.
Permissions parsePermissions(const std::map<std::string, std::string> &options);

} // namespace graphvet::oracle
