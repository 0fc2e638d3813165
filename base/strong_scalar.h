// The operator set a quantity of one unit shares (Time, Bytes, Bandwidth): compare, add and subtract
// two of the same unit, scale by a plain number, divide two of the same unit into a plain number.
// Written once here as a CRTP base, so each unit says only what is its own: its name and how a number
// becomes one (Time: only through the named conversions; the double quantities Bytes, Bandwidth,
// Seconds and SecondsPerByte: DoubleScalar's explicit constructor and `.value()`, written once below).
// Each operator is the one operation on the number inside, so a quantity computes bit for bit what its
// raw number did.
//
// Scaling takes an integer for an integer unit (Time: no floating-point factor, the rounding is
// written at the call) and any arithmetic number for a floating-point unit (bytes, bytes/s).
#ifndef HETSIM_BASE_STRONG_SCALAR_H_
#define HETSIM_BASE_STRONG_SCALAR_H_

#include <compare>
#include <concepts>
#include <type_traits>
#include <utility>

namespace hetsim {

// K scales a quantity held in Rep.
template <typename K, typename Rep>
concept ScaleOf = std::integral<K> ||(std::floating_point<Rep>&& std::floating_point<K>);

template <typename Unit, typename Rep>
class StrongScalar {
 public:
  friend constexpr auto operator<=>(Unit a, Unit b) { return a.v_ <=> b.v_; }
  friend constexpr bool operator==(Unit a, Unit b) { return a.v_ == b.v_; }

  constexpr Unit& operator+=(Unit d) {
    v_ += d.v_;
    return self();
  }
  constexpr Unit& operator-=(Unit d) {
    v_ -= d.v_;
    return self();
  }
  template <ScaleOf<Rep> K>
  constexpr Unit& operator*=(K k) {
    v_ *= static_cast<Rep>(k);
    return self();
  }
  template <ScaleOf<Rep> K>
  constexpr Unit& operator/=(K k) {
    v_ /= static_cast<Rep>(k);
    return self();
  }

  friend constexpr Unit operator+(Unit a, Unit b) { return Make(a.v_ + b.v_); }
  friend constexpr Unit operator-(Unit a, Unit b) { return Make(a.v_ - b.v_); }
  friend constexpr Unit operator-(Unit a) { return Make(-a.v_); }
  template <ScaleOf<Rep> K>
  friend constexpr Unit operator*(Unit a, K k) {
    return Make(a.v_ * static_cast<Rep>(k));
  }
  template <ScaleOf<Rep> K>
  friend constexpr Unit operator*(K k, Unit a) {
    return Make(static_cast<Rep>(k) * a.v_);
  }
  template <ScaleOf<Rep> K>
  friend constexpr Unit operator/(Unit a, K k) {
    return Make(a.v_ / static_cast<Rep>(k));
  }
  // The ratio of two quantities of one unit: a plain number (truncated for an integer unit, as `t /
  // kNanosecond` counts whole nanoseconds).
  friend constexpr Rep operator/(Unit a, Unit b) { return a.v_ / b.v_; }

  template <typename H>
  friend H AbslHashValue(H h, Unit u) {
    return H::combine(std::move(h), u.v_);
  }

 protected:
  constexpr StrongScalar() = default;
  constexpr explicit StrongScalar(Rep v) : v_(v) {}
  constexpr Rep rep() const { return v_; }

 private:
  constexpr Unit& self() { return static_cast<Unit&>(*this); }
  // A unit from its number, without the unit's constructor (Time has none public).
  static constexpr Unit Make(Rep v) {
    Unit u;
    u.v_ = v;
    return u;
  }
  Rep v_ = 0;
};

// A quantity held in a double that a number enters and leaves by name: `Unit(2e-6)` in (explicit),
// `.value()` out. A unit is `class U : public DoubleScalar<U> { public: using DoubleScalar::DoubleScalar; };`
// plus what is its own (Bandwidth's `bytes_per_second()`).
template <typename Unit>
class DoubleScalar : public StrongScalar<Unit, double> {
 public:
  constexpr DoubleScalar() = default;
  constexpr explicit DoubleScalar(double v) : StrongScalar<Unit, double>(v) {}
  constexpr double value() const { return this->rep(); }
};

}  // namespace hetsim

#endif  // HETSIM_BASE_STRONG_SCALAR_H_
