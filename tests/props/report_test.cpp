// The HTML report: its content (figures, coverage, each finding with pictures,
// witness schedule, bytes and replay), and that it renders in headless
// Chromium. Chromium comes from ci/setup (Debian package `chromium`); when it
// is missing the rendering test fails with that instruction rather than
// passing silently.
#include "ir/graphviz.h"
#include "props/report.h"
#include "props/svg_chart.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
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

/// Adds what the plots draw: a 5-sample timeline, three passes, the
/// failure-mode counts over 40 sampled cases, and one value violation of
/// graph output 0 to the finding.
void addPlotData(CampaignResult &r) {
  r.timeline = {{0, 0, 0, 0, 0},
                {0.5, 100, 200, 40, 60},
                {1.0, 260, 320, 55, 80},
                {1.5, 400, 280, 58, 90},
                {2.5, 1234, 834, 61, 95}};
  r.stats.features.modules = 40;
  // cse ran on half the cases only (as in a --passes all campaign).
  r.stats.passes["cse"] = {617, 600, 300, 900, {"merged:cse", "kept:effect"}};
  r.stats.passes["dce"] = {1234, 1000, 900, 5000, {"deleted:dead"}};
  r.stats.passes["tensor-move-delete"] = {1234, 700, 0, 800, {"kept:rule4-conflict"}};
  for (size_t i = 0; i < kNumFailureModes; ++i)
    r.stats.failureModeCases[i] = 4 * i;
}

/// The text of the element with `id` from `<tag` to its closing tag.
std::string elementById(const std::string &html, const std::string &tag, const std::string &id) {
  size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos)
    return {};
  size_t open = html.rfind("<" + tag, at);
  size_t close = html.find("</" + tag + ">", at);
  return open == std::string::npos || close == std::string::npos ? std::string()
                                                                 : html.substr(open, close - open);
}

size_t countOf(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

/// The (x, y) pairs of each `<polyline ... points="...">` in `svg`.
std::vector<std::vector<std::pair<double, double>>> polylines(const std::string &svg) {
  std::vector<std::vector<std::pair<double, double>>> out;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    size_t start = svg.find("points=\"", at) + 8;
    std::string pts = svg.substr(start, svg.find('"', start) - start);
    std::vector<std::pair<double, double>> line;
    std::istringstream in(pts);
    std::string pair;
    while (in >> pair) {
      size_t comma = pair.find(',');
      line.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
    }
    out.push_back(std::move(line));
  }
  return out;
}

