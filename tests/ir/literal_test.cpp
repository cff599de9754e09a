// Format version 2: float attributes and tensor literals read exactly and
// print canonically, so that print(parse(x)) is a fixpoint bit for bit for
// every dtype (NaN payloads, -0, subnormals included), and malformed literals
// are errors at their position.
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace graphvet {
namespace {

std::string wrap(const std::string &value) {
  return "graph g {\n  c = Const() {value = " + value + "}\n  o = NetOutput(c)\n}\n";
}

const Tensor &valueOf(const Module &m) {
  return m.root().node(m.root().find("c")).attr("value")->asTensor();
}

/// Parses, prints, parses again and prints again: both prints are equal and
/// the tensors are bitwise equal.
void expectFixpoint(const std::string &text) {
  ParseResult a = parseModule(text);
  ASSERT_TRUE(a.module) << text << "\n" << (a.diagnostics.empty() ? "" : a.diagnostics[0].message);
  std::string printed = printModule(*a.module);
  ParseResult b = parseModule(printed);
  ASSERT_TRUE(b.module) << printed;
  EXPECT_EQ(printModule(*b.module), printed);
  const Tensor &x = valueOf(*a.module), &y = valueOf(*b.module);
  EXPECT_EQ(x.type(), y.type());
  EXPECT_TRUE(std::equal(x.bytes().begin(), x.bytes().end(), y.bytes().begin(), y.bytes().end()))
      << printed;
}

TEST(Literal, InlineElementsPrintShortest) {
  ParseResult r = parseModule(wrap("f32[2, 2] {1, 0.1, -0.0, 1e-45}"));
  ASSERT_TRUE(r.module);
  const Tensor &t = valueOf(*r.module);
  EXPECT_EQ(t.type().str(), "f32[2, 2]");
  EXPECT_EQ(t.getDouble(1), static_cast<double>(0.1f)) << "correctly rounded to f32";
  EXPECT_TRUE(std::signbit(t.getDouble(2)));
  EXPECT_GT(t.getDouble(3), 0.0) << "the smallest subnormal survives";
  EXPECT_NE(printModule(*r.module).find("f32[2, 2] {1, 0.1, -0, 1e-45}"), std::string::npos)
      << printModule(*r.module);
}

TEST(Literal, EveryDtypeIsAFixpoint) {
  expectFixpoint(wrap("bool[3] {1, 0, true}"));
  expectFixpoint(wrap("i8[3] {-128, 0, 127}"));
  expectFixpoint(wrap("u8[2] {0, 255}"));
  expectFixpoint(wrap("i16[2] {-32768, 32767}"));
  expectFixpoint(wrap("u16[2] {0, 65535}"));
  expectFixpoint(wrap("i32[2] {-2147483648, 2147483647}"));
  expectFixpoint(wrap("u32[1] {4294967295}"));
  expectFixpoint(wrap("i64[2] {-9223372036854775808, 9223372036854775807}"));
  expectFixpoint(wrap("u64[2] {0, 18446744073709551615}"));
  expectFixpoint(wrap("f16[5] {65504, -0.0, 5.96e-08, inf, nan}"));
  expectFixpoint(wrap("bf16[4] {3.390e38, 1.0078125, -inf, 9.2e-41}"));
  expectFixpoint(wrap("f32[4] {3.4028235e38, 1.17549435e-38, 1.4e-45, nan}"));
  expectFixpoint(wrap("f64[3] {1.7976931348623157e308, 5e-324, 0.1}"));
  expectFixpoint(wrap("f32[0] {}"));
  expectFixpoint(wrap("f32[] {2.5}"));
}

TEST(Literal, NaNPayloadsAndNegativeNaNUseHex) {
  // f32 NaN with a payload, then the negative quiet NaN: no decimal text
  // keeps their bits, so the printer writes the raw bytes.
  ParseResult r = parseModule(wrap("f32[2] hex \"010080ff0000c0ff\""));
  ASSERT_TRUE(r.module) << r.diagnostics[0].message;
  std::string printed = printModule(*r.module);
  EXPECT_NE(printed.find("f32[2] hex \"010080ff0000c0ff\""), std::string::npos) << printed;
  expectFixpoint(wrap("f32[2] hex \"010080ff0000c0ff\""));
  expectFixpoint(wrap("f16[1] hex \"017c\""));
}

TEST(Literal, SplatForRepeatedElements) {
  ParseResult r = parseModule(wrap("f16[2, 3] splat(0.5)"));
  ASSERT_TRUE(r.module);
  EXPECT_EQ(valueOf(*r.module).getDouble(5), 0.5);
  EXPECT_NE(printModule(*r.module).find("f16[2, 3] splat(0.5)"), std::string::npos);
  ParseResult s = parseModule(wrap("i32[3] {7, 7, 7}"));
  ASSERT_TRUE(s.module);
  EXPECT_NE(printModule(*s.module).find("i32[3] splat(7)"), std::string::npos);
}

TEST(Literal, FloatAttributesStayFloats) {
  ParseResult r = parseModule(
      "graph g {\n  x = Data() {index = 0}\n  y = LeakyRelu(x) {alpha = 1.0, beta = 0.1, "
      "gamma = 1e-05, delta = -inf}\n  o = NetOutput(y)\n}\n");
  ASSERT_TRUE(r.module) << r.diagnostics[0].message;
  const Node &n = r.module->root().node(r.module->root().find("y"));
  ASSERT_TRUE(n.attr("alpha")->isFloat());
  EXPECT_EQ(n.attr("alpha")->asFloat(), 1.0);
  EXPECT_EQ(n.attr("beta")->asFloat(), 0.1);
  std::string printed = printModule(*r.module);
  EXPECT_NE(printed.find("alpha = 1.0, beta = 0.1, delta = -inf, gamma = 1e-05"), std::string::npos)
      << printed;
}

TEST(Literal, SidecarRoundTrip) {
  auto dir = std::filesystem::temp_directory_path() / "graphvet_literal_test";
  std::filesystem::create_directories(dir);
  ParseResult r = parseModule(wrap("f32[300] splat(0.25)"));
  ASSERT_TRUE(r.module);
  // Make the elements differ so that the printer cannot splat them.
  auto &t = const_cast<Tensor &>(valueOf(*r.module));
  for (int64_t i = 0; i < t.size(); ++i)
    t.setDouble(i, static_cast<double>(i) / 8);
  std::string error;
  ASSERT_TRUE(writeModuleFile(*r.module, (dir / "m.graph").string(), error)) << error;
  std::ifstream in(dir / "m.graph");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("f32[300] file(\"m.weights\", 0)"), std::string::npos) << text;
  ParseResult back = parseFile((dir / "m.graph").string());
  ASSERT_TRUE(back.module) << back.diagnostics[0].message;
  EXPECT_EQ(valueOf(*back.module), t);
}

struct BadLiteral {
  std::string value;
  uint32_t col;
  std::string message;
};

TEST(Literal, MalformedLiteralsAreErrorsAtTheirPosition) {
  // The value starts at column 24 of line 2 in wrap().
  const BadLiteral cases[] = {
      {"f32[2] {1}", 24, "tensor literal f32[2] needs 2 elements, found 1"},
      {"f32[1] {1, 2}", 35, "tensor literal f32[1] has more than 1 elements"},
      {"i8[1] {128}", 31, "'128' is out of range for i8"},
      {"i32[1] {1.5}", 32, "'1.5' is not an integer of i32"},
      {"f32[1] hex \"00\"", 35, "tensor literal f32[1] needs 8 hex digits, found 2"},
      {"f32[1] hex \"zz000000\"", 35, "expected only hex digits in a hex tensor literal"},
      {"f32[-1] {}", 28, "expected a non-negative dimension, found integer -1"},
      {"f32[2] splat()", 37, "expected a number of f32, found ')'"},
      {"f32[2] zeros", 31, "expected '{', 'splat', 'hex' or 'file' after f32[2], found 'zeros'"},
      {"f32[4] file(\"missing.weights\", 0)", 36, "cannot read sidecar file 'missing.weights'"},
      {"f32[1000000000, 1000000000] splat(0)", 24,
       "tensor literal f32[1000000000, 1000000000] is larger than 268435456 bytes"},
  };
  for (const BadLiteral &c : cases) {
    ParseResult r = parseModule(wrap(c.value));
    ASSERT_FALSE(r.module) << c.value;
    ASSERT_EQ(r.diagnostics.size(), 1u) << c.value;
    EXPECT_EQ(r.diagnostics[0].loc.line, 2u) << c.value;
    EXPECT_EQ(r.diagnostics[0].loc.col, c.col) << c.value;
    EXPECT_EQ(r.diagnostics[0].message, c.message) << c.value;
  }
}

TEST(Literal, ShortSidecarIsAnError) {
  auto dir = std::filesystem::temp_directory_path() / "graphvet_literal_short";
  std::filesystem::create_directories(dir);
  {
    std::ofstream w(dir / "s.weights", std::ios::binary);
    w << "abcd";
  }
  {
    std::ofstream g(dir / "s.graph");
    g << wrap("f32[2] file(\"s.weights\", 0)");
  }
  ParseResult r = parseFile((dir / "s.graph").string());
  ASSERT_FALSE(r.module);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_NE(r.diagnostics[0].message.find("has fewer than 8 bytes at offset 0"), std::string::npos)
      << r.diagnostics[0].message;
}

} // namespace
} // namespace graphvet
