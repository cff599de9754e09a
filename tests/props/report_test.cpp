// The HTML report: its content (figures, coverage, each finding with pictures,
// witness schedule, bytes and replay), and that it renders in headless
// Chromium. Chromium comes from ci/setup (Debian package `chromium`); when it
// is missing the rendering test fails with that instruction rather than
// passing silently.
#include "ir/graphviz.h"
#include "props/report.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <unistd.h>

namespace graphvet::props {
namespace {

CampaignResult sampleResult() {
  CampaignResult r;
  r.stats.cases = 1234;
  r.stats.seconds = 2.5;
  r.stats.sound = 1233;
  r.stats.violations = 1;
  r.stats.tensorMoves = 100;
  r.stats.deleted = 60;
  r.stats.kept = 40;
  r.stats.rules["deleted:scenario4"] = 7;
  r.stats.kinds["race"] = 1;
  Finding f;
  f.kind = "race";
  f.rules = "scenario4";
  f.seed = 410;
  f.nodesBefore = 20;
  f.nodesAfter = 5;
  f.fileName = "race-scenario4-fe3a9e99.graph";
  f.path = "fuzz-out/race-scenario4-fe3a9e99.graph";
  f.original = "graph main {\n  var2 = Variable()\n  tm3 = TensorMove(var2)\n"
               "  wr4 = ScatterUpdate(_, tm3)\n  rv5 = ReadVariableOp(tm3) {ref_var_src_var_name = "
               "\"var2\"}\n  out6 = NetOutput()\n}\n";
  f.optimized = "graph main {\n  var2 = Variable()\n  wr4 = ScatterUpdate(_, var2)\n"
                "  rv5 = ReadVariableOp(var2) {ref_var_src_var_name = \"var2\"}\n"
                "  out6 = NetOutput()\n}\n";
  f.result.verdict = oracle::Verdict::Violation;
  oracle::Violation v;
  v.kind = "race";
  v.nodes = {"wr4", "rv5"};
  v.buffers = {"var:var2"};
  v.schedules = {{"var2", "wr4", "rv5", "out6"}, {"var2", "rv5", "wr4", "out6"}};
  v.bytes = "expected 01<02 got 03";
  v.message = "wr4 and rv5 both access var:var2 & no edge orders them";
  f.result.violations.push_back(v);
  f.replay = "graphvet check fuzz-out/race-scenario4-fe3a9e99.graph --seed 410";
  r.findings.push_back(f);
  return r;
}

TEST(Report, ContainsFiguresCoverageAndEveryFindingPart) {
  std::string html = renderReport(sampleResult(), CampaignOptions{});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("id=\"figures\""), std::string::npos);
  EXPECT_NE(html.find("id=\"rules\""), std::string::npos);
  EXPECT_NE(html.find("deleted:scenario4"), std::string::npos);
  EXPECT_NE(html.find("id=\"features\""), std::string::npos);
  EXPECT_NE(html.find("id=\"findings\""), std::string::npos);
  EXPECT_NE(html.find("id=\"finding-1\""), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">1234</td>"), std::string::npos);
  EXPECT_NE(html.find("graphvet check fuzz-out/race-scenario4-fe3a9e99.graph --seed 410"),
            std::string::npos);
  EXPECT_NE(html.find("<li>rv5</li>"), std::string::npos);             // witness schedule
  EXPECT_NE(html.find("expected 01&lt;02 got 03"), std::string::npos); // bytes, escaped
  EXPECT_NE(html.find("&amp; no edge orders them"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos); // self-contained, static
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src=\""), std::string::npos);
  if (graphvizAvailable()) {
    // Two pictures, the conflicting nodes drawn highlighted (red).
    size_t first = html.find("<svg");
    ASSERT_NE(first, std::string::npos);
    EXPECT_NE(html.find("<svg", first + 1), std::string::npos);
    EXPECT_NE(html.find("red"), std::string::npos);
  }
}

TEST(Report, SaysSoWhenThereAreNoFindings) {
  CampaignResult r = sampleResult();
  r.findings.clear();
  std::string html = renderReport(r, CampaignOptions{});
  EXPECT_NE(html.find("Findings (0)"), std::string::npos);
  EXPECT_NE(html.find("No findings."), std::string::npos);
}

