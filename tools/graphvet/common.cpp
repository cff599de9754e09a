// Helpers shared by the subcommands: loading graph files, writing output.
#include "ir/parser.h"
#include "tools/graphvet/commands.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unistd.h>

namespace graphvet::cli {

std::optional<Module> loadGraphFile(const std::string &path, std::ostream &err) {
  std::string text;
  std::string shownName = path;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
    shownName = "<stdin>";
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      err << path << ": error: cannot open file\n";
      return std::nullopt;
    }
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string errors;
  auto m = parseOrReport(text, shownName, errors);
  err << errors;
  return m;
}

bool writeOutput(const std::string &path, const std::string &text, std::ostream &err) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    return true;
  }
  std::ofstream out(path, std::ios::binary);
  if (!(out << text)) {
    err << path << ": error: cannot write file\n";
    return false;
  }
  return true;
}

bool stderrIsTerminal() { return isatty(STDERR_FILENO) != 0; }

} // namespace graphvet::cli
