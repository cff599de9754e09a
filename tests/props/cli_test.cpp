// The `graphvet fuzz` and `graphvet reduce` commands end to end: the JSON
// figures, the exit statuses, and a campaign stopped by SIGINT that still
// reports and saves.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

struct CommandRun {
  int status = -1;
  std::string out;
};

CommandRun run(const std::string &args) {
  CommandRun r;
  std::string cmd = std::string(GRAPHVET_BIN) + " " + args + " 2>/dev/null";
  FILE *pipe = popen(cmd.c_str(), "r");
  if (!pipe)
    return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0)
    r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::filesystem::path tempDir(const char *name) {
  auto dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(FuzzCommand, JsonFiguresHaveTheDocumentedShape) {
  auto dir = tempDir("graphvet-fuzz-cli");
  CommandRun r = run("fuzz --cases 60 --seed 3 --jobs 2 --json --no-confirm --out " + dir.string());
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.status;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cases"], 60);
  for (const char *key : {"seconds", "cases_per_second", "violations", "inconclusive"})
    EXPECT_TRUE(j[key].is_number()) << key;
  ASSERT_TRUE(j["findings"].is_array());
  EXPECT_EQ(j["tensor_moves"]["total"].get<int64_t>(),
            j["tensor_moves"]["deleted"].get<int64_t>() + j["tensor_moves"]["kept"].get<int64_t>());
  EXPECT_GT(j["tensor_moves"]["total"].get<int64_t>(), 0);
  // Exit 1 exactly when something was found.
  EXPECT_EQ(r.status == 1, !j["findings"].empty() || j["violations"].get<int64_t>() > 0);
  for (const auto &path : j["findings"])
    EXPECT_TRUE(std::filesystem::exists(path.get<std::string>()));
  // The time series (from 0 cases to all 60), per-pass and per-failure-mode coverage.
  ASSERT_TRUE(j["timeline"].is_array());
  ASSERT_GE(j["timeline"].size(), 2u);
  EXPECT_EQ(j["timeline"].front()["cases"], 0);
  EXPECT_EQ(j["timeline"].back()["cases"], 60);
  for (const char *key : {"seconds", "cases_per_second", "rules", "features"})
    EXPECT_TRUE(j["timeline"].back()[key].is_number()) << key;
  EXPECT_EQ(j["passes"]["tensor-move-delete"]["ran"], 60);
  EXPECT_EQ(j["failure_modes"]["cases"].size(), 10u);
  EXPECT_TRUE(j["failure_modes"]["cases"]["aliasing-memory"].is_number());
  EXPECT_GT(j["failure_modes"]["sampled_cases"].get<int64_t>(), 0);
  std::filesystem::remove_all(dir);
}

TEST(FuzzCommand, RejectsBadCommandLines) {
  EXPECT_EQ(run("fuzz --cases 5 --passes no-such-pass").status, 2);
  EXPECT_EQ(run("fuzz --cases 5 --time 3").status, 2);
  EXPECT_EQ(run("fuzz --jobs 0 --cases 3").status, 2);
}

TEST(FuzzCommand, SigintStopsCleanlyAndStillReports) {
  auto dir = tempDir("graphvet-fuzz-sigint");
  std::string outFile = (dir / "stdout.json").string();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    FILE *out = freopen(outFile.c_str(), "w", stdout);
    FILE *err = freopen("/dev/null", "w", stderr);
    (void)out;
    (void)err;
    std::string outDir = (dir / "findings").string();
    execl(GRAPHVET_BIN, "graphvet", "fuzz", "--time", "120", "--json", "--no-confirm", "--out",
          outDir.c_str(), (char *)nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGINT);
  int status = 0;
  auto start = std::chrono::steady_clock::now();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60))
        << "graphvet fuzz did not stop after SIGINT";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_TRUE(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1);
  std::ifstream in(outFile);
  auto j = nlohmann::json::parse(in);
  EXPECT_TRUE(j["interrupted"].get<bool>());
  EXPECT_GT(j["cases"].get<int64_t>(), 0);
  for (const auto &path : j["findings"])
    EXPECT_TRUE(std::filesystem::exists(path.get<std::string>()));
  std::filesystem::remove_all(dir);
}

TEST(ReduceCommand, RefusesGraphsThatDoNotFail) {
  auto dir = tempDir("graphvet-reduce-cli");
  std::string file = (dir / "sound.graph").string();
  std::ofstream(file) << "graph main {\n  x = Data() {index = 0}\n  r = ReLU(x)\n"
                         "  o = NetOutput(r)\n}\n";
  EXPECT_EQ(run("reduce " + file).status, 2);
  EXPECT_EQ(run("reduce " + (dir / "missing.graph").string()).status, 2);
  std::filesystem::remove_all(dir);
}

} // namespace
