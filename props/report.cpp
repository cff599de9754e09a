// HTML rendering of a campaign result. The page is plain HTML5 with a small
// inline stylesheet; each section has a stable id (figures, rules, features,
// findings) so tests and scripts can find it.
#include "props/report.h"

#include "ir/dot.h"
#include "ir/graphviz.h"
#include "ir/op_library.h"
#include "ir/parser.h"
#include "oracle/memory_plan.h"
#include "props/evaluate.h"
#include "props/report_charts.h"

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <set>

namespace graphvet::props {
namespace {

constexpr const char *kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.finding { border: 1px solid #d33; border-radius: 6px; padding: 0.5em 1em; margin: 1em 0; }
.pictures { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; align-items: start; }
.pictures figure { margin: 0; border: 1px solid #eee; padding: 0.5em; overflow: auto; min-width: 0; }
.pictures figcaption { font-weight: bold; margin-bottom: 0.3em; }
.pictures svg { max-width: 100%; height: auto; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
figure.chart { margin: 0 0 0.5em; }
svg.chart { max-width: 100%; height: auto; border: 1px solid #eee; background: #fff; }
table.differences td.got { color: #b00; font-weight: bold; }
.legend-note { color: #b00; }
code, pre { background: #f6f6f6; }
pre { padding: 0.5em; overflow: auto; }
.zero { color: #b00; font-weight: bold; }
)";

std::string commaList(const std::vector<std::string> &xs) {
  std::string out;
  for (const std::string &x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

std::optional<std::pair<GraphId, NodeId>> resolveNode(const Module &m, const std::string &spec) {
  GraphId g = 0;
  std::string name = spec;
  if (auto slash = spec.rfind('/'); slash != std::string::npos) {
    std::string graph = spec.substr(0, slash);
    if (auto inner = graph.rfind('/'); inner != std::string::npos)
      graph = graph.substr(inner + 1);
    g = m.findGraph(graph);
    name = spec.substr(slash + 1);
    if (g == kNoGraph)
      return std::nullopt;
  }
  NodeId n = m.graph(g).find(name);
  if (n == kNoNode)
    return std::nullopt;
  return std::make_pair(g, n);
}

/// The picture of a module: inline SVG, or the DOT text when dot fails.
std::string picture(const std::string &text, const std::string &caption,
                    const std::vector<oracle::Violation> &violations,
                    const std::map<int64_t, std::string> &outputMarks, bool draw) {
  std::string out = "<figure><figcaption>" + htmlEscape(caption) + "</figcaption>\n";
  ParseResult parsed = parseModule(text);
  if (!parsed.module) {
    out += "<pre>" + htmlEscape(text) + "</pre></figure>\n";
    return out;
  }
  const Module &m = *parsed.module;
  auto plan = std::make_shared<oracle::MemoryPlan>(oracle::MemoryPlan::build(m));
  DotOptions dot;
  dot.outputLabel = [plan](GraphId g, OutPort p) { return plan->bufferLabel(g, p); };
  for (const oracle::Violation &v : violations)
    for (const std::string &n : v.nodes)
      if (auto node = resolveNode(m, n))
        dot.highlighted.insert(*node);
  // The graph outputs whose values differ: the edge into the root NetOutput
  // drawn red and labelled, its producer highlighted, in both pictures.
  for (NodeId n : m.root().liveNodes()) {
    const Node &node = m.root().node(n);
    if (opKind(node) != OpKind::NetOutput)
      continue;
    for (const auto &[k, mark] : outputMarks)
      if (k >= 0 && static_cast<size_t>(k) < node.inputs.size() && node.inputs[k]) {
        dot.markedInputs[{0, n, static_cast<uint32_t>(k)}] = mark;
        dot.highlighted.insert({0, node.inputs[k]->node});
      }
    break;
  }
  std::string dotText = toDot(m, dot);
  std::string error = "pictures disabled";
  std::optional<std::string> svg = draw ? renderDot(dotText, "svg", error) : std::nullopt;
  if (svg && svg->find("<svg") != std::string::npos) {
    out += svg->substr(svg->find("<svg"));
  } else {
    out +=
        "<p>(" + htmlEscape(error) + "; DOT text below)</p><pre>" + htmlEscape(dotText) + "</pre>";
  }
  return out + "</figure>\n";
}

/// One differing value of a value violation, read back from its message
/// ("graph output 0 differs after run 1: element [1]: expected 1 (0x3f800000),
/// got 2 (0x40000000); element ...") or, without element detail, its bytes.
struct DifferingValue {
  std::string where;   ///< "output 0" / "variable v"
  int64_t output = -1; ///< graph output index, -1 for a variable
  std::string element; ///< "[1]" ("" when the message names none)
  std::string expected, got;
  std::string note; ///< e.g. "distance 1 exceeds the approx bound 1e-06"
};

/// "1.5 (0x3fc00000)" -> "1.5": the value without its bits.
std::string valueOnly(const std::string &text) {
  size_t bits = text.find(" (0x");
  return bits == std::string::npos ? text : text.substr(0, bits);
}

std::string between(const std::string &s, size_t from, const std::string &end, size_t &next) {
  size_t stop = s.find(end, from);
  next = stop == std::string::npos ? s.size() : stop + end.size();
  return s.substr(from, stop == std::string::npos ? std::string::npos : stop - from);
}

std::vector<DifferingValue> differingValues(const oracle::Violation &v) {
  std::vector<DifferingValue> out;
  if (v.kind != "value")
    return out;
  DifferingValue base;
  size_t pos = 0;
  if (v.message.rfind("graph output ", 0) == 0) {
    base.output = std::strtoll(between(v.message, 13, " ", pos).c_str(), nullptr, 10);
    base.where = fmt::format("output {}", base.output);
  } else if (v.message.rfind("variable ", 0) == 0) {
    base.where = "variable " + between(v.message, 9, " ", pos);
  } else {
    return out;
  }
  for (size_t at = v.message.find("element ", pos); at != std::string::npos;
       at = v.message.find("element ", pos)) {
    DifferingValue d = base;
    d.element = between(v.message, at + 8, ": expected ", pos);
    d.expected = between(v.message, pos, ", got ", pos);
    d.got = between(v.message, pos, "; ", pos);
    if (size_t note = d.got.find(" (distance"); note != std::string::npos) {
      d.note = d.got.substr(note + 2, d.got.size() - note - 3);
      d.got.resize(note);
    }
    out.push_back(std::move(d));
  }
  if (out.empty()) {
    // No element detail: the bytes, "expected <hex> got <hex>".
    size_t next = 0;
    DifferingValue d = base;
    d.expected = between(v.bytes, std::string("expected ").size(), " got ", next);
    d.got = v.bytes.substr(std::min(next, v.bytes.size()));
    for (std::string *t : {&d.expected, &d.got})
      if (t->size() > 48)
        *t = t->substr(0, 45) + "...";
    out.push_back(std::move(d));
  }
  return out;
}

std::string row(const std::string &name, const std::string &value, bool num = true) {
  return fmt::format("<tr><th>{}</th><td{}>{}</td></tr>\n", htmlEscape(name),
                     num ? " class=\"num\"" : "", htmlEscape(value));
}

} // namespace

std::string htmlEscape(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string renderReport(const CampaignResult &result, const CampaignOptions &campaign,
                         const ReportOptions &opts) {
  const CampaignStats &s = result.stats;
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                  htmlEscape(opts.title) + "</title>\n<style>" + kStyle +
                  "</style>\n</head>\n<body>\n<h1>" + htmlEscape(opts.title) + "</h1>\n";
  if (!opts.commandLine.empty())
    h += "<p><code>" + htmlEscape(opts.commandLine) + "</code></p>\n";

  h += "<section id=\"figures\">\n<h2>Campaign</h2>\n<table>\n";
  std::string passes = passesFlag(campaign.pipeline);
  h += row("seed", std::to_string(campaign.seed));
  h += row("jobs", std::to_string(campaign.jobs));
  if (!campaign.pipelines.empty())
    h += row("passes",
             fmt::format("all: {} pipelines taking turns (each pass alone, and -O3)",
                         campaign.pipelines.size()),
             false);
  else
    h += row("passes",
             passes.empty()
                 ? "default pipeline (-O" + std::to_string(campaign.pipeline.optLevel) + ")"
                 : passes,
             false);
  h += row("race analysis",
           campaign.check.useZ3 ? "Z3 on every case" : "reachability (findings re-checked with Z3)",
           false);
  h += row("cases", std::to_string(s.cases));
  h += row("seconds", fmt::format("{:.2f}", s.seconds));
  h += row("cases per second", fmt::format("{:.1f}", s.casesPerSecond()));
  h += row("sound", std::to_string(s.sound));
  h += row("violations", std::to_string(s.violations));
  h += row("inconclusive", std::to_string(s.inconclusive));
  h += row("invalid originals", std::to_string(s.invalid));
  h += row("TensorMoves seen", std::to_string(s.tensorMoves));
  h += row("TensorMoves deleted", std::to_string(s.deleted));
  h += row("TensorMoves kept", std::to_string(s.kept));
  h += row("findings", std::to_string(result.findings.size()));
  if (result.interrupted)
    h += row("interrupted", "yes (by a signal)", false);
  h += "</table>\n";
  if (s.byPipeline.size() > 1) {
    h += "<h3>Cases per pipeline</h3>\n<table class=\"pipelines\">\n<tr><th>pipeline</th>"
         "<th>cases</th><th>violations</th><th>inconclusive</th><th>remarks</th></tr>\n";
    for (const auto &[label, c] : s.byPipeline)
      h += fmt::format("<tr><th>{}</th><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                       htmlEscape(label), c.cases, c.violations, c.inconclusive, c.remarks);
    h += "</table>\n";
  }
  if (!s.kinds.empty()) {
    h += "<h3>Failing cases by kind</h3>\n<table>\n";
    for (const auto &[k, v] : s.kinds)
      h += row(k, std::to_string(v));
    h += "</table>\n";
  }
  h += "</section>\n";
  h += renderChartsSection(result);

  h += fmt::format("<section id=\"findings\">\n<h2>Findings ({})</h2>\n", result.findings.size());
  if (result.findings.empty())
    h += "<p class=\"none\">No findings.</p>\n";
  for (size_t i = 0; i < result.findings.size(); ++i) {
    const Finding &f = result.findings[i];
    h += fmt::format("<article class=\"finding\" id=\"finding-{}\">\n<h3>{}: {}</h3>\n", i + 1,
                     htmlEscape(f.kind), htmlEscape(f.rules));
    h += "<table>\n";
    h += row("verdict", std::string(oracle::verdictName(f.result.verdict)), false);
    h += row("file", f.path.empty() ? f.fileName : f.path, false);
    h += row("case seed", std::to_string(f.seed));
    h += row("nodes", fmt::format("{} -> {}", f.nodesBefore, f.nodesAfter));
    h += row("duplicates", std::to_string(f.duplicates));
    h += row("confirmed with Z3", f.confirmedWithZ3 ? "yes" : "no", false);
    h += "</table>\n";
    h += "<p class=\"replay\">replay: <code>" + htmlEscape(f.replay) + "</code></p>\n";
    // The differing values (each run and state reports its own; shown once).
    std::vector<DifferingValue> diffs;
    std::set<std::string> shownDiffs;
    // Each differing graph output's edge is labelled with its first
    // differing element: the original's value before, the new one after.
    std::map<int64_t, std::string> beforeMarks, afterMarks;
    for (const oracle::Violation &v : f.result.violations)
      for (DifferingValue &d : differingValues(v))
        if (shownDiffs.insert(d.where + "|" + d.element + "|" + d.expected + "|" + d.got).second) {
          if (d.output >= 0 && !beforeMarks.count(d.output)) {
            std::string at = d.element.empty() ? "" : " " + d.element;
            beforeMarks[d.output] =
                fmt::format("output {}{} = {}", d.output, at, valueOnly(d.expected));
            afterMarks[d.output] = fmt::format("output {}{} = {} (expected {})", d.output, at,
                                               valueOnly(d.got), valueOnly(d.expected));
          }
          diffs.push_back(std::move(d));
        }
    h += "<div class=\"pictures\">\n";
    h += picture(f.original, "before: the shrunk original", f.result.violations, beforeMarks,
                 opts.drawPictures);
    h += picture(f.optimized, "after: the pipeline's result", f.result.violations, afterMarks,
                 opts.drawPictures);
    h += "</div>\n";
    if (!diffs.empty()) {
      h += "<p class=\"legend-note\">Red: the nodes of the violation and the edges of the graph "
           "outputs whose values differ.</p>\n";
      h += fmt::format("<table class=\"differences\" id=\"differences-{}\">\n", i + 1);
      h += "<tr><th>where</th>"
           "<th>element</th><th>expected (original)</th><th>got (after the pipeline)</th>"
           "<th>note</th></tr>\n";
      for (const DifferingValue &d : diffs)
        h += fmt::format("<tr><th>{}</th><td>{}</td><td>{}</td><td class=\"got\">{}</td>"
                         "<td>{}</td></tr>\n",
                         htmlEscape(d.where), htmlEscape(d.element.empty() ? "all" : d.element),
                         htmlEscape(d.expected), htmlEscape(d.got), htmlEscape(d.note));
      h += "</table>\n";
    }
    for (const oracle::Violation &v : f.result.violations) {
      h += "<div class=\"violation\">\n<h4>" + htmlEscape(v.kind) + "</h4>\n<p>" +
           htmlEscape(v.message) + "</p>\n<table>\n";
      if (!v.nodes.empty())
        h += row("nodes", commaList(v.nodes), false);
      if (!v.buffers.empty())
        h += row("buffers", commaList(v.buffers), false);
      if (!v.bytes.empty())
        h += row("differing bytes", v.bytes, false);
      h += "</table>\n";
      for (size_t k = 0; k < v.schedules.size(); ++k) {
        h += fmt::format("<p>witness schedule {}:</p>\n<ol class=\"schedule\">", k + 1);
        for (const std::string &step : v.schedules[k])
          h += "<li>" + htmlEscape(step) + "</li>";
        h += "</ol>\n";
      }
      h += "</div>\n";
    }
    h += "<details><summary>original (.graph)</summary><pre>" + htmlEscape(f.fileText()) +
         "</pre></details>\n";
    h += "<details><summary>after the pipeline (.graph)</summary><pre>" + htmlEscape(f.optimized) +
         "</pre></details>\n</article>\n";
  }
  h += "</section>\n";
  h += "<section id=\"rules\">\n<h2>Rule coverage (pass remarks)</h2>\n<table>\n"
       "<tr><th>decision:rule</th><th>count</th></tr>\n";
  for (const auto &[k, v] : s.rules)
    h += row(k, std::to_string(v));
  h += "</table>\n</section>\n";

  h += fmt::format("<section id=\"features\">\n<h2>Feature coverage</h2>\n<p>Graphs containing "
                   "each feature, over {} sampled cases (one in {}).</p>\n<table>\n",
                   s.features.modules, kFeatureSample);
  for (size_t i = 0; i < kNumFeatures; ++i) {
    uint64_t c = s.features.counts[i];
    h += fmt::format("<tr><th>{}</th><td class=\"num{}\">{}</td></tr>\n",
                     featureName(static_cast<Feature>(i)), c == 0 ? " zero" : "", c);
  }
  h += "</table>\n</section>\n";

  h += "</body>\n</html>\n";
  return h;
}

} // namespace graphvet::props
