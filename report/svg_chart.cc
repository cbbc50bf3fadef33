#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_text.h"

namespace lathe::report {
namespace {

// The plot area inside the SVG's view box.
constexpr double kWidth = 640, kHeight = 300;
constexpr double kLeft = 64, kRight = 16, kTop = 28, kBottom = 44;

std::string Coordinate(double v) { return absl::StrFormat("%.1f", v); }

struct Range {
  double lo, hi;
  double Map(double v, double from, double to) const {
    return hi > lo ? from + (v - lo) / (hi - lo) * (to - from)
                   : (from + to) / 2;
  }
};

// The range of `values` widened to round ticks; [0, 1] when empty.
Range RangeOf(const std::vector<double>& values, std::vector<double>& ticks) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi <= lo) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  ticks = NiceTicks(lo, hi, 5);
  return {std::min(lo, ticks.front()), std::max(hi, ticks.back())};
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int count) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || count < 1)
    return {lo};
  const double raw = (hi - lo) / count;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step) * step;
  for (int i = 0; i <= count * 3 + 2; ++i) {
    const double t = first + i * step;
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
    if (t >= hi) break;
  }
  return ticks;
}

SvgChart::SvgChart(std::string title, std::string x_label, std::string y_label)
    : title_(std::move(title)),
      x_label_(std::move(x_label)),
      y_label_(std::move(y_label)) {}

void SvgChart::AddPoint(double x, double y, const std::string& css,
                        const std::string& tip) {
  points_.push_back({x, y, css, tip});
  xs_.push_back(x);
  ys_.push_back(y);
}

void SvgChart::AddStepLine(std::vector<std::pair<double, double>> points,
                           const std::string& css, bool to_edge) {
  for (const auto& [x, y] : points) {
    xs_.push_back(x);
    ys_.push_back(y);
  }
  lines_.push_back({std::move(points), css, to_edge});
}

void SvgChart::AddHorizontalLine(double y, const std::string& css,
                                 const std::string& label) {
  hlines_.push_back({y, css, label});
  ys_.push_back(y);
}

void SvgChart::IncludeY(double y) { ys_.push_back(y); }
void SvgChart::IncludeX(double x) { xs_.push_back(x); }

