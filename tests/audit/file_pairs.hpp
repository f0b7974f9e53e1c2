// Fixtures of the end-to-end audits (audit_e2e_replay.cpp, audit_e2e_pca.cpp): neighbouring inputs
// written as real files, the tools' own chatter kept off the test's output, and the claim a tool's
// (ε, δ) makes as a Gaussian mechanism.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include <Eigen/Core>

#include "epsilon_audit.hpp"

namespace dpstream::audit {

// Rows as a headerless CSV file, every value with 17 significant digits (read back exactly).
inline void write_csv(const std::string& path, const Eigen::MatrixXd& rows) {
  std::ofstream out(path, std::ios::trunc);
  out.precision(17);
  for (Eigen::Index i = 0; i < rows.rows(); ++i) {
    for (Eigen::Index j = 0; j < rows.cols(); ++j) out << (j ? "," : "") << rows(i, j);
    out << '\n';
  }
  if (!out) throw std::runtime_error("write_csv: cannot write " + path);
}

// The largest row norm of `rows`: what a tool given "--clip-norm from the data" would be told.
inline double max_row_norm(const Eigen::MatrixXd& rows) { return rows.rowwise().norm().maxCoeff(); }

// Standard output sent to /dev/null while alive: a tool's run prints its "input:" line, thousands of
// times in an audit. The audit's own lines are printed outside.
class MutedStdout {
 public:
  MutedStdout() {
    std::fflush(stdout);
    saved_ = ::dup(STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    if (saved_ < 0 || null < 0) throw std::runtime_error("MutedStdout: cannot redirect stdout");
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  }
  ~MutedStdout() {
    std::fflush(stdout);
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
  MutedStdout(const MutedStdout&) = delete;
  MutedStdout& operator=(const MutedStdout&) = delete;

 private:
  int saved_ = -1;
};

// The μ whose Gaussian profile passes through (ε, δ): what a tightly calibrated Gaussian mechanism
// (the analytic Gaussian, or GDP composition of Gaussian releases) told "(ε, δ)" is. Bisection on
// gdp_epsilon, increasing in μ, to a relative 1e-12.
inline double mu_for_target(double epsilon, double delta) {
  double lo = 1e-6, hi = 1.0;
  while (gdp_epsilon(hi, delta) < epsilon) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (gdp_epsilon(mid, delta) < epsilon ? lo : hi) = mid;
  }
  return lo;  // the valid side: ε(lo) ≤ ε
}

}  // namespace dpstream::audit
