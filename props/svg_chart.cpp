// SVG text for the report's charts (svg_chart.h). Coordinates are rounded to
// one decimal: the page stays small and the output is stable.
#include "props/svg_chart.h"

#include "props/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace graphvet::props {
namespace {

/// SVG text and attributes escape as HTML does.
std::string escape(const std::string &s) {
  return htmlEscape(s);
}

/// A tick value as text: no trailing zeros, thousands as "12k" when round.
std::string tickText(double v) {
  if (std::fabs(v) >= 10000 && std::fmod(v, 1000) == 0)
    return fmt::format("{:g}k", v / 1000);
  if (std::fabs(v - std::round(v)) < 1e-9)
    return fmt::format("{}", static_cast<long long>(std::llround(v)));
  return fmt::format("{:.3g}", v);
}

/// Approximate width in pixels of `text` at 12 px sans-serif.
double textWidth(const std::string &text) {
  return 6.8 * static_cast<double>(text.size());
}

std::string svgOpen(const std::string &id, const std::string &title, const std::string &desc,
                    int width, int height) {
  return fmt::format("<svg class=\"chart\" id=\"{0}\" xmlns=\"http://www.w3.org/2000/svg\" "
                     "role=\"img\" aria-labelledby=\"{0}-title {0}-desc\" width=\"{1}\" "
                     "height=\"{2}\" viewBox=\"0 0 {1} {2}\" font-family=\"system-ui, sans-serif\" "
                     "font-size=\"12\">\n<title id=\"{0}-title\">{3}</title>\n<desc "
                     "id=\"{0}-desc\">{4}</desc>\n<text class=\"chart-title\" x=\"{5}\" y=\"18\" "
                     "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{3}</text>\n",
                     escape(id), width, height, escape(title), escape(desc), width / 2);
}

} // namespace

std::vector<double> niceTicks(double lo, double hi, int count) {
  if (!(hi > lo))
    hi = lo + 1;
  double raw = (hi - lo) / std::max(1, count);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (f * mag >= raw) {
      step = f * mag;
      break;
    }
  // From the last tick at or below lo to the first at or above hi.
  std::vector<double> out;
  double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  for (double k = first; k <= last; k += 1)
    out.push_back(k == 0 ? 0 : std::stod(fmt::format("{:.12g}", k * step))); // 0.6, not 3 * 0.2
  return out;
}

std::string renderLineChart(const LineChart &c) {
  const double left = 64, right = 16, top = c.series.size() > 1 ? 54 : 36, bottom = 46;
  const double plotW = c.width - left - right, plotH = c.height - top - bottom;
  double xMax = 0, yMax = 0;
  for (const LineSeries &s : c.series)
    for (const auto &[x, y] : s.points) {
      xMax = std::max(xMax, x);
      yMax = std::max(yMax, y);
    }
  // The x axis ends at the last sample (a campaign of 20.03 s is not drawn
  // to 25 s); its ticks stop there.
  std::vector<double> xTicks = niceTicks(0, xMax > 0 ? xMax : 1);
  if (xMax > 0)
    while (xTicks.size() > 1 && xTicks.back() > xMax * 1.0001)
      xTicks.pop_back();
  std::vector<double> yTicks = niceTicks(0, yMax > 0 ? yMax : 1);
  double xEnd = xMax > 0 ? xMax : xTicks.back(), yEnd = std::max(yTicks.back(), yMax);
  auto px = [&](double x) { return left + plotW * x / xEnd; };
  auto py = [&](double y) { return top + plotH - plotH * y / yEnd; };

  std::string h = svgOpen(c.id, c.title, c.description, c.width, c.height);
  // Grid and tick labels.
  for (double t : yTicks)
    h += fmt::format("<line class=\"grid\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
                     "stroke=\"#e4e4e4\"/><text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{}</text>\n",
                     left, left + plotW, py(t), py(t), left - 6, py(t) + 4, tickText(t));
  for (double t : xTicks)
    h += fmt::format("<line class=\"tick-mark\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" "
                     "y2=\"{2:.1f}\" stroke=\"#888\"/><text class=\"tick\" x=\"{0:.1f}\" "
                     "y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
                     px(t), top + plotH, top + plotH + 5, top + plotH + 18, tickText(t));
  // Axes and their titles.
  h += fmt::format("<path class=\"axis\" d=\"M{0:.1f},{1:.1f}V{2:.1f}H{3:.1f}\" fill=\"none\" "
                   "stroke=\"#555\"/>\n",
                   left, top, top + plotH, left + plotW);
  h += fmt::format("<text class=\"axis-label\" x=\"{:.1f}\" y=\"{:.1f}\" "
                   "text-anchor=\"middle\">{}</text>\n",
                   left + plotW / 2, c.height - 8.0, escape(c.xLabel));
  h += fmt::format("<text class=\"axis-label\" transform=\"translate(14,{:.1f}) rotate(-90)\" "
                   "text-anchor=\"middle\">{}</text>\n",
                   top + plotH / 2, escape(c.yLabel));
  // Series, then the legend (top left, between the title and the plot).
  double legendX = left;
  for (const LineSeries &s : c.series) {
    std::string pts;
    for (const auto &[x, y] : s.points)
      pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", px(x), py(y));
    h += fmt::format("<polyline class=\"series\" data-series=\"{}\" fill=\"none\" "
                     "stroke=\"{}\" stroke-width=\"2\" stroke-linejoin=\"round\" "
                     "points=\"{}\"><title>{}</title></polyline>\n",
                     escape(s.name), escape(s.color), pts, escape(s.name));
    if (s.points.size() == 1) // a single sample: a dot, since a line needs two
      h += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n",
                       px(s.points[0].first), py(s.points[0].second), escape(s.color));
    if (c.series.size() > 1) {
      h += fmt::format("<g class=\"legend\"><rect x=\"{:.1f}\" y=\"32\" width=\"12\" "
                       "height=\"4\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"38\">{}</text></g>\n",
                       legendX, escape(s.color), legendX + 16, escape(s.name));
      legendX += 16 + textWidth(s.name) + 18;
    }
  }
  return h + "</svg>\n";
}