std::string SvgChart::Render(const std::string& id) const {
  std::vector<double> x_ticks, y_ticks;
  const Range xr = RangeOf(xs_, x_ticks);
  const Range yr = RangeOf(ys_, y_ticks);
  const double x0 = kLeft, x1 = kWidth - kRight;
  const double y0 = kHeight - kBottom, y1 = kTop;
  auto X = [&](double v) { return xr.Map(v, x0, x1); };
  auto Y = [&](double v) { return yr.Map(v, y0, y1); };

  std::string svg = absl::StrCat(
      "<svg class=\"chart\" id=\"", HtmlEscape(id), "\" data-points=\"",
      points_.size(), "\" viewBox=\"0 0 ", kWidth, " ", kHeight,
      "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>",
      HtmlEscape(title_), "</title>\n<text class=\"ctitle\" x=\"", kLeft,
      "\" y=\"18\">", HtmlEscape(title_), "</text>\n");
  // Grid and ticks.
  for (double t : y_ticks) {
    const std::string y = Coordinate(Y(t));
    absl::StrAppend(&svg, "<line class=\"grid\" x1=\"", x0, "\" x2=\"", x1,
                    "\" y1=\"", y, "\" y2=\"", y,
                    "\"/><text class=\"tick\" x=\"", x0 - 6, "\" y=\"", y,
                    "\" text-anchor=\"end\" dy=\"4\">",
                    HtmlEscape(Number(t, 3)), "</text>\n");
  }
  for (double t : x_ticks) {
    const std::string x = Coordinate(X(t));
    absl::StrAppend(
        &svg, "<line class=\"grid\" x1=\"", x, "\" x2=\"", x, "\" y1=\"", y1,
        "\" y2=\"", y0, "\"/><text class=\"tick\" x=\"", x, "\" y=\"", y0 + 16,
        "\" text-anchor=\"middle\">", HtmlEscape(Number(t, 3)), "</text>\n");
  }
  absl::StrAppend(&svg, "<rect class=\"frame\" x=\"", x0, "\" y=\"", y1,
                  "\" width=\"", x1 - x0, "\" height=\"", y0 - y1, "\"/>\n");
  absl::StrAppend(&svg, "<text class=\"axis\" x=\"", (x0 + x1) / 2, "\" y=\"",
                  kHeight - 6, "\" text-anchor=\"middle\">",
                  HtmlEscape(x_label_), "</text>\n");
  absl::StrAppend(&svg, "<text class=\"axis\" transform=\"translate(14,",
                  (y0 + y1) / 2, ") rotate(-90)\" text-anchor=\"middle\">",
                  HtmlEscape(y_label_), "</text>\n");
  for (const HLine& h : hlines_) {
    const std::string y = Coordinate(Y(h.y));
    absl::StrAppend(&svg, "<line class=\"", HtmlEscape(h.css), "\" x1=\"", x0,
                    "\" x2=\"", x1, "\" y1=\"", y, "\" y2=\"", y,
                    "\"/><text class=\"hlabel\" x=\"", x1 - 4, "\" y=\"", y,
                    "\" dy=\"-4\" text-anchor=\"end\">", HtmlEscape(h.label),
                    "</text>\n");
  }
  for (const Line& line : lines_) {
    if (line.points.empty()) continue;
    std::string path;
    for (size_t i = 0; i < line.points.size(); ++i) {
      const auto& [x, y] = line.points[i];
      if (i == 0) {
        absl::StrAppend(&path, "M", Coordinate(X(x)), ",", Coordinate(Y(y)));
      } else {
        // Hold the previous value up to x, then step.
        absl::StrAppend(&path, " H", Coordinate(X(x)), " V", Coordinate(Y(y)));
      }
    }
    if (line.to_edge) absl::StrAppend(&path, " H", Coordinate(x1));
    absl::StrAppend(&svg, "<path class=\"", HtmlEscape(line.css), "\" d=\"",
                    path, "\"/>\n");
  }
  for (const Point& p : points_) {
    absl::StrAppend(&svg, "<circle class=\"pt ", HtmlEscape(p.css), "\" cx=\"",
                    Coordinate(X(p.x)), "\" cy=\"", Coordinate(Y(p.y)),
                    "\" r=\"3\"><title>", HtmlEscape(p.tip),
                    "</title></circle>\n");
  }
  absl::StrAppend(&svg, "</svg>\n");
  return svg;
}

std::string RenderBarChart(
    const std::string& id, const std::string& title,
    const std::vector<std::pair<std::string, double>>& bars,
    const std::string& unit) {
  constexpr double kRow = 22, kLabel = 300, kBarWidth = 300;
  const double height = kTop + kRow * static_cast<double>(bars.size()) + 8;
  double most = 0;
  for (const auto& [label, value] : bars) most = std::max(most, value);
  std::string svg = absl::StrCat(
      "<svg class=\"chart bars\" id=\"", HtmlEscape(id), "\" data-points=\"",
      bars.size(), "\" viewBox=\"0 0 ", kWidth, " ", Coordinate(height),
      "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>",
      HtmlEscape(title), "</title>\n<text class=\"ctitle\" x=\"8\" y=\"18\">",
      HtmlEscape(title), "</text>\n");
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& [label, value] = bars[i];
    const double y = kTop + kRow * static_cast<double>(i);
    const double w = most > 0 ? std::max(1.0, value / most * kBarWidth) : 1;
    // Long workload forms are cut on the chart; the tooltip has them whole.
    std::string shown = label;
    if (shown.size() > 44) {
      size_t cut = 43;  // not inside a UTF-8 sequence
      while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80)
        --cut;
      shown = shown.substr(0, cut) + "…";
    }
    absl::StrAppend(
        &svg, "<text class=\"tick\" x=\"", kLabel - 6, "\" y=\"", y + 14,
        "\" text-anchor=\"end\">", HtmlEscape(shown),
        "</text><rect class=\"pt bar\" x=\"", kLabel, "\" y=\"", y + 3,
        "\" width=\"", Coordinate(w), "\" height=\"", kRow - 6, "\"><title>",
        HtmlEscape(absl::StrCat(label, ": ", Number(value), unit)),
        "</title></rect><text class=\"tick\" x=\"", Coordinate(kLabel + w + 4),
        "\" y=\"", y + 14, "\">",
        HtmlEscape(absl::StrCat(Number(value, 3), unit)), "</text>\n");
  }
  absl::StrAppend(&svg, "</svg>\n");
  return svg;
}

}  // namespace lathe::report
