// Small static SVG charts for the campaign report: a line chart (several
// series over one x axis) and a horizontal bar chart, with titled axes, tick
// values, a <title>/<desc> and role="img" for screen readers. Plain SVG text,
// no script and no external resources, so the report stays one file.
//
// Stable markup for tests and scripts: the root <svg class="chart" id=ID>,
// one <polyline class="series" data-series=NAME points="x,y ..."> per line
// series (one pair per point), one <g class="bar" data-label=LABEL> per bar.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace graphvet::props {

struct LineSeries {
  std::string name;                              ///< legend text
  std::string color;                             ///< CSS colour
  std::vector<std::pair<double, double>> points; ///< (x, y), x ascending
};

struct LineChart {
  std::string id;          ///< element id, unique in the page
  std::string title;       ///< drawn above the plot, and the SVG <title>
  std::string description; ///< the SVG <desc> (screen readers)
  std::string xLabel, yLabel;
  std::vector<LineSeries> series;
  int width = 580, height = 300;
};

struct Bar {
  std::string label;
  double value = 0;
  std::string valueText; ///< shown at the bar's end ("" = the value)
  std::string tooltip;   ///< the bar's <title> ("" = label: valueText)
};

struct BarChart {
  std::string id;
  std::string title;
  std::string description;
  std::string valueLabel; ///< the value axis title
  std::vector<Bar> bars;  ///< drawn top to bottom in this order
  double maxValue = 0;    ///< the value axis end; 0 = from the data
  std::string color = "#4878d0";
  int width = 640;
};

std::string renderLineChart(const LineChart &chart);
std::string renderBarChart(const BarChart &chart);

/// Tick values covering [lo, hi] at a 1-2-5 step, about `count` of them.
std::vector<double> niceTicks(double lo, double hi, int count = 5);

} // namespace graphvet::props
