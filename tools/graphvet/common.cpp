// Helpers shared by the subcommands: loading graph files, writing output.
#include "ir/parser.h"
#include "tools/graphvet/commands.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unistd.h>

namespace graphvet::cli {

std::optional<std::string> readTextFile(const std::string &path, std::ostream &err) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
    return text;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << path << ": error: cannot open file\n";
    return std::nullopt;
  }
  text.assign(std::istreambuf_iterator<char>(in), {});
  return text;
}

std::optional<Module> loadGraphFile(const std::string &path, std::ostream &err) {
  std::optional<std::string> text = readTextFile(path, err);
  if (!text)
    return std::nullopt;
  std::string shownName = path == "-" ? "<stdin>" : path;
  std::string errors;
  auto m = parseOrReport(*text, shownName, errors);
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

bool stderrIsTerminal() {
  return isatty(STDERR_FILENO) != 0;
}

void addArithmeticsOption(CLI::App *sub, const std::string &name, unsigned &value,
                          const std::string &help) {
  sub->add_option(name, value, help)->check(CLI::Range(1u, 16u))->capture_default_str();
}

bool applyOptionOverrides(const std::vector<std::string> &items, std::string_view command,
                          PipelineOptions &pipeline, std::ostream &err) {
  auto trim = [](std::string_view v) {
    size_t b = v.find_first_not_of(" \t");
    if (b == std::string_view::npos)
      return std::string();
    size_t e = v.find_last_not_of(" \t");
    return std::string(v.substr(b, e - b + 1));
  };
  for (const std::string &kv : items) {
    size_t eq = kv.find('=');
    std::string key = eq == std::string::npos ? "" : trim(std::string_view(kv).substr(0, eq));
    if (key.empty()) {
      err << "graphvet " << command << ": error: --option expects KEY=VALUE, got '" << kv << "'\n";
      return false;
    }
    pipeline.optionOverrides[key] = kv.substr(eq + 1);
  }
  return true;
}

bool applyPassList(const std::optional<std::string> &list, const std::vector<std::string> &disabled,
                   std::string_view command, PipelineOptions &pipeline, std::ostream &err) {
  if (list) {
    std::vector<std::string> names;
    std::stringstream items(*list);
    for (std::string item; std::getline(items, item, ',');) {
      size_t first = item.find_first_not_of(" \t");
      if (first != std::string::npos)
        names.push_back(item.substr(first, item.find_last_not_of(" \t") - first + 1));
    }
    pipeline.passes = std::move(names);
  }
  std::vector<std::string> named = pipeline.passes.value_or(std::vector<std::string>{});
  named.insert(named.end(), disabled.begin(), disabled.end());
  for (const std::string &name : named)
    if (!findPass(name)) {
      std::string known;
      for (const PassInfo &p : allPasses())
        known += (known.empty() ? "" : ", ") + std::string(p.name);
      err << "graphvet " << command << ": error: unknown pass '" << name
          << "' (known passes: " << known << ")\n";
      return false;
    }
  return true;
}

} // namespace graphvet::cli
