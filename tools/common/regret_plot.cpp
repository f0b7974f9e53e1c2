#include "common/regret_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/svg_text.hpp"
#include "dpstream/base/atomic_file.hpp"
#include "dpstream/base/errors.hpp"

namespace dpstream::tools {

namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Tick label: 0, 0.5, 250, 20k, 1.5M …, with as many decimals as the step needs.
std::string tick_label(double v, double step) {
  if (std::abs(v) < step * 1e-9) return "0";
  const char* suffix = "";
  double scale = 1.0;
  if (step >= 1e6 - 0.5) { suffix = "M"; scale = 1e6; }
  else if (step >= 1e3 - 0.5) { suffix = "k"; scale = 1e3; }
  const double s = step / scale;
  const int decimals = s >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(s) - 1e-9));
  return fixed(v / scale, std::min(decimals, 6)) + suffix;
}

struct Series {
  std::string label;
  std::string colour;
  bool dashed = false;
  std::vector<double> y;  // one per curve point
};

// Geometry: 800 × 500, plot area [x0, x1] × [y0, y1] (y0 at the top).
constexpr double W = 800, H = 500, x0 = 84, x1 = 772, y0 = 74, y1 = 428;

// The curves to draw and the scales that map them onto the plot area.
struct Plot {
  std::vector<double> xs;
  std::vector<Series> series;  // OPT first, then one per learner
  bool empty = true;
  double xmax = 1, ymin = 0, ymax = 1, xstep = 1, ystep = 1;
  double px(double x) const { return x0 + (x1 - x0) * x / xmax; }
  double py(double y) const { return y1 - (y1 - y0) * (y - ymin) / (ymax - ymin); }
};

