// Small pieces every page of the HTML reports is made of: escaping, numbers printed the same way
// everywhere (deterministic bytes), "nice" axis ticks, and the colour-blind-safe palette.
#ifndef HETSIM_TRACES_HTML_SVG_INTERNAL_H_
#define HETSIM_TRACES_HTML_SVG_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "traces/html/html_escape.h"  // HtmlEscape, for the pages and charts built on this file

namespace hetsim::traces::html {

// Okabe & Ito's palette (Color Universal Design), distinguishable with every common colour-vision
// deficiency. kSeries orders them for lines: blue, orange, bluish green, vermillion, reddish purple,
// sky blue, yellow, black.
inline constexpr const char* kBlue = "#0072B2";
inline constexpr const char* kOrange = "#E69F00";
inline constexpr const char* kGreen = "#009E73";
inline constexpr const char* kVermillion = "#D55E00";
inline constexpr const char* kPurple = "#CC79A7";
inline constexpr const char* kSky = "#56B4E9";
inline constexpr const char* kYellow = "#F0E442";
inline constexpr const char* kBlack = "#000000";
inline constexpr const char* kGrey = "#999999";
const char* SeriesColor(int i);  // kSeries[i % 8]

// A coordinate: one decimal, "-0.0" printed as "0".
std::string Coord(double v);
// A value for people: up to `digits` significant digits, no exponent below 1e15, no trailing zeros.
std::string Num(double v, int digits = 4);

// About `target` round tick values (1, 2 or 5 x 10^k apart) covering [lo, hi].
std::vector<double> NiceTicks(double lo, double hi, int target = 6);

}  // namespace hetsim::traces::html

#endif  // HETSIM_TRACES_HTML_SVG_INTERNAL_H_
