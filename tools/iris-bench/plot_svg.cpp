// Hand-written SVG log-log plots (see plot_svg.hpp).
#include "plot_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "iris/error.hpp"

namespace iris::bench {
namespace {

// One panel's geometry: the plot area inside it, and the legend to its right.
constexpr double kPanelW = 760, kPanelH = 420;
constexpr double kLeft = 72, kRight = 230, kTop = 36, kBottom = 52;
constexpr double kHeader = 64;

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string bytes_label(double log2_bytes) {
  const long long e = std::llround(log2_bytes);
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  const long long u = std::min<long long>(e / 10, 4);
  return std::to_string(1LL << (e - 10 * u)) + " " + units[u];
}

std::string decade_label(int e) {
  char b[32];
  if (e >= -3 && e <= 5) std::snprintf(b, sizeof b, "%g", std::pow(10.0, e));
  else std::snprintf(b, sizeof b, "1e%d", e);
  return b;
}

void panel(std::ostringstream& svg, const PlotPanel& p, double ox, double oy, const std::string& x_label,
           const std::string& y_label) {
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const PlotSeries& s : p.series) {
    for (auto [x, y] : s.points) {
      if (x <= 0 || y <= 0) continue;
      x0 = std::min(x0, std::log2(x));
      x1 = std::max(x1, std::log2(x));
      y0 = std::min(y0, std::log10(y));
      y1 = std::max(y1, std::log10(y));
    }
  }
  const double pw = kPanelW - kLeft - kRight, ph = kPanelH - kTop - kBottom;
  const double ax = ox + kLeft, ay = oy + kTop;  // plot area's top left
  svg << "<text x=\"" << num(ax + pw / 2) << "\" y=\"" << num(oy + 22)
      << "\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" << escape(p.title) << "</text>\n";
  svg << "<rect x=\"" << num(ax) << "\" y=\"" << num(ay) << "\" width=\"" << num(pw) << "\" height=\"" << num(ph)
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
  if (x0 > x1) {
    svg << "<text x=\"" << num(ax + pw / 2) << "\" y=\"" << num(ay + ph / 2)
        << "\" text-anchor=\"middle\" fill=\"#888\">nothing measured</text>\n";
    return;
  }
  x0 = std::floor(x0);
  x1 = std::max(std::ceil(x1), x0 + 1);
  y0 = std::floor(y0);
  y1 = std::max(std::ceil(y1), y0 + 1);
  auto X = [&](double lx) { return ax + (lx - x0) / (x1 - x0) * pw; };
  auto Y = [&](double ly) { return ay + ph - (ly - y0) / (y1 - y0) * ph; };
  // x ticks: powers of two, at most ~10 labelled (powers of 4, 16, ... when wider).
  const int step = std::max(1, static_cast<int>(std::ceil((x1 - x0) / 10)));
  for (double e = x0; e <= x1 + 1e-9; e += 1) {
    const bool labelled = static_cast<long long>(e - x0) % step == 0;
    svg << "<line x1=\"" << num(X(e)) << "\" y1=\"" << num(ay) << "\" x2=\"" << num(X(e)) << "\" y2=\""
        << num(ay + ph) << "\" stroke=\"" << (labelled ? "#ddd" : "#f2f2f2") << "\"/>\n";
    if (!labelled) continue;
    svg << "<line x1=\"" << num(X(e)) << "\" y1=\"" << num(ay + ph) << "\" x2=\"" << num(X(e)) << "\" y2=\""
        << num(ay + ph + 5) << "\" stroke=\"#333\"/>\n";
    svg << "<text x=\"" << num(X(e)) << "\" y=\"" << num(ay + ph + 18) << "\" text-anchor=\"middle\" font-size=\"11\">"
        << bytes_label(e) << "</text>\n";
  }
  // y ticks: decades labelled, 2..9 times each as light grid lines (2 and 5 labelled too
  // when the plot spans at most two decades).
  const bool minor_labels = y1 - y0 <= 2;
  for (int e = static_cast<int>(y0); e <= static_cast<int>(y1); ++e) {
    svg << "<line x1=\"" << num(ax - 5) << "\" y1=\"" << num(Y(e)) << "\" x2=\"" << num(ax + pw) << "\" y2=\""
        << num(Y(e)) << "\" stroke=\"#ddd\"/>\n";
    svg << "<text x=\"" << num(ax - 8) << "\" y=\"" << num(Y(e) + 4) << "\" text-anchor=\"end\" font-size=\"11\">"
        << decade_label(e) << "</text>\n";
    for (int m = 2; m <= 9 && e < static_cast<int>(y1); ++m) {
      const double ly = e + std::log10(m);
      svg << "<line x1=\"" << num(ax) << "\" y1=\"" << num(Y(ly)) << "\" x2=\"" << num(ax + pw) << "\" y2=\""
          << num(Y(ly)) << "\" stroke=\"#f2f2f2\"/>\n";
      if (minor_labels && (m == 2 || m == 5)) {
        char b[32];
        std::snprintf(b, sizeof b, "%g", m * std::pow(10.0, e));
        svg << "<text x=\"" << num(ax - 8) << "\" y=\"" << num(Y(ly) + 4)
            << "\" text-anchor=\"end\" font-size=\"10\" fill=\"#666\">" << b << "</text>\n";
      }
    }
  }
  svg << "<text x=\"" << num(ax + pw / 2) << "\" y=\"" << num(ay + ph + 38)
      << "\" text-anchor=\"middle\" font-size=\"12\">" << escape(x_label) << "</text>\n";
  svg << "<text transform=\"translate(" << num(ox + 18) << "," << num(ay + ph / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">" << escape(y_label) << "</text>\n";
  // Series, then the legend.
  double ly = ay + 6;
  for (const PlotSeries& s : p.series) {
    std::vector<std::pair<double, double>> pts;
    for (auto [x, y] : s.points) {
      if (x > 0 && y > 0) pts.emplace_back(std::log2(x), std::log10(y));
    }
    if (pts.empty()) continue;
    std::sort(pts.begin(), pts.end());
    const std::string dash = s.dashed   ? " stroke-dasharray=\"6,4\""
                             : s.dotted ? " stroke-dasharray=\"1.5,3\""
                                        : "";
    svg << "<polyline fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\"1.8\"" << dash << " points=\"";
    for (auto [lx, lyv] : pts) svg << num(X(lx)) << "," << num(Y(lyv)) << " ";
    svg << "\"/>\n";
    for (auto [lx, lyv] : pts) {
      svg << "<circle cx=\"" << num(X(lx)) << "\" cy=\"" << num(Y(lyv)) << "\" r=\"2.4\" fill=\"" << s.color
          << "\"/>\n";
    }
    const double lx = ax + pw + 14;
    svg << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(lx + 26) << "\" y2=\"" << num(ly)
        << "\" stroke=\"" << s.color << "\" stroke-width=\"2\"" << dash << "/>\n";
    svg << "<text x=\"" << num(lx + 32) << "\" y=\"" << num(ly + 4) << "\" font-size=\"11\">" << escape(s.label)
        << "</text>\n";
    ly += 16;
  }
}

}  // namespace

const char* plot_color(std::size_t i) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  return palette[i % (sizeof palette / sizeof *palette)];
}

