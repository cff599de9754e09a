// The strict grammar of the two memory-reuse options (semantics.md §4).
#include "passes/reuse_options.h"

#include <gtest/gtest.h>

namespace graphvet {
namespace {

using Pairs = std::set<std::pair<uint32_t, uint32_t>>;

TEST(ReuseOptions, OutputReusePairsWithSpaces) {
  std::string token, why;
  auto pairs = parseOutputReuseInputMemIndexes(" 0, 1 |2 ,3", token, why);
  ASSERT_TRUE(pairs);
  EXPECT_EQ(*pairs, (Pairs{{0, 1}, {2, 3}}));
}

TEST(ReuseOptions, EmptyValueGrantsNothingWithoutError) {
  std::string token, why;
  auto pairs = parseOutputReuseInputMemIndexes("  ", token, why);
  ASSERT_TRUE(pairs);
  EXPECT_TRUE(pairs->empty());
  auto inputs = parseInputReuseMemIndexes("", token, why);
  ASSERT_TRUE(inputs);
  EXPECT_TRUE(inputs->empty());
}

TEST(ReuseOptions, MalformedTokensAreNamed) {
  struct Case {
    const char *value;
    const char *token;
  };
  for (Case c : {Case{"0,a", "a"}, Case{"0,1,2", "0,1,2"}, Case{"0,1|", ""}, Case{"-1,0", "-1"},
                 Case{"+1,0", "+1"}, Case{"0,99999999999", "99999999999"}, Case{"0 1,2", "0 1"},
                 Case{"0;1", "0;1"}}) {
    std::string token, why;
    EXPECT_FALSE(parseOutputReuseInputMemIndexes(c.value, token, why)) << c.value;
    EXPECT_EQ(token, c.token) << c.value;
    EXPECT_FALSE(why.empty());
  }
}

TEST(ReuseOptions, InputReuseList) {
  std::string token, why;
  auto inputs = parseInputReuseMemIndexes("1, 0 ,7", token, why);
  ASSERT_TRUE(inputs);
  EXPECT_EQ(*inputs, (std::set<uint32_t>{0, 1, 7}));
  EXPECT_FALSE(parseInputReuseMemIndexes("1,,2", token, why));
  EXPECT_EQ(token, "");
  EXPECT_FALSE(parseInputReuseMemIndexes("1|2", token, why));
  EXPECT_EQ(token, "1|2");
}

TEST(ReuseOptions, MalformedOptionWarnsAndGrantsNothing) {
  std::map<std::string, std::string> options{
      {"ge.exec.outputReuseInputMemIndexes", "0,0|1,x"},
      {"ge.exec.inputReuseMemIndexes", "2"},
  };
  std::map<std::string, SourceLoc> locs{{"ge.exec.outputReuseInputMemIndexes", {3, 5}}};
  Diagnostics warnings;
  ReuseGrants g = readReuseGrants(options, locs, warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].severity, Severity::Warning);
  EXPECT_EQ(warnings[0].loc, (SourceLoc{3, 5}));
  EXPECT_NE(warnings[0].message.find("ge.exec.outputReuseInputMemIndexes"), std::string::npos);
  EXPECT_NE(warnings[0].message.find("'x'"), std::string::npos);
  EXPECT_TRUE(g.outputInputPairs.empty()); // not even the valid 0,0 pair
  EXPECT_EQ(g.reusableInputs, (std::set<uint32_t>{2}));
  EXPECT_TRUE(g.mentionsInput(2));
  EXPECT_FALSE(g.mentionsInput(0));
}

TEST(ReuseOptions, OutputsForInput) {
  ReuseGrants g;
  g.outputInputPairs = {{0, 1}, {2, 1}, {3, 0}};
  EXPECT_EQ(g.outputsFor(1), (std::set<uint32_t>{0, 2}));
  EXPECT_TRUE(g.mentionsInput(0));
  EXPECT_FALSE(g.mentionsInput(5));
}

} // namespace
} // namespace graphvet
