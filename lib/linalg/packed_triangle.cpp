#include "dpstream/linalg/packed_triangle.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"

namespace dpstream::linalg {

void pack_lower(const Eigen::MatrixXd& m, Eigen::Ref<Eigen::VectorXd> out) {
  const Eigen::Index d = m.rows();
  if (m.cols() != d || out.size() != d * (d + 1) / 2)
    throw InvalidParameter("pack_lower: a " + std::to_string(d) + " x " + std::to_string(m.cols()) + " matrix into " +
                           std::to_string(out.size()) + " values (a d x d matrix needs d(d+1)/2)");
  for (Eigen::Index j = 0, offset = 0; j < d; offset += d - j, ++j) out.segment(offset, d - j) = m.col(j).tail(d - j);
}

Eigen::Index packed_side(Eigen::Index n, const std::string& what) {
  // d(d+1)/2 = n  ⇒  d = (√(8n+1) − 1)/2, checked exactly below (n < 0 first: its root is NaN, and
  // casting NaN to an integer is undefined).
  const auto fail = [&] {
    return InvalidParameter(what + ": " + std::to_string(n) + " values are no packed triangle d(d+1)/2");
  };
  if (n < 0) throw fail();
  const auto d = static_cast<Eigen::Index>((std::sqrt(8.0 * static_cast<double>(n) + 1.0) - 1.0) / 2.0 + 0.5);
  if (d * (d + 1) / 2 != n) throw fail();
  return d;
}

}  // namespace dpstream::linalg
