// One chart of the HTML report as inline SVG, written by hand: linear axes
// with round ticks, points (each an element of class "pt", with a tooltip),
// step lines, horizontal reference lines and horizontal bars. No script
// draws anything: the page shows the same without JavaScript.
//
// The <svg> carries data-points, the number of elements of class "pt" it
// holds, so that a test (or the page's own check) can compare what was drawn
// with what was meant to be. Every text given (titles, labels, tooltips,
// CSS classes) is escaped.
// Tests: tests/report/report_html_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lathe::report {

class SvgChart {
 public:
  SvgChart(std::string title, std::string x_label, std::string y_label);

  // A point at (x, y) drawn with CSS class `css` (besides "pt"); `tip` is
  // its tooltip.
  void AddPoint(double x, double y, const std::string& css,
                const std::string& tip);
  // A line through `points` (sorted by x), each value held until the next
  // x; extended to the chart's right edge when `to_edge`.
  void AddStepLine(std::vector<std::pair<double, double>> points,
                   const std::string& css, bool to_edge);
  // A horizontal line at y across the chart, labelled at its right end.
  void AddHorizontalLine(double y, const std::string& css,
                         const std::string& label);
  // The y range includes these values (e.g. 0 and 1 for an accuracy).
  void IncludeY(double y);
  void IncludeX(double x);

  // The SVG element; `id` is its element id (escaped).
  std::string Render(const std::string& id) const;

  int64_t points() const { return static_cast<int64_t>(points_.size()); }

 private:
  struct Point {
    double x, y;
    std::string css, tip;
  };
  struct Line {
    std::vector<std::pair<double, double>> points;
    std::string css;
    bool to_edge;
  };
  struct HLine {
    double y;
    std::string css, label;
  };
  std::string title_, x_label_, y_label_;
  std::vector<Point> points_;
  std::vector<Line> lines_;
  std::vector<HLine> hlines_;
  std::vector<double> xs_, ys_;  // every value the ranges must cover
};

// Horizontal bars, one per row: a label and a value (e.g. a task's share of
// a model's latency); each bar is an element of class "pt".
std::string RenderBarChart(
    const std::string& id, const std::string& title,
    const std::vector<std::pair<std::string, double>>& bars,
    const std::string& unit);

// Round tick values covering [lo, hi] (about `count` of them).
std::vector<double> NiceTicks(double lo, double hi, int count);

}  // namespace lathe::report
