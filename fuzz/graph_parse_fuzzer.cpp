// libFuzzer target for the `.graph` front end: any bytes either parse into a
// module that verifies and whose canonical print is a fixpoint
// (print(parse(print(m))) == print(m)), or are rejected with at least one
// located error diagnostic. Anything else — a crash, a hang, a leak, a silent
// rejection or a round-trip mismatch — is a finding.
#include "ir/diagnostic.h"
#include "ir/dot.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace {

// Larger inputs only slow the fuzzer down without new parser behaviour.
constexpr size_t kMaxInputBytes = 1 << 16;

[[noreturn]] void fail(const char *what, std::string_view input, const std::string &detail) {
  std::fprintf(stderr, "graph_parse_fuzzer: %s\n--- input ---\n%.*s\n--- detail ---\n%s\n", what,
               static_cast<int>(input.size()), input.data(), detail.c_str());
  __builtin_trap();
}

std::string formatAll(const graphvet::Diagnostics &diags) {
  std::string out;
  for (const graphvet::Diagnostic &d : diags)
    out += d.format("input") + "\n";
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace graphvet;
  if (size > kMaxInputBytes)
    return 0;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  ParseResult parsed = parseModule(text);
  if (!parsed.module) {
    // Rejection must say why, with a location a user can jump to.
    if (!hasErrors(parsed.diagnostics))
      fail("input rejected without an error diagnostic", text, formatAll(parsed.diagnostics));
    for (const Diagnostic &d : parsed.diagnostics)
      if (d.message.empty())
        fail("diagnostic with an empty message", text, formatAll(parsed.diagnostics));
    return 0;
  }
  if (Diagnostics errors = verifyModule(*parsed.module); hasErrors(errors))
    fail("parsed module does not pass the verifier", text, formatAll(errors));

  std::string first = printModule(*parsed.module);
  ParseResult again = parseModule(first);
  if (!again.module)
    fail("printed module does not parse", text, first + "\n" + formatAll(again.diagnostics));
  std::string second = printModule(*again.module);
  if (first != second)
    fail("print(parse(print(m))) != print(m)", text, first + "\n--- reprinted ---\n" + second);
  // The DOT export walks the same structure; it must not crash either.
  if (toDot(*parsed.module).empty())
    fail("empty DOT export", text, first);
  return 0;
}
