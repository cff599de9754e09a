// Table-driven test of the parser's diagnostics: every malformed input must
// be rejected with the exact line, column and message, and with exactly the
// expected number of errors (no cascades).
#include "ir/parser.h"

#include <gtest/gtest.h>

#include <cctype>
#include <iterator>
#include <set>
#include <string>

namespace graphvet {
namespace {

struct BadInput {
  const char *what;
  std::string text;
  uint32_t line, col;
  std::string message;
  size_t errors = 1; ///< total diagnostics expected
};

void PrintTo(const BadInput &b, std::ostream *os) {
  *os << b.what;
}

std::string nestedLists(int depth) {
  return "graph g {\n  x = A() {v = " + std::string(static_cast<size_t>(depth), '[') +
         std::string(static_cast<size_t>(depth), ']') + "}\n}\n";
}

const BadInput kBadInputs[] = {
    // --- lexical ---
    {"empty file", "", 1, 1, "expected at least one graph"},
    {"only a comment", "# nothing here\n", 2, 1, "expected at least one graph"},
    {"unterminated string", "graph \"g {}\n", 1, 7, "unterminated string"},
    {"invalid escape", "graph \"a\\qb\" {}\n", 1, 9, "invalid escape '\\q' in string"},
    {"integer too large", "graph g {\n  x = A() {v = 9223372036854775808}\n}\n", 2, 16,
     "integer out of range"},
    {"integer too small", "graph g {\n  x = A() {v = -9223372036854775809}\n}\n", 2, 16,
     "integer out of range"},
    {"unexpected character", "graph g {\n  x = A() @\n}\n", 2, 11, "unexpected character '@'"},
    {"lone minus", "graph g {\n  x = A() {v = - 1}\n}\n", 2, 16, "unexpected character '-'"},
    // --- top level ---
    {"junk at top level", "grph g {}\n", 1, 1, "expected 'graph' or 'options', found 'grph'"},
    {"graph without name", "graph {\n}\n", 1, 7, "expected graph name after 'graph', found '{'"},
    {"graph name is a keyword", "graph ctrl {\n}\n", 1, 7,
     "'ctrl' is a reserved keyword; write \"ctrl\" to use it as a name"},
    {"graph without brace", "graph g (\n}\n", 1, 9, "expected '{' after graph name 'g', found '('"},
    {"graph not closed", "graph g {\n  x = A() {index = 0\n}\n", 4, 1,
     "expected '}' to close graph 'g'"},
    {"graph not closed before next graph", "graph a {\n  x = A()\ngraph b {\n}\n", 3, 1,
     "expected '}' to close graph 'a' before 'graph'"},
    {"duplicate graph", "graph a {\n}\ngraph a {\n}\n", 3, 7, "duplicate graph 'a'"},
    // --- options ---
    {"options without brace", "options k = \"v\"\ngraph g {\n}\n", 1, 9,
     "expected '{' after 'options', found 'k'"},
    {"option value not a string", "options {\n  k = 1\n}\ngraph g {\n}\n", 2, 7,
     "expected a string value for option 'k', found integer 1"},
    {"option without '='", "options {\n  k \"v\"\n}\ngraph g {\n}\n", 2, 5,
     "expected '=' after option 'k', found a string"},
    {"duplicate option", "options {\n  a.b = \"1\"\n  a.b = \"2\"\n}\ngraph g {\n}\n", 3, 3,
     "duplicate option 'a.b'"},
    // --- statements ---
    {"statement starts with integer", "graph g {\n  1 = A()\n}\n", 2, 3,
     "expected a node or 'ctrl' statement, found integer 1"},
    {"node name is a keyword", "graph g {\n  true = A()\n}\n", 2, 3,
     "'true' is a reserved keyword; write \"true\" to use it as a name"},
    {"empty node name", "graph g {\n  \"\" = A()\n}\n", 2, 3, "node name must not be empty"},
    {"missing '=' after node name", "graph g {\n  x A()\n}\n", 2, 5,
     "expected '=' after node name 'x', found 'A'"},
    {"missing op type", "graph g {\n  x = ()\n}\n", 2, 7, "expected op type after '=', found '('"},
    {"missing '(' after op type", "graph g {\n  x = ReLU\n}\n", 3, 1,
     "expected '(' after op type, found '}'"},
    {"missing ')'", "graph g {\n  x = A()\n  y = ReLU(x\n}\n", 4, 1,
     "expected ',' or ')' after input, found '}'"},
    {"empty input", "graph g {\n  x = A()\n  y = Add(x, )\n}\n", 3, 14,
     "expected input name or '_', found ')'"},
    {"input is a keyword", "graph g {\n  y = Add(false)\n}\n", 2, 11,
     "'false' is a reserved keyword; write \"false\" to use it as a name"},
    {"port without index", "graph g {\n  x = A()\n  y = B(x:)\n}\n", 3, 11,
     "expected output index after ':', found ')'"},
    {"negative port", "graph g {\n  x = A()\n  y = B(x:-1)\n}\n", 3, 11,
     "output index -1 is negative"},
    {"huge port", "graph g {\n  x = A()\n  y = B(x:5000)\n}\n", 3, 11,
     "output index 5000 is too large (at most 1024 outputs)"},
    {"port on unconnected slot", "graph g {\n  y = B(_:1)\n}\n", 2, 10,
     "an unconnected input '_' cannot have an output index"},
    // --- attributes ---
    {"attribute without '='", "graph g {\n  x = A() {index 0}\n}\n", 2, 18,
     "expected '=' after attribute 'index', found integer 0"},
    {"attribute without value", "graph g {\n  x = A() {index = }\n}\n", 2, 20,
     "expected attribute value, found '}'"},
    {"attribute name missing", "graph g {\n  x = A() {= 1}\n}\n", 2, 12,
     "expected attribute name or '}', found '='"},
    {"attribute key ends in dot", "graph g {\n  x = A() {out0. = 1}\n}\n", 2, 18,
     "expected identifier after '.' in 'out0.', found '='"},
    {"attributes without comma", "graph g {\n  x = A() {a = 1 b = 2}\n}\n", 2, 18,
     "expected ',' or '}' after attribute 'a', found 'b'"},
    {"unclosed list", "graph g {\n  x = A() {s = [1, 2}\n}\n", 2, 21,
     "expected ',' or ']' after list element, found '}'"},
    {"list nested too deeply", nestedLists(65), 2, 80,
     "lists nested too deeply (at most 64 levels)"},
    {"duplicate attribute", "graph g {\n  x = Data() {index = 0, index = 1}\n}\n", 2, 26,
     "duplicate attribute 'index'"},
    {"outputs negative", "graph g {\n  x = A() {outputs = -1}\n}\n", 2, 22,
     "attribute 'outputs' must be an integer from 0 to 1024"},
    {"outputs not an integer", "graph g {\n  x = A() {outputs = two}\n}\n", 2, 22,
     "attribute 'outputs' must be an integer from 0 to 1024"},
    {"subgraphs not a list", "graph g {\n  p = PartitionedCall() {subgraphs = body}\n}\n", 2, 38,
     "attribute 'subgraphs' must be a list of graph names"},
    // --- control edges ---
    {"ctrl without arrow", "graph g {\n  a = A()\n  b = B()\n  ctrl a b\n}\n", 4, 10,
     "expected '->' after 'a' in control edge, found 'b'"},
    {"ctrl without target", "graph g {\n  a = A()\n  ctrl a ->\n}\n", 4, 1,
     "expected node name after '->', found '}'"},
    {"ctrl to unknown node", "graph g {\n  a = A()\n  ctrl a -> zz\n}\n", 3, 13,
     "unknown node 'zz'"},
    {"ctrl to itself", "graph g {\n  a = A()\n  ctrl a -> a\n}\n", 3, 3, "cycle through a -> a"},
    {"duplicate ctrl edge", "graph g {\n  a = A()\n  b = B()\n  ctrl a -> b\n  ctrl a -> b\n}\n", 5,
     3, "duplicate control edge a -> b"},
    // --- resolution ---
    {"unknown node", "graph g {\n  x = ReLU(foo)\n}\n", 2, 12, "unknown node 'foo'"},
    {"duplicate node", "graph g {\n  r = A()\n  r = B()\n}\n", 3, 3, "duplicate node 'r'"},
    {"port beyond explicit outputs", "graph g {\n  r = ReLU() {outputs = 1}\n  s = Add(r:3)\n}\n",
     3, 11, "input index 3 out of range for 'r' with 1 output"},
    {"unknown graph in subgraphs", "graph g {\n  p = PartitionedCall() {subgraphs = [body]}\n}\n",
     2, 39, "unknown graph 'body' in subgraphs"},
    {"root graph as subgraph", "graph g {\n  p = PartitionedCall() {subgraphs = [g]}\n}\n", 2, 39,
     "root graph 'g' cannot be a subgraph"},
    {"subgraph referenced twice",
     "graph g {\n"
     "  p = PartitionedCall() {subgraphs = [body]}\n"
     "  q = PartitionedCall() {subgraphs = [body]}\n"
     "}\n"
     "graph body {\n}\n",
     3, 39, "subgraph 'body' referenced twice"},
    // --- verifier, through the parser ---
    {"cycle", "graph g {\n  a = A(b)\n  b = B(a)\n}\n", 2, 3, "cycle through a -> b -> a"},
    {"cycle through a control edge", "graph g {\n  a = A()\n  b = B(a)\n  ctrl b -> a\n}\n", 2, 3,
     "cycle through a -> b -> a"},
    {"unconnected TensorMove", "graph g {\n  tm = TensorMove(_)\n}\n", 2, 3,
     "input of TensorMove 'tm' is not connected"},
    {"unreferenced subgraph", "graph g {\n}\ngraph lost {\n}\n", 3, 7,
     "subgraph 'lost' is not referenced by any node"},
    {"duplicate Data index", "graph g {\n  a = Data() {index = 0}\n  b = Data() {index = 0}\n}\n",
     3, 3, "duplicate Data index 0 (also on 'a')"},
    {"If with one branch", "graph g {\n  c = A()\n  i = If(c) {subgraphs = [t]}\n}\ngraph t {\n}\n",
     3, 3, "If 'i' needs 2 subgraphs (then, else), has 1"},
    {"subgraph Data without parent index",
     "graph g {\n  p = PartitionedCall() {subgraphs = [b], outputs = 0}\n}\n"
     "graph b {\n  d = Data()\n}\n",
     5, 3, "Data 'd' in subgraph 'b' has no _parent_node_index"},
};

class ParserErrorTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(ParserErrorTest, ReportsExactLocationAndMessage) {
  const BadInput &bad = GetParam();
  ParseResult r = parseModule(bad.text);
  EXPECT_FALSE(r.module.has_value());
  ASSERT_FALSE(r.diagnostics.empty());
  std::string all;
  for (const Diagnostic &d : r.diagnostics)
    all += d.format("t.graph") + "\n";
  EXPECT_EQ(r.diagnostics.size(), bad.errors) << all;
  const Diagnostic &d = r.diagnostics.front();
  EXPECT_EQ(d.loc.line, bad.line) << all;
  EXPECT_EQ(d.loc.col, bad.col) << all;
  EXPECT_EQ(d.message, bad.message) << all;
}

INSTANTIATE_TEST_SUITE_P(Table, ParserErrorTest, ::testing::ValuesIn(kBadInputs),
                         [](const ::testing::TestParamInfo<BadInput> &info) {
                           std::string name;
                           for (char c : std::string(info.param.what))
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(ParserErrorTable, HasAtLeast35DistinctCases) {
  std::set<std::string> texts;
  for (const BadInput &b : kBadInputs)
    texts.insert(b.text);
  EXPECT_EQ(texts.size(), std::size(kBadInputs)) << "duplicate inputs in the table";
  EXPECT_GE(texts.size(), 35u);
}

TEST(ParserErrors, FormatsAsFileLineColError) {
  std::string errors;
  auto m = parseOrReport("graph g {\n  x = ReLU(foo)\n}\n", "net.graph", errors);
  EXPECT_FALSE(m);
  EXPECT_EQ(errors, "net.graph:2:12: error: unknown node 'foo'\n");
}

TEST(ParserErrors, ReportsIndependentErrorsTogetherWithoutCascade) {
  // Three unrelated syntax errors in three statements, valid statements in
  // between: exactly three diagnostics, in source order.
  const char *text = "graph g {\n"
                     "  a = A(\n" // error 1: bad input list (spans lines)
                     "    , b)\n"
                     "  b = B()\n"
                     "  c = C() {x 1}\n" // error 2: missing '='
                     "  d = D(b)\n"
                     "  ctrl b c\n" // error 3: missing '->'
                     "  e = E(d)\n"
                     "}\n";
  ParseResult r = parseModule(text);
  ASSERT_EQ(r.diagnostics.size(), 3u);
  EXPECT_EQ(r.diagnostics[0].loc, (SourceLoc{3, 5}));
  EXPECT_EQ(r.diagnostics[0].message, "expected input name or '_', found ','");
  EXPECT_EQ(r.diagnostics[1].loc, (SourceLoc{5, 14}));
  EXPECT_EQ(r.diagnostics[1].message, "expected '=' after attribute 'x', found integer 1");
  EXPECT_EQ(r.diagnostics[2].loc, (SourceLoc{7, 10}));
  EXPECT_EQ(r.diagnostics[2].message, "expected '->' after 'b' in control edge, found 'c'");
}

TEST(ParserErrors, ReportsSeveralResolutionErrors) {
  ParseResult r = parseModule("graph g {\n  a = A(x)\n  b = B(y)\n  a = C()\n}\n");
  ASSERT_EQ(r.diagnostics.size(), 1u) << "duplicate node is a phase-1 error";
  EXPECT_EQ(r.diagnostics[0].message, "duplicate node 'a'");
  r = parseModule("graph g {\n  a = A(x)\n  b = B(y)\n}\n");
  ASSERT_EQ(r.diagnostics.size(), 2u);
  EXPECT_EQ(r.diagnostics[0].message, "unknown node 'x'");
  EXPECT_EQ(r.diagnostics[1].message, "unknown node 'y'");
  EXPECT_EQ(r.diagnostics[1].loc, (SourceLoc{3, 9}));
}

TEST(ParserErrors, ErrorInsideMultiLineAttributesRecoversAtNextStatement) {
  ParseResult r = parseModule("graph g {\n"
                              "  x = A() {\n"
                              "    index = 0,\n"
                              "    bad bad\n"
                              "  }\n"
                              "  y = B(x)\n"
                              "  y = B(x)\n"
                              "}\n");
  ASSERT_EQ(r.diagnostics.size(), 2u);
  EXPECT_EQ(r.diagnostics[0].message, "expected '=' after attribute 'bad', found 'bad'");
  EXPECT_EQ(r.diagnostics[1].message, "duplicate node 'y'");
  EXPECT_EQ(r.diagnostics[1].loc, (SourceLoc{7, 3}));
}

TEST(ParserErrors, MissingCloseParenRecoversAtNextNodeLine) {
  ParseResult r = parseModule("graph g {\n  x = A(\n  y = B()\n  z = C(y\n}\n");
  ASSERT_EQ(r.diagnostics.size(), 2u);
  EXPECT_EQ(r.diagnostics[0].loc, (SourceLoc{3, 5}));
  EXPECT_EQ(r.diagnostics[0].message, "expected ',' or ')' after input, found '='");
  EXPECT_EQ(r.diagnostics[1].loc, (SourceLoc{5, 1}));
}

TEST(ParserErrors, OneLineBlocksRecoverAtTheirClosingBrace) {
  ParseResult r = parseModule("options { a = 1 }\ngraph g { x = A(,) }\ngraph g {}\n");
  ASSERT_EQ(r.diagnostics.size(), 3u);
  EXPECT_EQ(r.diagnostics[0].message, "expected a string value for option 'a', found integer 1");
  EXPECT_EQ(r.diagnostics[1].message, "expected input name or '_', found ','");
  EXPECT_EQ(r.diagnostics[1].loc, (SourceLoc{2, 17}));
  EXPECT_EQ(r.diagnostics[2].message, "duplicate graph 'g'");
}

TEST(ParserErrors, LexicalErrorStopsTheParse) {
  ParseResult r = parseModule("graph g {\n  x = A() {s = \"abc}\n  y = B(\n}\n");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].message, "unterminated string");
  EXPECT_EQ(r.diagnostics[0].loc, (SourceLoc{2, 16}));
}

TEST(ParserErrors, ManyErrorsAreCapped) {
  std::string text = "graph g {\n";
  for (int i = 0; i < 1000; ++i)
    text += "  x = A(,)\n";
  text += "}\n";
  ParseResult r = parseModule(text);
  EXPECT_FALSE(r.module);
  EXPECT_LE(r.diagnostics.size(), 100u);
  EXPECT_GE(r.diagnostics.size(), 50u);
}

TEST(ParserErrors, DeepListsAtTheLimitParse) {
  ParseResult ok = parseModule(nestedLists(64));
  EXPECT_TRUE(ok.module.has_value()) << (ok.diagnostics.empty() ? "" : ok.diagnostics[0].message);
}

TEST(ParserErrors, UnreadableFileIsOneErrorWithoutLocation) {
  ParseResult r = parseFile("/nonexistent/dir/x.graph");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].loc, (SourceLoc{0, 0}));
  EXPECT_EQ(r.diagnostics[0].format("x.graph"),
            "x.graph: error: cannot read file '/nonexistent/dir/x.graph'");
}

} // namespace
} // namespace graphvet
