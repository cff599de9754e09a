// The report's charts section. Chart ids (chart-rate, chart-coverage,
// chart-passes, chart-modes) are stable for tests and scripts.
#include "props/report_charts.h"

#include "props/report.h"
#include "props/svg_chart.h"

#include <fmt/format.h>

namespace graphvet::props {
namespace {

std::string percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? "0%"
                    : fmt::format("{:.0f}%",
                                  100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string rateChart(const CampaignResult &r) {
  LineChart c;
  c.id = "chart-rate";
  c.title = "Cases per second over time";
  c.description = fmt::format("Line chart of the cases run per second in each sampling interval, "
                              "{} samples over {:.1f} s; {:.1f} cases/s overall.",
                              r.timeline.size(), r.stats.seconds, r.stats.casesPerSecond());
  c.xLabel = "wall time (s)";
  c.yLabel = "cases / s";
  LineSeries s{"cases/s", "#4878d0", {}};
  // The first sample is the start (0 cases, no rate yet).
  for (size_t i = 1; i < r.timeline.size(); ++i)
    s.points.emplace_back(r.timeline[i].seconds, r.timeline[i].casesPerSecond);
  c.series.push_back(std::move(s));
  return renderLineChart(c);
}

std::string coverageChart(const CampaignResult &r) {
  LineChart c;
  c.id = "chart-coverage";
  c.title = "Rule and feature coverage over time";
  size_t rules = r.timeline.empty() ? 0 : r.timeline.back().rules;
  size_t features = r.timeline.empty() ? 0 : r.timeline.back().features;
  c.description = fmt::format("Line chart of the distinct rule tags remarked and the graph "
                              "features seen so far; at the end {} rule tags and {} of {} "
                              "features.",
                              rules, features, kNumFeatures);
  c.xLabel = "wall time (s)";
  c.yLabel = "distinct seen so far";
  LineSeries ruleSeries{"rule tags (decision:rule)", "#d65f5f", {}};
  LineSeries featureSeries{fmt::format("features (of {})", kNumFeatures), "#6acc64", {}};
  for (const TimelinePoint &p : r.timeline) {
    ruleSeries.points.emplace_back(p.seconds, static_cast<double>(p.rules));
    featureSeries.points.emplace_back(p.seconds, static_cast<double>(p.features));
  }
  c.series.push_back(std::move(ruleSeries));
  c.series.push_back(std::move(featureSeries));
  return renderLineChart(c);
}

std::string passSection(const CampaignResult &r) {
  const CampaignStats &s = r.stats;
  BarChart c;
  c.id = "chart-passes";
  c.title = "Coverage per pass: cases where the pass changed the graph";
  c.description = "Bar chart, one bar per pass: of the cases the pass ran on, the percentage in "
                  "which it changed something.";
  c.valueLabel = "% of the cases it ran on where the pass changed the graph";
  c.maxValue = 100;
  std::string table = "<table class=\"passes\">\n<tr><th>pass</th><th>ran</th><th>remarked</th>"
                      "<th>changed the graph</th><th>remarks</th><th>distinct rules</th></tr>\n";
  for (const auto &[name, pc] : s.passes) {
    // Of the cases the pass ran on: with --passes all each pass runs on
    // only some of them.
    double pct = pc.ran ? 100.0 * static_cast<double>(pc.changed) / static_cast<double>(pc.ran) : 0;
    c.bars.push_back({name, pct, fmt::format("{:.0f}% ({})", pct, pc.changed),
                      fmt::format("{}: changed the graph in {} of the {} cases it ran on, {} "
                                  "distinct rules",
                                  name, pc.changed, pc.ran, pc.rules.size())});
    table += fmt::format("<tr><th>{}</th><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num{}\">{} ({})</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td></tr>\n",
                         htmlEscape(name), pc.ran, pc.remarked, pc.changed == 0 ? " zero" : "",
                         pc.changed, percent(pc.changed, pc.ran), pc.remarks, pc.rules.size());
  }
  table += "</table>\n";
  if (s.passes.empty())
    return "<p>No pass ran.</p>\n";
  return "<figure class=\"chart\">" + renderBarChart(c) + "</figure>\n" + table;
}

std::string modeSection(const CampaignResult &r) {
  const CampaignStats &s = r.stats;
  uint64_t sampled = s.features.modules;
  BarChart c;
  c.id = "chart-modes";
  c.title = "Coverage per failure mode";
  c.description = fmt::format(
      "Bar chart, one bar per failure mode of mid-end passes: the percentage of the {} "
      "feature-sampled cases whose graph had a feature of that mode or whose pipeline remarked "
      "a rule of that mode.",
      sampled);
  c.valueLabel = fmt::format("% of the {} sampled cases touching the mode", sampled);
  c.maxValue = 100;
  c.color = "#956cb4";
  std::string table = "<table class=\"modes\">\n<tr><th>failure mode</th><th>cases</th>"
                      "<th>of sampled</th><th>features of the mode</th></tr>\n";
  for (size_t i = 0; i < kNumFailureModes; ++i) {
    auto mode = static_cast<FailureMode>(i);
    uint64_t n = s.failureModeCases[i];
    double pct = sampled ? 100.0 * static_cast<double>(n) / static_cast<double>(sampled) : 0;
    std::string title(failureModeTitle(mode));
    c.bars.push_back({title, pct, fmt::format("{:.0f}% ({})", pct, n),
                      fmt::format("{}: {} of {} sampled cases", title, n, sampled)});
    std::string features;
    size_t listed = 0, seen = 0, total = 0;
    for (size_t f = 0; f < kNumFeatures; ++f) {
      if (!failureModesOfFeature(static_cast<Feature>(f))[i])
        continue;
      ++total;
      seen += s.features.counts[f] > 0;
      if (listed++ < 6)
        features +=
            (features.empty() ? "" : ", ") + std::string(featureName(static_cast<Feature>(f)));
    }
    if (listed > 6)
      features += ", ...";
    table += fmt::format("<tr id=\"mode-{}\"><th>{}</th><td class=\"num{}\">{}</td>"
                         "<td class=\"num\">{}</td><td>{} ({} of {} seen)</td></tr>\n",
                         failureModeKey(mode), htmlEscape(title), n == 0 ? " zero" : "", n,
                         percent(n, sampled), htmlEscape(features), seen, total);
  }
  table += "</table>\n";
  return "<figure class=\"chart\">" + renderBarChart(c) + "</figure>\n" + table;
}

} // namespace

std::string renderChartsSection(const CampaignResult &r) {
  std::string h = "<section id=\"charts\">\n<h2>Plots</h2>\n";
  if (r.timeline.size() >= 2) {
    h += "<div class=\"charts\">\n<figure class=\"chart\">" + rateChart(r) +
         "</figure>\n<figure class=\"chart\">" + coverageChart(r) + "</figure>\n</div>\n";
  } else {
    h += "<p>No time series (the campaign recorded fewer than two samples).</p>\n";
  }
  h += "<h3>Coverage per pass</h3>\n" + passSection(r);
  h += "<h3>Coverage per failure mode</h3>\n<p>A case touches a mode when its graph has a feature "
       "of the mode (props/failure_modes.cpp lists them) or its pipeline remarked a rule tag of "
       "the mode; fixpoint/idempotence also when the pipeline needed more than one changing "
       "round. Counted over the feature-sampled cases.</p>\n" +
       modeSection(r);
  return h + "</section>\n";
}

} // namespace graphvet::props
