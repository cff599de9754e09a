// The `.graph` parser: a hand-written lexer and recursive-descent parser for
// the grammar of graph-format.md, followed by name resolution and the
// structural verifier. Three phases, each run only when the previous one was
// clean, so that one mistake is reported once instead of as a cascade:
//   1. syntax (with statement-level recovery) plus checks local to one
//      statement: duplicate nodes, graphs, attributes and options, attribute
//      value shapes of `outputs` and `subgraphs`;
//   2. resolution: node references, `name:k` ports, control edges, subgraph
//      lists;
//   3. verifyModule.
// Recursion is limited to nested attribute lists (capped at kMaxListDepth), and
// every loop consumes at least one token, so hostile input cannot hang it.
#include "ir/parser.h"

#include "ir/op_library.h"
#include "ir/printer.h"
#include "ir/tensor.h"
#include "ir/verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>

namespace graphvet {
namespace {

// ---------------------------------------------------------------------------
// Lexer

enum class Tok : uint8_t {
  Ident,
  String,
  Int,
  Float, ///< a float literal (text kept for exact rounding to the target dtype)
  LBrace,
  RBrace,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Equals,
  Arrow,
  Dot,
  End,
};

struct Token {
  Tok kind = Tok::End;
  SourceLoc loc;
  bool lineStart = false; ///< first token on its line
  std::string text;       ///< identifier name, unescaped string, or number text
  int64_t value = 0;      ///< integer value
  bool overflow = false;  ///< an integer literal outside int64 (an error where used as int)
};

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || (c >= '0' && c <= '9');
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

bool isKeyword(std::string_view s) {
  return s == "graph" || s == "options" || s == "ctrl" || s == "true" || s == "false";
}

std::string describeChar(unsigned char c) {
  if (c >= 0x21 && c < 0x7f && c != '\'')
    return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("'\\x{:02x}'", c);
}

/// Splits the whole text into tokens. Stops at the first lexical error (the
/// rest of the file cannot be tokenized reliably), reporting it in `diags`.
/// The returned vector always ends with an End token.
std::vector<Token> lex(std::string_view text, Diagnostics &diags) {
  std::vector<Token> toks;
  uint32_t line = 1, col = 1;
  bool lineStart = true;
  size_t i = 0;
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n && i < text.size(); ++k, ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  auto error = [&](SourceLoc loc, std::string msg) { diags.push_back({loc, std::move(msg)}); };
  while (i < text.size()) {
    char c = text[i];
    if (c == '\n') {
      advance(1);
      lineStart = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      advance(1);
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n')
        advance(1);
      continue;
    }
    Token t;
    t.loc = {line, col};
    t.lineStart = lineStart;
    lineStart = false;
    auto punct = [&](Tok k, size_t n) {
      t.kind = k;
      advance(n);
      toks.push_back(std::move(t));
    };
    switch (c) {
    case '{':
      punct(Tok::LBrace, 1);
      continue;
    case '}':
      punct(Tok::RBrace, 1);
      continue;
    case '(':
      punct(Tok::LParen, 1);
      continue;
    case ')':
      punct(Tok::RParen, 1);
      continue;
    case '[':
      punct(Tok::LBracket, 1);
      continue;
    case ']':
      punct(Tok::RBracket, 1);
      continue;
    case ',':
      punct(Tok::Comma, 1);
      continue;
    case ':':
      punct(Tok::Colon, 1);
      continue;
    case '=':
      punct(Tok::Equals, 1);
      continue;
    case '.':
      punct(Tok::Dot, 1);
      continue;
    default:
      break;
    }
    if (c == '-' && i + 1 < text.size() && text[i + 1] == '>') {
      punct(Tok::Arrow, 2);
      continue;
    }
    if (isIdentStart(c)) {
      size_t j = i;
      while (j < text.size() && isIdentChar(text[j]))
        ++j;
      t.kind = Tok::Ident;
      t.text = std::string(text.substr(i, j - i));
      advance(j - i);
      toks.push_back(std::move(t));
      continue;
    }
    if (c == '-' && text.substr(i, 4) == "-inf" &&
        (i + 4 >= text.size() || !isIdentChar(text[i + 4]))) {
      t.kind = Tok::Float;
      t.text = "-inf";
      advance(4);
      toks.push_back(std::move(t));
      continue;
    }
    if (isDigit(c) || (c == '-' && i + 1 < text.size() && isDigit(text[i + 1]))) {
      bool negative = c == '-';
      size_t j = negative ? i + 1 : i;
      // Accumulate the magnitude; 2^63 is allowed only for a negative value.
      uint64_t magnitude = 0;
      bool overflow = false;
      constexpr uint64_t kLimit = uint64_t{1} << 63;
      while (j < text.size() && isDigit(text[j])) {
        uint64_t d = static_cast<uint64_t>(text[j] - '0');
        if (magnitude > (kLimit - d) / 10)
          overflow = true;
        else
          magnitude = magnitude * 10 + d;
        ++j;
      }
      // A fraction or an exponent makes it a float (graph-format.md v2).
      bool isFloatLit = false;
      if (j < text.size() && text[j] == '.') {
        isFloatLit = true;
        ++j;
        while (j < text.size() && isDigit(text[j]))
          ++j;
      }
      if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
        size_t k = j + 1;
        if (k < text.size() && (text[k] == '+' || text[k] == '-'))
          ++k;
        if (k < text.size() && isDigit(text[k])) {
          isFloatLit = true;
          j = k;
          while (j < text.size() && isDigit(text[j]))
            ++j;
        }
      }
      t.text = std::string(text.substr(i, j - i));
      if (isFloatLit) {
        t.kind = Tok::Float;
      } else {
        t.kind = Tok::Int;
        t.overflow = overflow || (!negative && magnitude == kLimit);
        t.value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
      }
      advance(j - i);
      toks.push_back(std::move(t));
      continue;
    }
    if (c == '"') {
      advance(1);
      std::string s;
      bool closed = false, bad = false;
      while (i < text.size()) {
        char d = text[i];
        if (d == '"') {
          advance(1);
          closed = true;
          break;
        }
        if (d == '\\') {
          SourceLoc escLoc{line, col};
          if (i + 1 >= text.size())
            break;
          char e = text[i + 1];
          char out = e == '"' ? '"' : e == '\\' ? '\\' : e == 'n' ? '\n' : e == 't' ? '\t' : 0;
          if (!out) {
            bool printable = e > 0x20 && e < 0x7f;
            error(escLoc, printable ? fmt::format("invalid escape '\\{}' in string", e)
                                    : std::string("invalid escape in string"));
            bad = true;
            break;
          }
          s += out;
          advance(2);
          continue;
        }
        s += d;
        advance(1);
      }
      if (bad)
        break;
      if (!closed) {
        error(t.loc, "unterminated string");
        break;
      }
      t.kind = Tok::String;
      t.text = std::move(s);
      toks.push_back(std::move(t));
      continue;
    }
    error(t.loc,
          fmt::format("unexpected character {}", describeChar(static_cast<unsigned char>(c))));
    break;
  }
  Token end;
  end.kind = Tok::End;
  end.loc = {line, col};
  end.lineStart = true;
  toks.push_back(std::move(end));
  return toks;
}

std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Ident:
    return fmt::format("'{}'", t.text);
  case Tok::String:
    return "a string";
  case Tok::Int:
    return fmt::format("integer {}", t.text);
  case Tok::Float:
    return fmt::format("number {}", t.text);
  case Tok::LBrace:
    return "'{'";
  case Tok::RBrace:
    return "'}'";
  case Tok::LParen:
    return "'('";
  case Tok::RParen:
    return "')'";
  case Tok::LBracket:
    return "'['";
  case Tok::RBracket:
    return "']'";
  case Tok::Comma:
    return "','";
  case Tok::Colon:
    return "':'";
  case Tok::Equals:
    return "'='";
  case Tok::Arrow:
    return "'->'";
  case Tok::Dot:
    return "'.'";
  case Tok::End:
    return "end of file";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Syntax tree of one file (phase 1 output)

struct PInput {
  SourceLoc loc;
  bool unconnected = false;
  std::string name;
  uint32_t port = 0;
};

struct PAttr {
  std::string key;
  SourceLoc keyLoc, valueLoc;
  AttrValue value;
  std::vector<SourceLoc> elemLocs; ///< locations of top-level list elements
};

struct PNode {
  std::string name;
  SourceLoc loc;
  std::string type;
  std::vector<PInput> inputs;
  std::vector<PAttr> attrs;
  std::optional<uint32_t> explicitOutputs;
};

struct PCtrl {
  std::string from, to;
  SourceLoc loc, fromLoc, toLoc;
};

struct PGraph {
  std::string name;
  SourceLoc loc;
  std::vector<PNode> nodes;
  std::vector<PCtrl> ctrls;
};

constexpr size_t kMaxDiagnostics = 100;

/// A float attribute's text as the nearest double (attributes are doubles).
double parseDoubleText(const std::string &text) {
  if (text == "nan")
    return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf")
    return std::numeric_limits<double>::infinity();
  if (text == "-inf")
    return -std::numeric_limits<double>::infinity();
  return std::strtod(text.c_str(), nullptr);
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

// ---------------------------------------------------------------------------
// Parser

class Parser {
public:
  Parser(std::vector<Token> toks, Diagnostics &diags, std::string baseDir)
      : toks_(std::move(toks)), baseDir_(std::move(baseDir)), diags_(diags) {}

  void parseFile() {
    while (!at(Tok::End) && !tooMany()) {
      const Token &t = cur();
      if (isKw(t, "graph")) {
        parseGraph();
      } else if (isKw(t, "options")) {
        parseOptions();
      } else {
        error(t.loc, fmt::format("expected 'graph' or 'options', found {}", describe(t)));
        skipToTopLevel();
      }
    }
    if (graphs_.empty() && !hasErrors(diags_))
      error(cur().loc, "expected at least one graph");
  }

  std::vector<PGraph> graphs_;
  std::map<std::string, std::string> options_;
  std::map<std::string, SourceLoc> optionLocs_;

private:
  /// Thrown-free error signalling: parse functions return false after
  /// reporting; the statement loop then recovers.
  const Token &cur() const { return toks_[pos_]; }
  const Token &peek(size_t k = 1) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  bool at(Tok k) const { return cur().kind == k; }
  static bool isKw(const Token &t, std::string_view kw) {
    return t.kind == Tok::Ident && t.text == kw;
  }
  void next() {
    if (pos_ + 1 < toks_.size())
      ++pos_;
  }
  void error(SourceLoc loc, std::string msg) {
    if (diags_.size() < kMaxDiagnostics)
      diags_.push_back({loc, std::move(msg)});
  }
  bool tooMany() const { return diags_.size() >= kMaxDiagnostics; }

  /// Top-level recovery: skip to the next `graph` or `options` keyword that
  /// starts a line.
  void skipToTopLevel() {
    next();
    while (!at(Tok::End) && !(cur().lineStart && (isKw(cur(), "graph") || isKw(cur(), "options"))))
      next();
  }

  /// Statement-level recovery after an error at the current token. `open_`
  /// holds the brackets the failed statement opened and did not close. Skips
  /// to a token that can begin the next statement: at bracket depth 0, a line
  /// starting with a name followed by '=' or with 'ctrl', or a '}' that closes
  /// the enclosing block; at any depth, a line starting with 'graph',
  /// 'options' or a complete `name = Type(`. Always makes progress past
  /// `stmtStart`.
  void recover(size_t stmtStart, bool optionsBlock) {
    if (pos_ <= stmtStart)
      pos_ = stmtStart + 1;
    std::string open = open_;
    for (; !at(Tok::End); next()) {
      const Token &t = cur();
      if (t.lineStart) {
        if (isKw(t, "graph") || isKw(t, "options"))
          return;
        bool nameStart = t.kind == Tok::String || (t.kind == Tok::Ident && !isKeyword(t.text));
        bool strongNode = !optionsBlock && nameStart && peek().kind == Tok::Equals &&
                          peek(2).kind == Tok::Ident && peek(3).kind == Tok::LParen;
        if (strongNode)
          return;
        if (open.empty()) {
          if (nameStart && peek().kind == Tok::Equals)
            return;
          if (!optionsBlock && isKw(t, "ctrl"))
            return;
        }
      }
      char closer = t.kind == Tok::RBrace     ? '{'
                    : t.kind == Tok::RParen   ? '('
                    : t.kind == Tok::RBracket ? '['
                                              : 0;
      if (t.kind == Tok::LBrace || t.kind == Tok::LParen || t.kind == Tok::LBracket) {
        open += t.kind == Tok::LBrace ? '{' : t.kind == Tok::LParen ? '(' : '[';
      } else if (closer) {
        // A closer pops up to its matching opener; a '}' without one closes
        // the enclosing block, which ends the skip.
        size_t match = open.rfind(closer);
        if (match != std::string::npos)
          open.resize(match);
        else if (closer == '{')
          return;
      }
    }
  }

  /// A node or graph name: identifier (not a keyword) or non-empty string.
  bool parseName(std::string &out, SourceLoc &loc, const char *what, const char *context) {
    const Token &t = cur();
    loc = t.loc;
    if (t.kind == Tok::Ident) {
      if (isKeyword(t.text)) {
        error(t.loc, fmt::format("'{}' is a reserved keyword; write \"{}\" to use it as a name",
                                 t.text, t.text));
        return false;
      }
      out = t.text;
      next();
      return true;
    }
    if (t.kind == Tok::String) {
      if (t.text.empty()) {
        error(t.loc, fmt::format("{} must not be empty", what));
        return false;
      }
      out = t.text;
      next();
      return true;
    }
    error(t.loc, fmt::format("expected {} {}, found {}", what, context, describe(t)));
    return false;
  }

  void parseOptions() {
    next(); // 'options'
    if (!at(Tok::LBrace)) {
      error(cur().loc, fmt::format("expected '{{' after 'options', found {}", describe(cur())));
      skipToTopLevel();
      return;
    }
    next();
    while (!tooMany()) {
      const Token &t = cur();
      if (t.kind == Tok::RBrace) {
        next();
        return;
      }
      if (t.kind == Tok::End) {
        error(t.loc, "expected '}' to close 'options'");
        return;
      }
      if (t.lineStart && (isKw(t, "graph") || isKw(t, "options"))) {
        error(t.loc, fmt::format("expected '}}' to close 'options' before '{}'", t.text));
        return;
      }
      size_t start = pos_;
      if (!parseOption())
        recover(start, /*optionsBlock=*/true);
    }
  }

  bool parseOption() {
    std::string key;
    SourceLoc keyLoc = cur().loc;
    if (!parseKey(key, "option name or '}'"))
      return false;
    if (!at(Tok::Equals)) {
      error(cur().loc,
            fmt::format("expected '=' after option '{}', found {}", key, describe(cur())));
      return false;
    }
    next();
    if (!at(Tok::String)) {
      error(cur().loc,
            fmt::format("expected a string value for option '{}', found {}", key, describe(cur())));
      return false;
    }
    if (options_.count(key)) {
      error(keyLoc, fmt::format("duplicate option '{}'", key));
    } else {
      options_[key] = cur().text;
      optionLocs_[key] = keyLoc;
    }
    next();
    return true;
  }

  /// key := ident ('.' ident)*
  bool parseKey(std::string &key, const char *expected) {
    if (!at(Tok::Ident)) {
      error(cur().loc, fmt::format("expected {}, found {}", expected, describe(cur())));
      return false;
    }
    key = cur().text;
    next();
    while (at(Tok::Dot)) {
      next();
      if (!at(Tok::Ident)) {
        error(cur().loc, fmt::format("expected identifier after '.' in '{}.', found {}", key,
                                     describe(cur())));
        return false;
      }
      key += '.';
      key += cur().text;
      next();
    }
    return true;
  }

  void parseGraph() {
    next(); // 'graph'
    PGraph g;
    if (!parseName(g.name, g.loc, "graph name", "after 'graph'")) {
      skipToTopLevel();
      return;
    }
    if (!at(Tok::LBrace)) {
      error(cur().loc,
            fmt::format("expected '{{' after graph name '{}', found {}", g.name, describe(cur())));
      skipToTopLevel();
      return;
    }
    next();
    bool duplicate = !graphNames_.insert(g.name).second;
    if (duplicate)
      error(g.loc, fmt::format("duplicate graph '{}'", g.name));
    std::unordered_set<std::string> nodeNames;
    while (!tooMany()) {
      const Token &t = cur();
      if (t.kind == Tok::RBrace) {
        next();
        break;
      }
      if (t.kind == Tok::End) {
        error(t.loc, fmt::format("expected '}}' to close graph '{}'", g.name));
        break;
      }
      if (isKw(t, "graph") || isKw(t, "options")) {
        error(t.loc, fmt::format("expected '}}' to close graph '{}' before '{}'", g.name, t.text));
        break;
      }
      size_t start = pos_;
      bool ok;
      if (isKw(t, "ctrl")) {
        ok = parseCtrl(g);
      } else if (t.kind == Tok::Ident || t.kind == Tok::String) {
        ok = parseNode(g, nodeNames);
      } else {
        error(t.loc, fmt::format("expected a node or 'ctrl' statement, found {}", describe(t)));
        ok = false;
      }
      if (!ok)
        recover(start, /*optionsBlock=*/false);
      open_.clear();
    }
    if (!duplicate)
      graphs_.push_back(std::move(g));
  }

  bool parseCtrl(PGraph &g) {
    PCtrl c;
    c.loc = cur().loc;
    next(); // 'ctrl'
    if (!parseName(c.from, c.fromLoc, "node name", "after 'ctrl'"))
      return false;
    if (!at(Tok::Arrow)) {
      error(cur().loc, fmt::format("expected '->' after '{}' in control edge, found {}", c.from,
                                   describe(cur())));
      return false;
    }
    next();
    if (!parseName(c.to, c.toLoc, "node name", "after '->'"))
      return false;
    g.ctrls.push_back(std::move(c));
    return true;
  }

  bool parseNode(PGraph &g, std::unordered_set<std::string> &nodeNames) {
    PNode n;
    if (!parseName(n.name, n.loc, "node name", "at start of statement"))
      return false;
    if (!at(Tok::Equals)) {
      error(cur().loc,
            fmt::format("expected '=' after node name '{}', found {}", n.name, describe(cur())));
      return false;
    }
    next();
    if (!at(Tok::Ident)) {
      error(cur().loc, fmt::format("expected op type after '=', found {}", describe(cur())));
      return false;
    }
    n.type = cur().text;
    next();
    if (!at(Tok::LParen)) {
      error(cur().loc, fmt::format("expected '(' after op type, found {}", describe(cur())));
      return false;
    }
    next();
    open_.assign(1, '(');
    if (!at(Tok::RParen)) {
      while (true) {
        if (!parseInput(n))
          return false;
        if (at(Tok::Comma)) {
          next();
          continue;
        }
        if (at(Tok::RParen))
          break;
        error(cur().loc, fmt::format("expected ',' or ')' after input, found {}", describe(cur())));
        return false;
      }
    }
    next(); // ')'
    open_.clear();
    if (at(Tok::LBrace) && !parseAttrs(n))
      return false;
    if (!nodeNames.insert(n.name).second) {
      error(n.loc, fmt::format("duplicate node '{}'", n.name));
      return true; // the statement itself was well formed
    }
    g.nodes.push_back(std::move(n));
    return true;
  }

  bool parseInput(PNode &n) {
    const Token &t = cur();
    PInput in;
    in.loc = t.loc;
    if (t.kind == Tok::Ident && t.text == "_") {
      in.unconnected = true;
      next();
      if (at(Tok::Colon)) {
        error(cur().loc, "an unconnected input '_' cannot have an output index");
        return false;
      }
      n.inputs.push_back(std::move(in));
      return true;
    }
    if (t.kind != Tok::Ident && t.kind != Tok::String) {
      error(t.loc, fmt::format("expected input name or '_', found {}", describe(t)));
      return false;
    }
    SourceLoc loc;
    if (!parseName(in.name, loc, "input name", ""))
      return false;
    if (at(Tok::Colon)) {
      next();
      if (!at(Tok::Int)) {
        error(cur().loc, fmt::format("expected output index after ':', found {}", describe(cur())));
        return false;
      }
      if (cur().overflow) {
        error(cur().loc, "integer out of range");
        return false;
      }
      int64_t v = cur().value;
      if (v < 0) {
        error(cur().loc, fmt::format("output index {} is negative", v));
        return false;
      }
      if (v >= static_cast<int64_t>(kMaxOutputs)) {
        error(cur().loc,
              fmt::format("output index {} is too large (at most {} outputs)", v, kMaxOutputs));
        return false;
      }
      in.port = static_cast<uint32_t>(v);
      next();
    }
    n.inputs.push_back(std::move(in));
    return true;
  }

  bool parseAttrs(PNode &n) {
    next(); // '{'
    open_.assign(1, '{');
    std::set<std::string> seen;
    while (!at(Tok::RBrace)) {
      PAttr a;
      a.keyLoc = cur().loc;
      if (!parseKey(a.key, "attribute name or '}'"))
        return false;
      if (!at(Tok::Equals)) {
        error(cur().loc,
              fmt::format("expected '=' after attribute '{}', found {}", a.key, describe(cur())));
        return false;
      }
      next();
      a.valueLoc = cur().loc;
      if (!parseValue(a.value, 0, &a.elemLocs))
        return false;
      std::string key = a.key;
      if (!seen.insert(a.key).second) {
        error(a.keyLoc, fmt::format("duplicate attribute '{}'", a.key));
      } else if (checkSpecialAttr(n, a)) {
        n.attrs.push_back(std::move(a));
      }
      if (at(Tok::Comma)) {
        next();
        continue;
      }
      if (!at(Tok::RBrace)) {
        error(cur().loc, fmt::format("expected ',' or '}}' after attribute '{}', found {}", key,
                                     describe(cur())));
        return false;
      }
    }
    next(); // '}'
    open_.clear();
    return true;
  }

  /// Validates the shape of `outputs` and `subgraphs`; returns false (after
  /// reporting) when the attribute is malformed.
  bool checkSpecialAttr(PNode &n, const PAttr &a) {
    if (a.key == "outputs") {
      if (!a.value.isInt() || a.value.asInt() < 0 ||
          a.value.asInt() > static_cast<int64_t>(kMaxOutputs)) {
        error(a.valueLoc,
              fmt::format("attribute 'outputs' must be an integer from 0 to {}", kMaxOutputs));
        return false;
      }
      n.explicitOutputs = static_cast<uint32_t>(a.value.asInt());
    } else if (a.key == "subgraphs") {
      bool ok = a.value.isList();
      if (ok)
        for (const AttrValue &v : a.value.asList())
          if (!(v.isIdent() || (v.isString() && !v.asString().empty())))
            ok = false;
      if (!ok) {
        error(a.valueLoc, "attribute 'subgraphs' must be a list of graph names");
        return false;
      }
    }
    return true;
  }

  bool parseValue(AttrValue &out, int depth, std::vector<SourceLoc> *elemLocs) {
    const Token &t = cur();
    switch (t.kind) {
    case Tok::Int:
      if (t.overflow) {
        error(t.loc, "integer out of range");
        return false;
      }
      out = AttrValue::ofInt(t.value);
      next();
      return true;
    case Tok::Float:
      out = AttrValue::ofFloat(parseDoubleText(t.text));
      next();
      return true;
    case Tok::String:
      out = AttrValue::ofString(t.text);
      next();
      return true;
    case Tok::Ident:
      if (t.text == "true" || t.text == "false")
        out = AttrValue::ofBool(t.text == "true");
      else if (t.text == "inf" || t.text == "nan")
        out = AttrValue::ofFloat(parseDoubleText(t.text));
      else if (parseDType(t.text) && peek().kind == Tok::LBracket)
        return parseTensor(out);
      else if (peek().kind == Tok::LBracket) {
        // An identifier directly followed by a shape is a tensor literal
        // with a dtype graphvet does not know.
        error(t.loc, fmt::format("unknown dtype '{}' in a tensor literal (bool, i8, u8, i16, u16, "
                                 "i32, u32, i64, u64, f16, bf16, f32, f64)",
                                 t.text));
        return false;
      } else
        out = AttrValue::ofIdent(t.text);
      next();
      return true;
    case Tok::LBracket: {
      if (depth >= kMaxListDepth) {
        error(t.loc, fmt::format("lists nested too deeply (at most {} levels)", kMaxListDepth));
        return false;
      }
      next();
      open_ += '[';
      AttrValue::List items;
      if (!at(Tok::RBracket)) {
        while (true) {
          if (elemLocs)
            elemLocs->push_back(cur().loc);
          AttrValue item;
          if (!parseValue(item, depth + 1, nullptr))
            return false;
          items.push_back(std::move(item));
          if (at(Tok::Comma)) {
            next();
            continue;
          }
          if (at(Tok::RBracket))
            break;
          error(cur().loc,
                fmt::format("expected ',' or ']' after list element, found {}", describe(cur())));
          return false;
        }
      }
      next(); // ']'
      open_.pop_back();
      out = AttrValue::ofList(std::move(items));
      return true;
    }
    default:
      error(t.loc, fmt::format("expected attribute value, found {}", describe(t)));
      return false;
    }
  }

  /// One element of a tensor literal: a number, `inf`, `-inf`, `nan`, or
  /// (bool tensors) `true`/`false`.
  bool parseTensorElement(DType dt, uint8_t *dst) {
    const Token &e = cur();
    bool word = e.kind == Tok::Ident &&
                (e.text == "inf" || e.text == "nan" || e.text == "true" || e.text == "false");
    if (e.kind != Tok::Int && e.kind != Tok::Float && !word) {
      error(e.loc, fmt::format("expected a number of {}, found {}", dtypeName(dt), describe(e)));
      return false;
    }
    std::string why;
    if (!parseElement(dt, e.text, dst, why)) {
      error(e.loc, why);
      return false;
    }
    next();
    return true;
  }

  bool expect(Tok k, const char *what) {
    if (at(k)) {
      next();
      return true;
    }
    error(cur().loc, fmt::format("expected {}, found {}", what, describe(cur())));
    return false;
  }

  /// `dtype [dims] ( {elements} | splat(x) | hex "..." | file("name", offset) )`
  /// (graph-format.md version 2). The current token is the dtype.
  bool parseTensor(AttrValue &out) {
    SourceLoc litLoc = cur().loc;
    DType dt = *parseDType(cur().text);
    next();
    next(); // '['
    std::string openBefore = open_;
    open_ += '[';
    Shape shape;
    while (!at(Tok::RBracket)) {
      if (!at(Tok::Int) || cur().overflow || cur().value < 0) {
        error(cur().loc,
              fmt::format("expected a non-negative dimension, found {}", describe(cur())));
        return false;
      }
      shape.push_back(cur().value);
      next();
      if (at(Tok::Comma)) {
        next();
        continue;
      }
      if (!at(Tok::RBracket)) {
        error(cur().loc,
              fmt::format("expected ',' or ']' in a tensor shape, found {}", describe(cur())));
        return false;
      }
    }
    next(); // ']'
    open_ = openBefore;
    TensorType type{dt, shape};
    auto count = type.checkedElements();
    if (!count || static_cast<uint64_t>(*count) * dtypeBytes(dt) > kMaxLiteralBytes) {
      error(litLoc,
            fmt::format("tensor literal {} is larger than {} bytes", type.str(), kMaxLiteralBytes));
      return false;
    }
    auto tensor = std::make_shared<Tensor>(type);
    uint32_t width = dtypeBytes(dt);
    if (at(Tok::LBrace)) {
      next();
      open_ += '{';
      int64_t i = 0;
      while (!at(Tok::RBrace)) {
        if (i >= *count) {
          error(cur().loc,
                fmt::format("tensor literal {} has more than {} elements", type.str(), *count));
          return false;
        }
        if (!parseTensorElement(dt, tensor->at(i)))
          return false;
        ++i;
        if (at(Tok::Comma)) {
          next();
          continue;
        }
        if (!at(Tok::RBrace)) {
          error(cur().loc,
                fmt::format("expected ',' or '}}' in a tensor literal, found {}", describe(cur())));
          return false;
        }
      }
      next(); // '}'
      open_ = openBefore;
      if (i != *count) {
        error(litLoc,
              fmt::format("tensor literal {} needs {} elements, found {}", type.str(), *count, i));
        return false;
      }
    } else if (isKw(cur(), "splat")) {
      next();
      if (!expect(Tok::LParen, "'(' after 'splat'"))
        return false;
      std::vector<uint8_t> one(width);
      if (!parseTensorElement(dt, one.data()) || !expect(Tok::RParen, "')' after the splat value"))
        return false;
      for (int64_t i = 0; i < *count; ++i)
        std::copy(one.begin(), one.end(), tensor->at(i));
    } else if (isKw(cur(), "hex")) {
      next();
      if (!at(Tok::String)) {
        error(cur().loc, fmt::format("expected a string of hex digits, found {}", describe(cur())));
        return false;
      }
      const std::string &h = cur().text;
      if (h.size() != 2 * tensor->bytes().size()) {
        error(cur().loc, fmt::format("tensor literal {} needs {} hex digits, found {}", type.str(),
                                     2 * tensor->bytes().size(), h.size()));
        return false;
      }
      for (size_t b = 0; b < h.size() / 2; ++b) {
        int hi = hexDigit(h[2 * b]), lo = hexDigit(h[2 * b + 1]);
        if (hi < 0 || lo < 0) {
          error(cur().loc, "expected only hex digits in a hex tensor literal");
          return false;
        }
        tensor->bytes()[b] = static_cast<uint8_t>(hi * 16 + lo);
      }
      next();
    } else if (isKw(cur(), "file")) {
      next();
      if (!expect(Tok::LParen, "'(' after 'file'"))
        return false;
      SourceLoc nameLoc = cur().loc;
      if (!at(Tok::String)) {
        error(cur().loc, fmt::format("expected the sidecar file name, found {}", describe(cur())));
        return false;
      }
      std::string name = cur().text;
      next();
      if (!expect(Tok::Comma, "',' after the sidecar file name"))
        return false;
      if (!at(Tok::Int) || cur().overflow || cur().value < 0) {
        error(cur().loc, fmt::format("expected a byte offset, found {}", describe(cur())));
        return false;
      }
      int64_t offset = cur().value;
      next();
      if (!expect(Tok::RParen, "')' after the byte offset"))
        return false;
      if (!readSidecar(name, offset, tensor->bytes(), nameLoc))
        return false;
    } else {
      error(cur().loc, fmt::format("expected '{{', 'splat', 'hex' or 'file' after {}, found {}",
                                   type.str(), describe(cur())));
      return false;
    }
    out = AttrValue::ofTensor(std::move(tensor));
    return true;
  }

  /// Reads `dst.size()` bytes at `offset` of the sidecar `name` (relative to
  /// the `.graph` file's folder).
  bool readSidecar(const std::string &name, int64_t offset, std::span<uint8_t> dst, SourceLoc loc) {
    std::filesystem::path path = std::filesystem::path(baseDir_) / name;
    std::ifstream in(path, std::ios::binary);
    std::error_code dirError; // a directory opens but cannot be read
    if (!in || std::filesystem::is_directory(path, dirError)) {
      error(loc, fmt::format("cannot read sidecar file '{}'", path.string()));
      return false;
    }
    in.seekg(offset);
    in.read(reinterpret_cast<char *>(dst.data()), static_cast<std::streamsize>(dst.size()));
    if (!in || in.gcount() != static_cast<std::streamsize>(dst.size())) {
      error(loc, fmt::format("sidecar file '{}' has fewer than {} bytes at offset {}",
                             path.string(), dst.size(), offset));
      return false;
    }
    return true;
  }

  std::vector<Token> toks_;
  std::string baseDir_;
  size_t pos_ = 0;
  std::unordered_set<std::string> graphNames_;
  /// Brackets opened and not yet closed by the statement being parsed, as
  /// their opening characters (for recovery).
  std::string open_;
  Diagnostics &diags_;
};

// ---------------------------------------------------------------------------
// Resolution (phase 2)

std::string pluralOutputs(uint32_t n) {
  return fmt::format("{} output{}", n, n == 1 ? "" : "s");
}

Module resolve(Parser &p, Diagnostics &diags) {
  Module m;
  m.options = p.options_;
  m.optionLocs = p.optionLocs_;
  // Module::findGraph is a linear scan; hostile files may hold many graphs.
  std::unordered_map<std::string, GraphId> graphIds;
  for (const PGraph &pg : p.graphs_) {
    GraphId g = m.addGraph(pg.name);
    m.graph(g).loc = pg.loc;
    graphIds.emplace(pg.name, g);
  }
  auto error = [&](SourceLoc loc, std::string msg) {
    if (diags.size() < kMaxDiagnostics)
      diags.push_back({loc, std::move(msg)});
  };
  // Nodes first, so that references to later lines resolve.
  for (GraphId g = 0; g < p.graphs_.size(); ++g) {
    const PGraph &pg = p.graphs_[g];
    Graph &graph = m.graph(g);
    for (const PNode &pn : pg.nodes) {
      uint32_t count =
          pn.explicitOutputs ? *pn.explicitOutputs : defaultOutputCount(pn.type, pn.inputs.size());
      NodeId id = graph.addNode(pn.name, pn.type, {}, count);
      Node &n = graph.node(id);
      n.loc = pn.loc;
      for (const PAttr &a : pn.attrs)
        if (a.key != "outputs" && a.key != "subgraphs")
          n.attrs.emplace(a.key, a.value);
    }
  }
  std::vector<bool> referenced(p.graphs_.size(), false);
  for (GraphId g = 0; g < p.graphs_.size(); ++g) {
    const PGraph &pg = p.graphs_[g];
    Graph &graph = m.graph(g);
    for (NodeId id = 0; id < pg.nodes.size(); ++id) {
      const PNode &pn = pg.nodes[id];
      for (const PInput &in : pn.inputs) {
        if (in.unconnected) {
          graph.appendInput(id, std::nullopt);
          continue;
        }
        NodeId src = graph.find(in.name);
        if (src == kNoNode) {
          error(in.loc, fmt::format("unknown node '{}'", in.name));
          graph.appendInput(id, std::nullopt);
          continue;
        }
        if (pg.nodes[src].explicitOutputs && in.port >= *pg.nodes[src].explicitOutputs) {
          error(in.loc, fmt::format("input index {} out of range for '{}' with {}", in.port,
                                    in.name, pluralOutputs(*pg.nodes[src].explicitOutputs)));
          graph.appendInput(id, std::nullopt);
          continue;
        }
        graph.appendInput(id, OutPort{src, in.port});
      }
      for (const PAttr &a : pn.attrs) {
        if (a.key != "subgraphs")
          continue;
        const auto &list = a.value.asList();
        for (size_t k = 0; k < list.size(); ++k) {
          const std::string &name = *list[k].text();
          SourceLoc loc = k < a.elemLocs.size() ? a.elemLocs[k] : a.valueLoc;
          auto found = graphIds.find(name);
          GraphId sub = found == graphIds.end() ? kNoGraph : found->second;
          if (sub == kNoGraph) {
            error(loc, fmt::format("unknown graph '{}' in subgraphs", name));
          } else if (sub == 0) {
            error(loc, fmt::format("root graph '{}' cannot be a subgraph", name));
          } else if (referenced[sub]) {
            error(loc, fmt::format("subgraph '{}' referenced twice", name));
          } else {
            referenced[sub] = true;
            m.attachSubgraph(g, id, sub);
          }
        }
      }
    }
    for (const PCtrl &c : pg.ctrls) {
      NodeId from = graph.find(c.from), to = graph.find(c.to);
      if (from == kNoNode)
        error(c.fromLoc, fmt::format("unknown node '{}'", c.from));
      if (to == kNoNode)
        error(c.toLoc, fmt::format("unknown node '{}'", c.to));
      if (from == kNoNode || to == kNoNode)
        continue;
      if (from == to) {
        error(c.loc, fmt::format("cycle through {} -> {}", formatName(c.from), formatName(c.to)));
        continue;
      }
      if (!graph.addCtrlEdge(from, to)) {
        error(c.loc,
              fmt::format("duplicate control edge {} -> {}", formatName(c.from), formatName(c.to)));
        continue;
      }
      graph.ctrlEdgeLocs.push_back({from, to, c.loc});
    }
  }
  return m;
}

void sortByLocation(Diagnostics &diags) {
  std::stable_sort(diags.begin(), diags.end(), [](const Diagnostic &a, const Diagnostic &b) {
    return std::pair(a.loc.line, a.loc.col) < std::pair(b.loc.line, b.loc.col);
  });
}

} // namespace

ParseResult parseModule(std::string_view text, const ParseOptions &opts) {
  ParseResult result;
  Diagnostics &diags = result.diagnostics;
  std::vector<Token> toks = lex(text, diags);
  if (hasErrors(diags))
    return result; // the tokens after a lexical error are not trustworthy
  Parser parser(std::move(toks), diags, opts.baseDir);
  parser.parseFile();
  if (hasErrors(diags)) {
    sortByLocation(diags);
    return result;
  }
  Module m = resolve(parser, diags);
  if (hasErrors(diags)) {
    sortByLocation(diags);
    return result;
  }
  if (opts.verify) {
    Diagnostics verify = verifyModule(m);
    diags.insert(diags.end(), verify.begin(), verify.end());
  }
  sortByLocation(diags);
  if (!hasErrors(diags))
    result.module = std::move(m);
  return result;
}

ParseResult parseFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code dirError; // a directory opens but cannot be read
  if (!in || std::filesystem::is_directory(path, dirError)) {
    ParseResult r;
    r.diagnostics.push_back({SourceLoc{}, fmt::format("cannot read file '{}'", path)});
    return r;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ParseOptions opts;
  opts.baseDir = std::filesystem::path(path).parent_path().string();
  return parseModule(text, opts);
}

std::optional<Module> parseOrReport(std::string_view text, const std::string &fileName,
                                    std::string &errors) {
  ParseOptions opts;
  opts.baseDir = std::filesystem::path(fileName).parent_path().string();
  ParseResult r = parseModule(text, opts);
  for (const Diagnostic &d : r.diagnostics) {
    errors += d.format(fileName);
    errors += '\n';
  }
  return std::move(r.module);
}

} // namespace graphvet
