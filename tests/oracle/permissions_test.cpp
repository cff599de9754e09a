// The strict parser of the memory-reuse options (semantics.md §4).
#include "oracle/permissions.h"

#include <gtest/gtest.h>

namespace graphvet::oracle {
namespace {

Permissions parse(const std::string &outputReuse, const std::string &inputReuse = "") {
  std::map<std::string, std::string> o;
  if (!outputReuse.empty())
    o[kOutputReuseOption] = outputReuse;
  if (!inputReuse.empty())
    o[kInputReuseOption] = inputReuse;
  return parsePermissions(o);
}

TEST(Permissions, PairsWithSpaces) {
  Permissions p = parse(" 0 , 1 | 2,3");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(p.outputInput, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_TRUE(p.mayShare(0, 1));
  EXPECT_FALSE(p.mayShare(0, 0));
  EXPECT_FALSE(p.mayShare(1, 1));
  EXPECT_TRUE(p.inputUnspecified(1));
  EXPECT_TRUE(p.inputUnspecified(3));
  EXPECT_FALSE(p.inputUnspecified(0));
}

TEST(Permissions, InputList) {
  Permissions p = parse("", "2, 0");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.inputUnspecified(0));
  EXPECT_TRUE(p.inputUnspecified(2));
  EXPECT_FALSE(p.inputUnspecified(1));
  EXPECT_TRUE(p.mayShare(5, 2)); // any output may share a reusable input
}

TEST(Permissions, MalformedGrantsNothingAndNamesTheToken) {
  for (const char *bad :
       {"0,-1", "0;1", "0,1|", "a,b", "0,1,2", "0 1,2", "+1,2", "99999999999,0"}) {
    Permissions p = parse(bad);
    EXPECT_TRUE(p.outputInput.empty()) << bad;
    ASSERT_EQ(p.warnings.size(), 1u) << bad;
    EXPECT_NE(p.warnings[0].find(kOutputReuseOption), std::string::npos);
    EXPECT_NE(p.warnings[0].find("bad token"), std::string::npos);
  }
  Permissions p = parse("0,1", "1,x");
  EXPECT_EQ(p.outputInput.size(), 1u) << "the other option still counts";
  EXPECT_TRUE(p.reusableInputs.empty());
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("`x`"), std::string::npos) << p.warnings[0];
}

TEST(Permissions, EmptyValueGrantsNothingQuietly) {
  std::map<std::string, std::string> o{{kOutputReuseOption, "  "}, {kInputReuseOption, ""}};
  Permissions p = parsePermissions(o);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.outputInput.empty());
  EXPECT_TRUE(p.reusableInputs.empty());
}

} // namespace
} // namespace graphvet::oracle
