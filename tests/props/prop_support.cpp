// Fixed RapidCheck defaults for the property tests (seed, size), set before
// RapidCheck reads its configuration; RC_PARAMS given by the user is appended
// and so wins key by key.
#include "prop_support.h"

#include <algorithm>
#include <cstdlib>

namespace graphvet::props::testing {
namespace {

// Default seed and size of every property run (max_size <= 100 by house rule).
constexpr const char *kDefaults = "seed=20240917 max_size=80";

struct DefaultParams {
  DefaultParams() {
    std::string params = kDefaults;
    if (const char *user = std::getenv("RC_PARAMS"))
      params += std::string(" ") + user;
    setenv("RC_PARAMS", params.c_str(), 1);
  }
};
const DefaultParams defaultParams;

} // namespace

int scaledCases(int requested) {
  if (const char *pct = std::getenv("GRAPHVET_PROP_CASES_PERCENT")) {
    long p = std::strtol(pct, nullptr, 10);
    if (p > 0)
      return std::max(1, static_cast<int>(requested * p / 100));
  }
  return requested;
}

std::string replayCommand(uint64_t seed) {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto &argv = ::testing::internal::GetArgvs();
  std::string exe = argv.empty() ? "<test binary>" : argv[0];
  return "RC_PARAMS=\"seed=" + std::to_string(seed) + "\" " + exe +
         " --gtest_filter=" + info->test_suite_name() + "." + info->name();
}

} // namespace graphvet::props::testing
