// Input checks shared by the pca/ implementations (internal header, not installed).
#pragma once

#include <cmath>
#include <string>

#include <Eigen/Core>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"

namespace dpstream::pca::detail {

// "rows x cols", for messages.
inline std::string dims(Eigen::Index rows, Eigen::Index cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

// Non-empty and finite; InvalidParameter naming `fn` and the first non-finite entry (column-major).
inline void require_finite_matrix(const char* fn, const Eigen::Ref<const Eigen::MatrixXd>& a) {
  if (a.rows() == 0 || a.cols() == 0)
    throw InvalidParameter(std::string(fn) + ": matrix must be non-empty, got " + std::to_string(a.rows()) + "x" +
                           std::to_string(a.cols()));
  if (a.allFinite()) return;
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = 0; i < a.rows(); ++i)
      if (!std::isfinite(a(i, j)))
        throw InvalidParameter(std::string(fn) + ": matrix(" + std::to_string(i) + "," + std::to_string(j) +
                               ") is not finite, got " + base::format_value(a(i, j)));
}

}  // namespace dpstream::pca::detail
