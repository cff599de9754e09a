// A libFuzzer-compatible driver without libFuzzer: feeds files (or every file
// under a directory, recursively, in sorted order) to LLVMFuzzerTestOneInput,
// so the fuzz targets also build with gcc and ctest can replay the corpora.
// Arguments starting with '-' (libFuzzer flags such as -runs=N) are ignored,
// so the same command line works with either driver.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

namespace {

bool readFile(const std::filesystem::path &path, std::string &contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  contents.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

int runOne(const std::string &name, const std::string &contents) {
  std::fprintf(stderr, "Running: %s\n", name.c_str());
  // Copy into an exactly sized heap buffer so ASan catches reads past the end,
  // as it would under libFuzzer.
  std::vector<uint8_t> bytes(contents.begin(), contents.end());
  return LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

} // namespace

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> files;
  bool anyPath = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.starts_with("-"))
      continue;
    anyPath = true;
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::filesystem::path> found;
      for (const auto &entry : std::filesystem::recursive_directory_iterator(arg, ec))
        if (entry.is_regular_file())
          found.push_back(entry.path());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::exists(arg, ec)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "error: no such file or directory: %s\n", arg.c_str());
      return 2;
    }
  }
  if (!anyPath) {
    std::string contents((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
    runOne("<stdin>", contents);
    std::fprintf(stderr, "Executed 1 input\n");
    return 0;
  }
  for (const auto &path : files) {
    std::string contents;
    if (!readFile(path, contents)) {
      std::fprintf(stderr, "error: cannot read %s\n", path.c_str());
      return 2;
    }
    runOne(path.string(), contents);
  }
  std::fprintf(stderr, "Executed %zu inputs\n", files.size());
  return 0;
}
