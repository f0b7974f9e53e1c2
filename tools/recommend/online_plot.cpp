// online_svg (online.hpp): the running RMSEs of an online replay against arrivals, 800 × 500,
// self-contained (no fonts, scripts or styles from outside): the model, the private baseline and
// the global mean, axes with ticks, a legend with each curve's final value.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/svg_text.hpp"
#include "common/text.hpp"
#include "recommend/online.hpp"

namespace dpstream::tools::recommend {

namespace {

constexpr double W = 800, H = 500, x0 = 84, x1 = 772, y0 = 74, y1 = 428;

struct Scale {
  double xmax = 1, ymin = 0, ymax = 1, xstep = 1, ystep = 0.1;
  double px(double x) const { return x0 + (x1 - x0) * x / xmax; }
  double py(double y) const { return y1 - (y1 - y0) * (y - ymin) / (ymax - ymin); }
};

// The y range covers every curve from the 5th arrival on (the first few users' RMSEs swing widely).
Scale scale_of(const std::vector<OnlinePoint>& curve) {
  Scale s;
  s.xmax = std::max<double>(1.0, static_cast<double>(curve.size()));
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t k = std::min<std::size_t>(4, curve.size() ? curve.size() - 1 : 0); k < curve.size(); ++k)
    for (const double v : {curve[k].rmse, curve[k].private_baseline_rmse, curve[k].global_mean_rmse})
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(lo < hi)) lo = std::isfinite(lo) ? lo - 0.5 : 0.0, hi = lo + 1.0;
  s.ystep = nice_step(hi - lo, 6);
  s.ymin = std::floor(lo / s.ystep) * s.ystep;
  s.ymax = std::ceil(hi / s.ystep) * s.ystep;
  s.xstep = nice_step(s.xmax, 8);
  return s;
}

std::string axes(const Scale& s) {
  std::string t = format("<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#444\"/>\n", x0, y0, x1 - x0, y1 - y0);
  for (double x = 0; x <= s.xmax + 1e-9; x += s.xstep)
    t += format("<text x=\"%.1f\" y=\"%g\" font-size=\"12\" text-anchor=\"middle\">%g</text>\n", s.px(x), y1 + 18, x);
  for (double y = s.ymin; y <= s.ymax + 1e-9 * s.ystep; y += s.ystep)
    t += format("<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                "<text x=\"%g\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%.3g</text>\n",
                x0, s.py(y), x1, s.py(y), x0 - 6, s.py(y) + 4, y);
  t += format("<text x=\"%g\" y=\"%g\" font-size=\"13\" text-anchor=\"middle\">users arrived</text>\n", (x0 + x1) / 2, y1 + 40);
  t += format("<text x=\"18\" y=\"%g\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 18 %g)\">"
              "running test RMSE</text>\n", (y0 + y1) / 2, (y0 + y1) / 2);
  return t;
}

std::string polyline(const std::vector<OnlinePoint>& curve, const Scale& s, double OnlinePoint::*field,
                     const char* colour, bool dashed) {
  std::string t = format("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s points=\"", colour,
                         dashed ? " stroke-dasharray=\"6 4\"" : "");
  for (const OnlinePoint& p : curve) {
    const double y = std::clamp(p.*field, s.ymin, s.ymax);
    if (std::isfinite(y)) t += format("%.1f,%.1f ", s.px(static_cast<double>(p.arrival)), s.py(y));
  }
  return t + "\"/>\n";
}

}  // namespace

std::string online_svg(const std::vector<OnlinePoint>& curve, const std::string& title, const std::string& subtitle) {
  const Scale s = scale_of(curve);
  std::string t = format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
                         "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H, W, H);
  t += "<text x=\"400\" y=\"28\" font-size=\"17\" text-anchor=\"middle\">" + xml_escape(title) + "</text>\n";
  t += "<text x=\"400\" y=\"50\" font-size=\"11\" text-anchor=\"middle\" fill=\"#555\">" + xml_escape(subtitle) + "</text>\n";
  t += axes(s);
  if (curve.empty()) return t + "<text x=\"400\" y=\"250\" text-anchor=\"middle\">no user arrived</text>\n</svg>\n";
  struct Line {
    double OnlinePoint::*field;
    const char* colour;
    bool dashed;
    const char* label;
  };
  const Line lines[] = {{&OnlinePoint::rmse, "#1f77b4", false, "online private model"},
                        {&OnlinePoint::private_baseline_rmse, "#ff7f0e", false, "private baseline (same release)"},
                        {&OnlinePoint::global_mean_rmse, "#888", true, "global mean (non-private)"}};
  double ly = y0 + 16;
  for (const Line& l : lines) {
    t += polyline(curve, s, l.field, l.colour, l.dashed);
    t += format("<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", x1 - 250, ly - 4,
                x1 - 226, ly - 4, l.colour, l.dashed ? " stroke-dasharray=\"6 4\"" : "");
    t += format("<text x=\"%g\" y=\"%g\" font-size=\"12\">%s: %.4f</text>\n", x1 - 220, ly, l.label, curve.back().*(l.field));
    ly += 18;
  }
  return t + "</svg>\n";
}

}  // namespace dpstream::tools::recommend
