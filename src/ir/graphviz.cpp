// Runs graphviz's `dot` through temporary files (no shell quoting of user data).
#include "ir/graphviz.h"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace graphvet {
namespace {

std::optional<std::string> findOnPath(const std::string &program) {
  const char *path = std::getenv("PATH");
  if (!path)
    return std::nullopt;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty())
      continue;
    std::string candidate = dir + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

} // namespace

bool graphvizAvailable() {
  return findOnPath("dot").has_value();
}

std::optional<std::string> renderDot(const std::string &dotText, const std::string &format,
                                     std::string &error) {
  auto dot = findOnPath("dot");
  if (!dot) {
    error = "graphviz's 'dot' program was not found on PATH (install the Debian package "
            "'graphviz', or use --format dot)";
    return std::nullopt;
  }
  namespace fs = std::filesystem;
  char dirTemplate[] = "/tmp/graphvet-dot-XXXXXX";
  if (!mkdtemp(dirTemplate)) {
    error = "cannot create a temporary directory";
    return std::nullopt;
  }
  fs::path dir(dirTemplate);
  fs::path in = dir / "in.dot", out = dir / "out";
  {
    std::ofstream f(in, std::ios::binary);
    f << dotText;
  }
  pid_t pid = fork();
  if (pid == 0) {
    std::string fmtArg = "-T" + format;
    std::string outArg = "-o" + out.string();
    // Silence graphviz's own warnings on stderr; failures show as exit status.
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0)
      dup2(devnull, STDERR_FILENO);
    execl(dot->c_str(), "dot", fmtArg.c_str(), outArg.c_str(), in.c_str(), (char *)nullptr);
    _exit(127);
  }
  int status = 0;
  bool ok =
      pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::optional<std::string> result;
  if (ok) {
    std::ifstream f(out, std::ios::binary);
    result = std::string(std::istreambuf_iterator<char>(f), {});
  } else {
    error = "graphviz 'dot -T" + format + "' failed";
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return result;
}

} // namespace graphvet
