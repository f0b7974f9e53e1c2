// Forward-mode automatic differentiation for the BLT optimiser (blt_optimizer.cpp): a value and its
// gradient with respect to up to kMaxParameters inputs. The closed-form losses (blt_closed_form.hpp)
// are templates on the scalar type, so the same code gives the value (double) and the exact
// gradient (Dual) that L-BFGS needs; no finite differences, whose error near buf_decay → 1 would
// swamp the 1e-5 agreement the golden test asks of the parameters.
// Internal header (not installed). Storage is fixed-capacity: no allocation per operation.
#pragma once

#include <cmath>

#include <Eigen/Core>

namespace dpstream::stream::detail {

inline constexpr int kMaxParameters = 32;  // 2 × 15 buffers, the optimiser's limit, fits

struct Dual {
  using Gradient = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxParameters, 1>;
  double v = 0;
  Gradient d;

  Dual() = default;
  Dual(double value, Eigen::Index parameters) : v(value), d(Gradient::Zero(parameters)) {}
  template <class Derived>
  Dual(double value, const Eigen::MatrixBase<Derived>& gradient) : v(value), d(gradient) {}
  // The i-th of `parameters` independent variables.
  static Dual variable(double value, Eigen::Index i, Eigen::Index parameters) {
    Dual x(value, parameters);
    x.d(i) = 1;
    return x;
  }
};

// A constant promoted to the scalar type T (the size of a Dual's gradient comes from `like`).
inline double constant(double c, double /*like*/) { return c; }
inline Dual constant(double c, const Dual& like) { return Dual(c, like.d.size()); }
inline double value(double x) { return x; }
inline double value(const Dual& x) { return x.v; }

inline Dual operator-(const Dual& a) { return {-a.v, -a.d}; }
inline Dual operator+(const Dual& a, const Dual& b) { return {a.v + b.v, a.d + b.d}; }
inline Dual operator-(const Dual& a, const Dual& b) { return {a.v - b.v, a.d - b.d}; }
inline Dual operator*(const Dual& a, const Dual& b) { return {a.v * b.v, b.v * a.d + a.v * b.d}; }
inline Dual operator/(const Dual& a, const Dual& b) {
  return {a.v / b.v, (a.d - (a.v / b.v) * b.d) / b.v};
}
inline Dual operator+(const Dual& a, double b) { return {a.v + b, a.d}; }
inline Dual operator+(double a, const Dual& b) { return {a + b.v, b.d}; }
inline Dual operator-(const Dual& a, double b) { return {a.v - b, a.d}; }
inline Dual operator-(double a, const Dual& b) { return {a - b.v, -b.d}; }
inline Dual operator*(const Dual& a, double b) { return {a.v * b, b * a.d}; }
inline Dual operator*(double a, const Dual& b) { return {a * b.v, a * b.d}; }
inline Dual operator/(const Dual& a, double b) { return {a.v / b, a.d / b}; }
inline Dual operator/(double a, const Dual& b) { return {a / b.v, (-a / (b.v * b.v)) * b.d}; }
inline Dual& operator+=(Dual& a, const Dual& b) { return a = a + b; }
inline Dual& operator-=(Dual& a, const Dual& b) { return a = a - b; }
inline Dual& operator*=(Dual& a, const Dual& b) { return a = a * b; }

inline Dual log(const Dual& a) { return {std::log(a.v), a.d / a.v}; }
inline Dual exp(const Dual& a) {
  const double e = std::exp(a.v);
  return {e, e * a.d};
}
inline Dual log1p(const Dual& a) { return {std::log1p(a.v), a.d / (1 + a.v)}; }
inline Dual expm1(const Dual& a) { return {std::expm1(a.v), std::exp(a.v) * a.d}; }

// expm1(z) − z, accurate where the difference cancels (|z| small: its Taylor series from z²/2).
inline double expm1mx(double z) {
  if (std::abs(z) >= 0.5) return std::expm1(z) - z;
  double term = z * z / 2, sum = 0;
  for (int k = 3; k < 40 && std::abs(term) > 1e-18 * std::abs(sum); ++k) {
    sum += term;
    term *= z / k;
  }
  return sum;
}
inline Dual expm1mx(const Dual& z) { return {expm1mx(z.v), std::expm1(z.v) * z.d}; }

// log(1 − u) + u for u < 1, accurate where the sum cancels (small u: −Σ_{k≥2} u^k/k).
inline double log1mpx(double u) {
  if (std::abs(u) >= 0.1) return std::log1p(-u) + u;
  double power = u * u, sum = 0;
  for (int k = 2; k < 60 && std::abs(power) / k > 1e-18 * std::abs(sum); ++k) {
    sum -= power / k;
    power *= u;
  }
  return sum;
}
inline Dual log1mpx(const Dual& u) { return {log1mpx(u.v), (-u.v / (1 - u.v)) * u.d}; }

}  // namespace dpstream::stream::detail