// The points: (0, 0) first — before any row, OPT, gains and regret are all 0 — then the samples;
// each learner's legend gives its final regret as a share of OPT.
Plot collect(const eval::RegretMeter& meter, const std::vector<std::string>& labels) {
  // Colour-blind-safe palette (Okabe & Ito), the first two strongly distinct: vermilion, blue.
  static const char* kColours[] = {"#d55e00", "#0072b2", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"};
  const auto& names = meter.learners();
  const auto& curve = meter.curve();
  Plot p;
  p.empty = curve.empty();
  p.xs = {0.0};
  p.series.push_back({"OPT (best fixed k-subspace in hindsight)", "#7f7f7f", true, {0.0}});
  for (std::size_t i = 0; i < names.size(); ++i)
    p.series.push_back({labels[i], kColours[i % (sizeof kColours / sizeof *kColours)], false, {0.0}});
  for (const eval::RegretSample& s : curve) {
    p.xs.push_back(static_cast<double>(s.rows));
    p.series[0].y.push_back(s.opt);
    for (std::size_t i = 0; i < names.size(); ++i) p.series[i + 1].y.push_back(s.opt - s.gains[i]);
  }
  if (!curve.empty()) {
    const eval::RegretSample& last = curve.back();
    for (std::size_t i = 0; i < names.size(); ++i) {
      const double r = last.opt > 0 ? (last.opt - last.gains[i]) / last.opt : 0.0;
      const double pct = 100.0 * r;
      p.series[i + 1].label += ": regret " + fixed(pct, std::abs(pct) < 1 ? 2 : 1) + "% of OPT";
    }
  }
  p.xmax = p.xs.back() > 0 ? p.xs.back() : 1.0;
  for (const Series& s : p.series)
    for (double v : s.y)
      if (std::isfinite(v)) { p.ymin = std::min(p.ymin, v); p.ymax = std::max(p.ymax, v); }
  if (p.ymax <= p.ymin) p.ymax = p.ymin + 1.0;
  p.ystep = nice_step(p.ymax - p.ymin, 7);
  p.ymin = std::floor(p.ymin / p.ystep) * p.ystep;
  p.ymax = std::ceil(p.ymax / p.ystep) * p.ystep;
  p.xstep = nice_step(p.xmax, 8);
  return p;
}

// The title, the grid with its tick labels, the axes and their titles.
std::string frame(const Plot& p, const std::string& title, const std::string& subtitle) {
  const double xmax = p.xmax, ymin = p.ymin, ymax = p.ymax, xstep = p.xstep, ystep = p.ystep;
  auto px = [&](double x) { return p.px(x); };
  auto py = [&](double y) { return p.py(y); };
  std::string o;
  o.reserve(16384);
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"500\" viewBox=\"0 0 800 500\" "
       "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
  o += "<rect width=\"" + fixed(W, 0) + "\" height=\"" + fixed(H, 0) + "\" fill=\"#ffffff\"/>\n";
  o += "<text x=\"" + fixed(x0, 0) + "\" y=\"30\" font-size=\"19\" font-weight=\"bold\" fill=\"#111\">" +
       xml_escape(title) + "</text>\n";
  o += "<text x=\"" + fixed(x0, 0) + "\" y=\"52\" font-size=\"12.5\" fill=\"#444\">" + xml_escape(subtitle) +
       "</text>\n";

  // Grid and tick labels.
  o += "<g font-size=\"12\" fill=\"#333\">\n";
  for (double y = ymin; y <= ymax + ystep * 1e-6; y += ystep) {
    const std::string yy = fixed(py(y), 1);
    o += "<line x1=\"" + fixed(x0, 1) + "\" y1=\"" + yy + "\" x2=\"" + fixed(x1, 1) + "\" y2=\"" + yy +
         "\" stroke=\"" + (std::abs(y) < ystep * 1e-6 ? "#999" : "#e4e4e4") + "\" stroke-width=\"1\"/>\n";
    o += "<text x=\"" + fixed(x0 - 8, 1) + "\" y=\"" + fixed(py(y) + 4, 1) + "\" text-anchor=\"end\">" +
         tick_label(y, ystep) + "</text>\n";
  }
  for (double x = 0; x <= xmax + xstep * 1e-6; x += xstep) {
    const std::string xx = fixed(px(x), 1);
    o += "<line x1=\"" + xx + "\" y1=\"" + fixed(y0, 1) + "\" x2=\"" + xx + "\" y2=\"" + fixed(y1, 1) +
         "\" stroke=\"#f0f0f0\" stroke-width=\"1\"/>\n";
    o += "<line x1=\"" + xx + "\" y1=\"" + fixed(y1, 1) + "\" x2=\"" + xx + "\" y2=\"" + fixed(y1 + 5, 1) +
         "\" stroke=\"#333\" stroke-width=\"1\"/>\n";
    o += "<text x=\"" + xx + "\" y=\"" + fixed(y1 + 20, 1) + "\" text-anchor=\"middle\">" + tick_label(x, xstep) +
         "</text>\n";
  }
  o += "</g>\n";
  // Axes and their titles.
  o += "<path d=\"M" + fixed(x0, 1) + " " + fixed(y0, 1) + " V" + fixed(y1, 1) + " H" + fixed(x1, 1) +
       "\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.2\"/>\n";
  o += "<text x=\"" + fixed((x0 + x1) / 2, 1) + "\" y=\"" + fixed(H - 18, 1) +
       "\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">rows seen</text>\n";
  o += "<text transform=\"translate(20 " + fixed((y0 + y1) / 2, 1) +
       ") rotate(-90)\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">cumulative regret (OPT − gain)</text>\n";

  return o;
}

// The curves: OPT first (underneath), learners on top.
std::string curves(const Plot& p) {
  const auto& xs = p.xs;
  const auto& series = p.series;
  auto px = [&](double x) { return p.px(x); };
  auto py = [&](double y) { return p.py(y); };
  std::string o;
  if (p.empty) {
    o += "<text x=\"" + fixed((x0 + x1) / 2, 1) + "\" y=\"" + fixed((y0 + y1) / 2, 1) +
         "\" font-size=\"14\" text-anchor=\"middle\" fill=\"#999\">no curve samples</text>\n";
  } else {
    for (const Series& s : series) {
      o += "<polyline fill=\"none\" stroke=\"" + s.colour + "\" stroke-width=\"" + (s.dashed ? "1.6" : "2.4") +
           "\" stroke-linejoin=\"round\"" + (s.dashed ? " stroke-dasharray=\"7 5\"" : "") + " points=\"";
      for (std::size_t p = 0; p < xs.size(); ++p) {
        if (!std::isfinite(s.y[p])) continue;
        if (p) o += ' ';
        o += fixed(px(xs[p]), 1) + "," + fixed(py(s.y[p]), 1);
      }
      o += "\"/>\n";
    }
  }

  return o;
}

// Legend, top left inside the plot: learners first, then OPT.
std::string legend(const std::vector<Series>& series) {
  std::string o;
  const double lx = x0 + 14, ly = y0 + 12, row_h = 20;
  std::size_t longest = 0;
  for (const Series& s : series) longest = std::max(longest, s.label.size());
  const double lw = std::min(x1 - lx - 10, 44 + 6.9 * static_cast<double>(longest));
  o += "<rect x=\"" + fixed(lx - 8, 1) + "\" y=\"" + fixed(ly - 6, 1) + "\" width=\"" + fixed(lw, 1) +
       "\" height=\"" + fixed(row_h * static_cast<double>(series.size()) + 6, 1) +
       "\" fill=\"#ffffff\" fill-opacity=\"0.9\" stroke=\"#ccc\"/>\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[(i + 1) % series.size()];
    const double y = ly + row_h * static_cast<double>(i) + 8;
    o += "<line x1=\"" + fixed(lx, 1) + "\" y1=\"" + fixed(y, 1) + "\" x2=\"" + fixed(lx + 26, 1) + "\" y2=\"" +
         fixed(y, 1) + "\" stroke=\"" + s.colour + "\" stroke-width=\"" + (s.dashed ? "1.6" : "2.4") + "\"" +
         (s.dashed ? " stroke-dasharray=\"7 5\"" : "") + "/>\n";
    o += "<text x=\"" + fixed(lx + 34, 1) + "\" y=\"" + fixed(y + 4.5, 1) + "\" font-size=\"12.5\" fill=\"#222\">" +
         xml_escape(s.label) + "</text>\n";
  }
  return o;
}

}  // namespace

std::string regret_svg(const eval::RegretMeter& meter, const std::string& title, const std::string& subtitle,
                       const std::vector<std::string>& labels) {
  const auto& names = meter.learners();
  if (!labels.empty() && labels.size() != names.size())
    throw InvalidParameter("regret_svg: " + std::to_string(labels.size()) + " labels for " +
                           std::to_string(names.size()) + " learners");
  const Plot p = collect(meter, labels.empty() ? names : labels);
  return frame(p, title, subtitle) + curves(p) + legend(p.series) + "</svg>\n";
}

void write_regret_svg(const eval::RegretMeter& meter, const std::string& path, const std::string& title,
                      const std::string& subtitle, const std::vector<std::string>& labels) {
  base::write_file_atomically(path, regret_svg(meter, title, subtitle, labels));  // 0600, as the CSV
}

}  // namespace dpstream::tools
