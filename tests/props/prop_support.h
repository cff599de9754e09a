// Running RapidCheck properties under GoogleTest with a fixed seed and a
// bounded number of cases. The seed and size come from RapidCheck's
// configuration, which prop_support.cpp defaults before first use (so a run
// is reproducible) while RC_PARAMS still overrides it; the number of cases is
// per property, scaled by GRAPHVET_PROP_CASES_PERCENT. Every property prints
// its seed and the command that replays it.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <iostream>
#include <sstream>
#include <string>

namespace graphvet::props::testing {

/// Cases to run for a property that asks for `requested`.
int scaledCases(int requested);
/// The command line that replays the current test with `seed`.
std::string replayCommand(uint64_t seed);

template <typename Testable> void checkProperty(int requestedCases, Testable &&testable) {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = scaledCases(requestedCases);
  std::cout << "[property] " << metadata.id << ": seed=" << params.seed
            << " cases=" << params.maxSuccess << " max_size=" << params.maxSize
            << "\n[property] replay: " << replayCommand(params.seed) << std::endl;
  const auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  if (result.template is<rc::detail::SuccessResult>()) {
    // RapidCheck's own summary: the count and the RC_TAG distribution, which
    // shows how many cases exercised what the property is about.
    rc::detail::printResultMessage(result, std::cout);
    std::cout << std::endl;
  } else {
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    FAIL() << ss.str() << "\nreplay: " << replayCommand(params.seed);
  }
}

} // namespace graphvet::props::testing

/// A RapidCheck property run as a GoogleTest test with `cases` cases.
#define GRAPHVET_PROP(Suite, Name, Cases, ArgList)                                                 \
  void graphvetProp_##Suite##_##Name ArgList;                                                      \
  TEST(Suite, Name) {                                                                              \
    ::graphvet::props::testing::checkProperty(Cases, &graphvetProp_##Suite##_##Name);              \
  }                                                                                                \
  void graphvetProp_##Suite##_##Name ArgList