TEST(Report, DrawsFusedGroupsAndPartitionsOfAFindingAsKernels) {
  // A finding of a fuse-ops or partition-graph campaign: its optimized graph
  // holds a `_fused` group and a `_target` region. Each is drawn as one
  // labelled kernel box (src/ir/dot.cpp), so the reader sees the kernels the
  // pass made next to the violation.
  CampaignResult r = sampleResult();
  Finding &f = r.findings.front();
  f.original = "graph main {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}\n"
               "  add = Add(x, x)\n  relu = Relu(add)\n  neg = Neg(relu)\n"
               "  out = NetOutput(neg)\n}\n";
  f.optimized =
      "graph main {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}\n"
      "  fused_add_relu = PartitionedCall(x) {_fused = \"fused_add_relu\", subgraphs = "
      "[fused_add_relu]}\n"
      "  region = PartitionedCall(fused_add_relu) {_target = \"npu\", subgraphs = "
      "[npu_region_0]}\n  out = NetOutput(region)\n}\n\n"
      "graph fused_add_relu {\n  in0 = Data() {_parent_node_index = 0}\n  add = Add(in0, in0)\n"
      "  relu = Relu(add)\n  out = NetOutput(relu) {in0._parent_node_index = 0}\n}\n\n"
      "graph npu_region_0 {\n  in0 = Data() {_parent_node_index = 0}\n  neg = Neg(in0)\n"
      "  out = NetOutput(neg) {in0._parent_node_index = 0}\n}\n";
  f.result.violations.front().nodes = {"region"};
  std::string html = renderReport(r, CampaignOptions{});
  size_t finding = html.find("id=\"finding-1\"");
  ASSERT_NE(finding, std::string::npos);
  // Drawn (SVG) or, without graphviz, the DOT text: either way the boxes are
  // labelled by kernel, and only the optimized picture has them.
  size_t fused = html.find("fused kernel", finding);
  size_t target = html.find("on target", finding);
  ASSERT_NE(fused, std::string::npos);
  ASSERT_NE(target, std::string::npos);
  EXPECT_NE(html.find("fused_add_relu", fused), std::string::npos);
  EXPECT_NE(html.find("npu", target), std::string::npos);
  EXPECT_EQ(html.find("fused kernel", fused + 1), std::string::npos); // one group, drawn once
  if (graphvizAvailable()) {
    size_t optimizedSvg = html.rfind("<svg", fused);
    ASSERT_NE(optimizedSvg, std::string::npos);
    EXPECT_GT(optimizedSvg, html.find("<svg", finding)); // the second picture: after the pass
  }
}

std::optional<std::string> findChromium() {
  for (const char *name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0)
      return std::string(name);
  }
  return std::nullopt;
}

std::string runCapture(const std::string &cmd) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE *)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe)
    return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0)
    out.append(buf.data(), n);
  return out;
}

TEST(Report, RendersInHeadlessChromium) {
  auto chromium = findChromium();
  ASSERT_TRUE(chromium) << "chromium is not installed: run ci/setup (it installs the Debian "
                           "package 'chromium'), then rerun this test";
  char dirTemplate[] = "/tmp/graphvet-report-XXXXXX";
  ASSERT_NE(mkdtemp(dirTemplate), nullptr);
  std::filesystem::path dir(dirTemplate);
  std::filesystem::path page = dir / "report.html";
  {
    std::ofstream out(page);
    out << renderReport(sampleResult(), CampaignOptions{});
  }
  std::string profile = (dir / "profile").string();
  std::string cmd = "timeout 120 " + *chromium +
                    " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                    " --disable-background-networking --disable-component-update --disable-sync"
                    " --disable-dev-shm-usage --user-data-dir=" +
                    profile + " --dump-dom file://" + page.string() + " 2>/dev/null";
  std::string dom = runCapture(cmd);
  std::filesystem::remove_all(dir);
  // The DOM Chromium built from the page: the sections, the finding and,
  // when graphviz drew them, the pictures.
  EXPECT_NE(dom.find("id=\"findings\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("id=\"finding-1\""), std::string::npos);
  EXPECT_NE(dom.find("rv5"), std::string::npos);
  if (graphvizAvailable()) {
    EXPECT_NE(dom.find("<svg"), std::string::npos);
  }
}

} // namespace
} // namespace graphvet::props