TEST(Report, DrawsTheTimeSeriesAndCoverageCharts) {
  CampaignResult r = sampleResult();
  addPlotData(r);
  std::string html = renderReport(r, CampaignOptions{});
  ASSERT_NE(html.find("id=\"charts\""), std::string::npos);

  // Cases per second: one point per sample after the start.
  std::string rate = elementById(html, "svg", "chart-rate");
  ASSERT_FALSE(rate.empty());
  EXPECT_NE(rate.find("role=\"img\""), std::string::npos);
  EXPECT_NE(rate.find("aria-labelledby=\"chart-rate-title chart-rate-desc\""), std::string::npos);
  EXPECT_NE(rate.find("<title id=\"chart-rate-title\">Cases per second over time</title>"),
            std::string::npos);
  EXPECT_NE(rate.find(">wall time (s)</text>"), std::string::npos);
  EXPECT_NE(rate.find(">cases / s</text>"), std::string::npos);
  auto rateLines = polylines(rate);
  ASSERT_EQ(rateLines.size(), 1u);
  ASSERT_EQ(rateLines[0].size(), 4u);
  // x grows with time; the highest rate (834 at 2.5 s) is drawn highest (least y).
  for (size_t i = 1; i < 4; ++i)
    EXPECT_GT(rateLines[0][i].first, rateLines[0][i - 1].first);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_LT(rateLines[0][3].second, rateLines[0][i].second);
  // Ticks: 0 .. 1000 cases/s by 200, 0 .. 2.5 s by 0.5.
  for (const char *tick : {">0</text>", ">200</text>", ">1000</text>", ">2.5</text>"})
    EXPECT_NE(rate.find(tick), std::string::npos) << tick;

  // Coverage: two series, rules and features, each one point per sample.
  std::string coverage = elementById(html, "svg", "chart-coverage");
  ASSERT_FALSE(coverage.empty());
  EXPECT_NE(coverage.find("Rule and feature coverage over time"), std::string::npos);
  auto coverageLines = polylines(coverage);
  ASSERT_EQ(coverageLines.size(), 2u);
  EXPECT_EQ(coverageLines[0].size(), 5u);
  EXPECT_EQ(coverageLines[1].size(), 5u);
  EXPECT_NE(coverage.find("data-series=\"rule tags (decision:rule)\""), std::string::npos);
  EXPECT_NE(coverage.find("class=\"legend\""), std::string::npos);

  // Per pass: one bar per pass, labelled, with its share of the cases.
  std::string passes = elementById(html, "svg", "chart-passes");
  ASSERT_FALSE(passes.empty());
  EXPECT_EQ(countOf(passes, "<g class=\"bar\""), 3u);
  for (const char *pass : {"cse", "dce", "tensor-move-delete"})
    EXPECT_NE(passes.find(std::string("data-label=\"") + pass + "\""), std::string::npos) << pass;
  EXPECT_NE(passes.find(">73% (900)</text>"), std::string::npos); // dce: 900 of 1234
  EXPECT_NE(passes.find(">49% (300)</text>"), std::string::npos); // cse: 300 of the 617 it ran on
  EXPECT_NE(passes.find(">0% (0)</text>"), std::string::npos);    // tensor-move-delete
  EXPECT_NE(passes.find(">100</text>"), std::string::npos);       // the axis ends at 100%

  // Per failure mode: the ten modes, in order, over the 40 sampled cases.
  std::string modes = elementById(html, "svg", "chart-modes");
  ASSERT_FALSE(modes.empty());
  EXPECT_EQ(countOf(modes, "<g class=\"bar\""), kNumFailureModes);
  size_t last = 0;
  for (size_t i = 0; i < kNumFailureModes; ++i) {
    std::string label = htmlEscape(std::string(failureModeTitle(static_cast<FailureMode>(i))));
    size_t at = modes.find("data-label=\"" + label + "\"");
    ASSERT_NE(at, std::string::npos) << label;
    EXPECT_GT(at, last);
    last = at;
  }
  EXPECT_NE(modes.find(">90% (36)</text>"), std::string::npos); // the last mode: 36 of 40
  EXPECT_NE(modes.find("% of the 40 sampled cases touching the mode"), std::string::npos);
  EXPECT_NE(html.find("id=\"mode-effect-blindness\""), std::string::npos); // the table
}

TEST(Report, ListsThePipelinesOfAPassesAllCampaign) {
  CampaignResult r = sampleResult();
  r.stats.byPipeline["-O3"] = {700, 1, 0, 5000};
  r.stats.byPipeline["cse"] = {534, 0, 2, 900};
  CampaignOptions o;
  o.pipelines.resize(2);
  std::string html = renderReport(r, o);
  EXPECT_NE(html.find("all: 2 pipelines taking turns"), std::string::npos);
  size_t at = html.find("<table class=\"pipelines\">");
  ASSERT_NE(at, std::string::npos);
  std::string rows = html.substr(at, html.find("</table>", at) - at);
  EXPECT_NE(rows.find("<tr><th>-O3</th><td class=\"num\">700</td><td class=\"num\">1</td>"),
            std::string::npos);
  EXPECT_NE(rows.find("<tr><th>cse</th><td class=\"num\">534</td>"), std::string::npos);
}

TEST(Report, SaysSoWithoutATimeSeries) {
  CampaignResult r = sampleResult();
  std::string html = renderReport(r, CampaignOptions{});
  EXPECT_EQ(html.find("id=\"chart-rate\""), std::string::npos);
  EXPECT_NE(html.find("No time series"), std::string::npos);
  EXPECT_NE(html.find("id=\"chart-modes\""), std::string::npos); // the bars still are there
}