std::string renderBarChart(const BarChart &c) {
  const double rowH = 22, barH = 15, top = 34, bottom = 44, right = 84;
  double labelW = 60;
  for (const Bar &b : c.bars)
    labelW = std::max(labelW, textWidth(b.label));
  labelW = std::min(labelW, c.width * 0.45);
  const double left = labelW + 12;
  const double plotW = c.width - left - right;
  const double plotH = rowH * static_cast<double>(std::max<size_t>(1, c.bars.size()));
  const int height = static_cast<int>(top + plotH + bottom);
  double vMax = c.maxValue;
  for (const Bar &b : c.bars)
    vMax = std::max(vMax, b.value);
  std::vector<double> ticks = niceTicks(0, vMax > 0 ? vMax : 1);
  double vEnd = std::max(ticks.back(), vMax > 0 ? vMax : 1);
  auto px = [&](double v) { return left + plotW * v / vEnd; };

  std::string h = svgOpen(c.id, c.title, c.description, c.width, height);
  for (double t : ticks)
    h += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" "
                     "y2=\"{2:.1f}\" stroke=\"#e4e4e4\"/><text class=\"tick\" x=\"{0:.1f}\" "
                     "y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
                     px(t), top, top + plotH + 4, top + plotH + 17, tickText(t));
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const Bar &b = c.bars[i];
    double y = top + rowH * static_cast<double>(i) + (rowH - barH) / 2;
    std::string value = b.valueText.empty() ? tickText(b.value) : b.valueText;
    std::string tip = b.tooltip.empty() ? b.label + ": " + value : b.tooltip;
    std::string label = b.label;
    if (textWidth(label) > labelW) // cut to the label column; the tooltip has it whole
      label = label.substr(0, static_cast<size_t>(labelW / 6.8) - 1) + "\u2026";
    double w = std::max(0.0, px(b.value) - left);
    h += fmt::format("<g class=\"bar\" data-label=\"{}\"><title>{}</title>"
                     "<text class=\"bar-label\" x=\"{:.1f}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{}</text><rect x=\"{:.1f}\" y=\"{:.1f}\" "
                     "width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/><text class=\"bar-value\" "
                     "x=\"{:.1f}\" y=\"{:.1f}\">{}</text></g>\n",
                     escape(b.label), escape(tip), left - 6, y + barH - 3, escape(label), left, y,
                     w, barH, escape(c.color), left + w + 4, y + barH - 3, escape(value));
  }
  h += fmt::format("<path class=\"axis\" d=\"M{0:.1f},{1:.1f}V{2:.1f}H{3:.1f}\" fill=\"none\" "
                   "stroke=\"#555\"/>\n",
                   left, top, top + plotH, left + plotW);
  h += fmt::format("<text class=\"axis-label\" x=\"{:.1f}\" y=\"{:.1f}\" "
                   "text-anchor=\"middle\">{}</text>\n",
                   left + plotW / 2, height - 8.0, escape(c.valueLabel));
  return h + "</svg>\n";
}

} // namespace graphvet::props
