// Log-log line plots written as SVG by hand (no plotting library): panels side by side,
// each with axes, decade ticks, a legend, and one polyline per series.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace iris::bench {

struct PlotSeries {
  std::string label;
  std::string color;  // any SVG colour
  bool dashed = false;
  bool dotted = false;  // a third line style (dashed wins where both are set)
  std::vector<std::pair<double, double>> points;  // (x, y), both > 0; others are left out
};

struct PlotPanel {
  std::string title;
  std::vector<PlotSeries> series;
};

// A distinct colour for the i-th series of a plot (a fixed palette, repeating).
const char* plot_color(std::size_t i);

// Writes `panels` (two per row) to `path`: x is a byte count (ticks at powers of two,
// labelled "8 B", "4 KiB", ...), y a positive value on decades labelled with `y_label`'s
// unit. `note` goes under the title (e.g. what dashed lines mean). Throws iris::Error
// when the file cannot be written.
void write_loglog_svg(const std::string& path, const std::string& title, const std::string& note,
                      const std::string& x_label, const std::string& y_label, const std::vector<PlotPanel>& panels);

}  // namespace iris::bench