TEST(Report, MarksTheDifferingValuesOfAFindingInBothPictures) {
  CampaignResult r = sampleResult();
  Finding &f = r.findings.front();
  f.kind = "value";
  f.original = "graph main {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}\n"
               "  a = Relu(x)\n  b = Neg(a)\n  out = NetOutput(b, a)\n}\n";
  f.optimized = "graph main {\n  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}\n"
                "  a = Relu(x)\n  out = NetOutput(a, a)\n}\n";
  oracle::Violation v;
  v.kind = "value";
  v.nodes = {"a"};
  v.bytes = "expected 0000803f got 000080bf";
  v.message = "graph output 0 differs after run 1: element [1]: expected 3 (0x40400000), got 1 "
              "(0x3f800000); element [0]: expected -0 (0x80000000), got 0 (0x00000000)";
  f.result.violations = {v, v}; // run 2 reports the same difference: shown once
  f.result.violations[1].message.replace(f.result.violations[1].message.find("run 1"), 5, "run 2");
  std::string html = renderReport(r, CampaignOptions{});
  std::string table = elementById(html, "table", "differences-1");
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(countOf(table, "<tr><th>output 0</th>"), 2u);
  EXPECT_NE(table.find("<td>[1]</td><td>3 (0x40400000)</td><td class=\"got\">1 (0x3f800000)"),
            std::string::npos);
  EXPECT_NE(table.find("<td>[0]</td><td>-0 (0x80000000)</td>"), std::string::npos);
  // The pictures side by side; each labels the edge of output 0 with its
  // value (drawn by graphviz, or in the DOT text without it).
  size_t pictures = html.find("<div class=\"pictures\">");
  ASSERT_NE(pictures, std::string::npos);
  size_t beforeFigure = html.find("<figure>", pictures);
  size_t afterFigure = html.find("<figure>", beforeFigure + 1);
  ASSERT_NE(afterFigure, std::string::npos);
  size_t before = html.find("output 0 [1] = 3", pictures);
  size_t after = html.find("output 0 [1] = 1 (expected 3)", pictures);
  EXPECT_GT(before, beforeFigure);
  EXPECT_LT(before, afterFigure);
  EXPECT_GT(after, afterFigure);
  EXPECT_NE(after, std::string::npos);
}

TEST(SvgChart, TicksCoverTheDataAtA125Step) {
  EXPECT_EQ(niceTicks(0, 184), (std::vector<double>{0, 50, 100, 150, 200}));
  EXPECT_EQ(niceTicks(0, 100), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(niceTicks(0, 2.5), (std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_EQ(niceTicks(0, 0), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1}));
}

TEST(FailureModes, EveryModeHasFeaturesAndRuleTagsMapByKeyword) {
  std::array<size_t, kNumFailureModes> features{};
  for (size_t f = 0; f < kNumFeatures; ++f) {
    FailureModeSet s = failureModesOfFeature(static_cast<Feature>(f));
    for (size_t m = 0; m < kNumFailureModes; ++m)
      features[m] += s[m];
  }
  for (size_t m = 0; m < kNumFailureModes; ++m)
    EXPECT_GT(features[m], 0u) << failureModeKey(static_cast<FailureMode>(m));
  auto has = [](std::string_view tag, FailureMode m) {
    return failureModesOfRule(tag)[static_cast<size_t>(m)];
  };
  EXPECT_TRUE(has("effect-ref-write", FailureMode::EffectBlindness));
  EXPECT_TRUE(has("effect-ref-write", FailureMode::AliasingMemory));
  EXPECT_TRUE(has("rule3-fan-out", FailureMode::MultiConsumerBlindness));
  EXPECT_TRUE(has("dropout-training-false:graph-output", FailureMode::ModeAttributeBlindness));
  EXPECT_TRUE(has("follow-on-shared", FailureMode::FixpointIdempotence));
  EXPECT_FALSE(has("alone", FailureMode::EffectBlindness));
  // A case needing a second changing round touches fixpoint/idempotence.
  EXPECT_TRUE(failureModesOfCase(
      {nullptr, nullptr, 3, true})[static_cast<size_t>(FailureMode::FixpointIdempotence)]);
  EXPECT_FALSE(failureModesOfCase(
      {nullptr, nullptr, 2, true})[static_cast<size_t>(FailureMode::FixpointIdempotence)]);
}

TEST(Campaign, RecordsABoundedTimelineAndPerPassAndModeCoverage) {
  CampaignOptions o;
  o.seconds = 1.0;
  o.generator = CaseGenerator::Mixed;
  o.timelineInterval = 0.02;
  o.timelineMaxPoints = 8;
  CampaignResult r = runCampaign(o);
  ASSERT_GE(r.timeline.size(), 3u);
  EXPECT_LE(r.timeline.size(), 8u);
  EXPECT_EQ(r.timeline.front().cases, 0u);
  EXPECT_EQ(r.timeline.back().cases, r.stats.cases);
  EXPECT_EQ(r.timeline.back().rules, r.stats.rules.size());
  for (size_t i = 1; i < r.timeline.size(); ++i) {
    EXPECT_GE(r.timeline[i].seconds, r.timeline[i - 1].seconds);
    EXPECT_GE(r.timeline[i].cases, r.timeline[i - 1].cases);
    EXPECT_GE(r.timeline[i].features, r.timeline[i - 1].features);
  }
  ASSERT_FALSE(r.stats.passes.empty());
  for (const auto &[name, pc] : r.stats.passes) {
    EXPECT_LE(pc.ran, r.stats.cases) << name;
    EXPECT_LE(pc.changed, pc.remarked) << name;
    EXPECT_LE(pc.remarked, pc.ran) << name;
  }
  EXPECT_GT(r.stats.passes.at("tensor-move-delete").changed, 0u);
  uint64_t touched = 0;
  for (uint64_t n : r.stats.failureModeCases) {
    EXPECT_LE(n, r.stats.features.modules);
    touched += n > 0;
  }
  EXPECT_GE(touched, kNumFailureModes / 2);
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

/// Width and height from a PNG's IHDR chunk (0, 0 if it is not a PNG).
std::pair<uint32_t, uint32_t> pngSize(const std::string &png) {
  if (png.size() < 24 || png.compare(1, 3, "PNG") != 0 || png.compare(12, 4, "IHDR") != 0)
    return {0, 0};
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k)
      v = (v << 8) | static_cast<unsigned char>(png[at + k]);
    return v;
  };
  return {be32(16), be32(20)};
}

