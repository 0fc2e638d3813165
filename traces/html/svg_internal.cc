#include "traces/html/svg_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace hetsim::traces::html {

const char* SeriesColor(int i) {
  static constexpr const char* kSeries[] = {kBlue, kOrange, kGreen, kVermillion, kPurple, kSky, kYellow, kBlack};
  return kSeries[((i % 8) + 8) % 8];
}

std::string Coord(double v) {
  std::string s = absl::StrFormat("%.1f", v);
  if (s == "-0.0") s = "0.0";
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string Num(double v, int digits) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "inf" : "-inf");
  if (v == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  std::string s = absl::StrFormat("%.*f", decimals, v);
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(hi - lo)) return {lo};
  target = std::clamp(target, 1, 100);
  const double raw = (hi - lo) / target;
  // 10^|exponent| must be a finite double, and tick numbers k must fit int64: a range of denormals
  // (1e-310) or one far from zero for its width (1e18 +- 1) gets its two ends as ticks.
  if (!(raw >= 1e-290) || std::max(std::fabs(lo), std::fabs(hi)) / raw > 1e15) return {lo, hi};
  const int exponent = static_cast<int>(std::floor(std::log10(raw)));
  const double power = std::pow(10.0, std::abs(exponent));  // exact for the exponents charts see
  auto scaled = [&](double units) { return exponent >= 0 ? units * power : units / power; };
  int mantissa = 1;
  for (int m : {1, 2, 5, 10}) {
    mantissa = m;
    if (scaled(m) >= raw) break;
  }
  // Tick k is k * mantissa * 10^exponent, computed from integers so that 3 x 0.2 prints as 0.6.
  const double step = scaled(mantissa);
  std::vector<double> ticks;
  for (int64_t k = static_cast<int64_t>(std::ceil(lo / step - 1e-9));
       scaled(static_cast<double>(k * mantissa)) <= hi + step * 1e-9 &&
       ticks.size() <= 2 * static_cast<size_t>(target) + 2;
       ++k) {
    ticks.push_back(scaled(static_cast<double>(k * mantissa)));
  }
  return ticks;
}

}  // namespace hetsim::traces::html