void write_loglog_svg(const std::string& path, const std::string& title, const std::string& note,
                      const std::string& x_label, const std::string& y_label, const std::vector<PlotPanel>& panels) {
  const std::size_t cols = panels.size() > 1 ? 2 : 1;
  const std::size_t rows = std::max<std::size_t>(1, (panels.size() + cols - 1) / cols);
  const double w = kPanelW * static_cast<double>(cols), h = kHeader + kPanelH * static_cast<double>(rows);
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(w) << "\" height=\"" << num(h)
      << "\" viewBox=\"0 0 " << num(w) << " " << num(h) << "\" font-family=\"sans-serif\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << num(w / 2) << "\" y=\"26\" text-anchor=\"middle\" font-size=\"18\">" << escape(title)
      << "</text>\n";
  svg << "<text x=\"" << num(w / 2) << "\" y=\"48\" text-anchor=\"middle\" font-size=\"12\" fill=\"#555\">"
      << escape(note) << "</text>\n";
  for (std::size_t i = 0; i < panels.size(); ++i) {
    panel(svg, panels[i], kPanelW * static_cast<double>(i % cols), kHeader + kPanelH * static_cast<double>(i / cols),
          x_label, y_label);
  }
  svg << "</svg>\n";
  std::ofstream f(path);
  f << svg.str();
  if (!f) throw Error("cannot write " + path);
}

}  // namespace iris::bench