TEST(Report, RendersInHeadlessChromium) {
  auto chromium = findChromium();
  ASSERT_TRUE(chromium) << "chromium is not installed: run ci/setup (it installs the Debian "
                           "package 'chromium'), then rerun this test";
  char dirTemplate[] = "/tmp/graphvet-report-XXXXXX";
  ASSERT_NE(mkdtemp(dirTemplate), nullptr);
  std::filesystem::path dir(dirTemplate);
  std::filesystem::path page = dir / "report.html";
  std::filesystem::path shot = dir / "report.png";
  CampaignResult result = sampleResult();
  addPlotData(result);
  {
    std::ofstream out(page);
    out << renderReport(result, CampaignOptions{});
  }
  std::string browser =
      "timeout 120 " + *chromium +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update"
      " --disable-sync --disable-dev-shm-usage --hide-scrollbars --user-data-dir=" +
      (dir / "profile").string();
  std::string dom = runCapture(browser + " --dump-dom file://" + page.string() + " 2>/dev/null");
  runCapture(browser + " --window-size=1280,2400 --screenshot=" + shot.string() + " file://" +
             page.string() + " 2>/dev/null");
  std::string png;
  {
    std::ifstream in(shot, std::ios::binary);
    png.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::filesystem::remove_all(dir);
  // The DOM Chromium built from the page: the sections, the finding, the
  // charts with their titles and every bar label and, when graphviz drew
  // them, the pictures.
  EXPECT_NE(dom.find("id=\"findings\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("id=\"finding-1\""), std::string::npos);
  EXPECT_NE(dom.find("rv5"), std::string::npos);
  for (const char *title :
       {"Cases per second over time", "Rule and feature coverage over time",
        "Coverage per pass: cases where the pass changed the graph", "Coverage per failure mode"})
    EXPECT_NE(dom.find(std::string(">") + title + "</title>"), std::string::npos) << title;
  for (const char *pass : {"cse", "dce", "tensor-move-delete"})
    EXPECT_NE(dom.find(std::string("data-label=\"") + pass + "\""), std::string::npos) << pass;
  for (size_t i = 0; i < kNumFailureModes; ++i) {
    std::string label = htmlEscape(std::string(failureModeTitle(static_cast<FailureMode>(i))));
    EXPECT_NE(dom.find("data-label=\"" + label + "\""), std::string::npos) << label;
  }
  EXPECT_EQ(countOf(dom, "<polyline class=\"series\""), 3u);
  if (graphvizAvailable()) {
    EXPECT_NE(dom.find("<svg class=\"chart\""), std::string::npos);
    EXPECT_GE(countOf(dom, "<svg"), 6u); // four charts, two pictures
  }
  // The screenshot: a PNG of the window's size with more in it than a blank
  // page (a white 1280x2400 PNG is 14 KB; this page is several times that).
  EXPECT_EQ(pngSize(png), std::make_pair(1280u, 2400u));
  EXPECT_GT(png.size(), 40000u);
}

} // namespace
} // namespace graphvet::props
