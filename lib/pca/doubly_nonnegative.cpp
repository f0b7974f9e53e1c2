#include "dpstream/pca/doubly_nonnegative.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/mirror.hpp"
#include "dpstream/linalg/psd_projection.hpp"
#include "dpstream/pca/subspace.hpp"
#include "symmetric_input.hpp"
#include "linalg/matrix_message.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;

namespace {

// Orthant projection on the lower triangle (contiguous in each column), then mirrored: the result is
// exactly symmetric (released covariances are).
void clip_nonnegative_symmetric(Eigen::Ref<MatrixXd> c) {
  const Index d = c.rows();
  for (Index j = 0; j < d; ++j) {
    double* column = &c(0, j);
    for (Index i = j; i < d; ++i) column[i] = column[i] > 0 ? column[i] : 0.0;
  }
  linalg::mirror_lower(c);
}

// max(c + n, 0) entrywise on the lower triangle (n exactly symmetric: mirrored, so is the result).
void clip_corrected_lower(Eigen::Ref<MatrixXd> c, const MatrixXd& n) {
  const Index d = c.rows();
  for (Index j = 0; j < d; ++j) {
    double* column = &c(0, j);
    const double* correction = &n(0, j);
    for (Index i = j; i < d; ++i) {
      const double sum = column[i] + correction[i];
      column[i] = sum > 0 ? sum : 0.0;
    }
  }
}

}  // namespace

void project_doubly_nonnegative(Eigen::Ref<MatrixXd> c, int rounds) {
  if (rounds < 1)
    throw InvalidParameter("project_doubly_nonnegative: rounds must be >= 1, got " + std::to_string(rounds));
  require_symmetric("project_doubly_nonnegative", c);
  for (int round = 0; round < rounds; ++round) {
    linalg::project_psd(c);  // reads the lower triangle, which the last round left equal to the upper
    clip_nonnegative_symmetric(c);
  }
}

DoublyNonnegativeReader::DoublyNonnegativeReader(Index d, DoublyNonnegativeOptions options)
    : d_(d), options_(options) {
  if (d < 1) throw InvalidParameter("DoublyNonnegativeReader: d must be >= 1, got " + std::to_string(d));
  if (options.rounds < 1)
    throw InvalidParameter("DoublyNonnegativeReader: rounds must be >= 1, got " + std::to_string(options.rounds));
  if (!std::isfinite(options.refresh_ratio) || options.refresh_ratio < 0)
    throw InvalidParameter("DoublyNonnegativeReader: refresh_ratio must be finite and >= 0, got " +
                           std::to_string(options.refresh_ratio));
}

bool DoublyNonnegativeReader::full_release(std::uint64_t t, std::uint64_t last_full, double refresh_ratio) {
  if (last_full == 0 || t <= last_full) return true;
  return static_cast<double>(t - last_full) > refresh_ratio * static_cast<double>(last_full);
}

void DoublyNonnegativeReader::full_projection(const Eigen::Ref<const MatrixXd>& c, MatrixXd& out,
                                              linalg::PsdProjector& projector) {
  out = c;
  linalg::mirror_lower(out);  // the lower triangle is what is read: mirrored first, so that N is exactly symmetric
  projector.project(out);
}

void DoublyNonnegativeReader::check_release(const char* fn, const Eigen::Ref<const MatrixXd>& c,
                                            bool lower_only) const {
  if (c.rows() != d_ || c.cols() != d_)
    throw InvalidParameter(std::string(fn) + ": a " + std::to_string(c.rows()) + " x " + std::to_string(c.cols()) +
                           " matrix, expected " + std::to_string(d_) + " x " + std::to_string(d_));
  if (lower_only)
    detail::require_finite_lower(fn, c);
  else
    require_symmetric(fn, c);
}

void DoublyNonnegativeReader::apply(Eigen::Ref<MatrixXd> c) { read("DoublyNonnegativeReader::apply", c, false); }

void DoublyNonnegativeReader::apply_lower(Eigen::Ref<MatrixXd> c) {
  read("DoublyNonnegativeReader::apply_lower", c, true);
}

void DoublyNonnegativeReader::read(const char* fn, Eigen::Ref<MatrixXd> c, bool lower_only) {
  check_release(fn, c, lower_only);
  if (next_is_full()) {
    full_projection(c, projected_, projector_);
    read_full(c, projected_);
  } else {
    clip_corrected_lower(c, correction_);
    if (!lower_only) linalg::mirror_lower(c);
    ++releases_;
  }
}

void DoublyNonnegativeReader::apply_projected(Eigen::Ref<MatrixXd> c, const MatrixXd& projected) {
  read_projected("DoublyNonnegativeReader::apply_projected", c, projected, false);
}

void DoublyNonnegativeReader::apply_projected_lower(Eigen::Ref<MatrixXd> c, const MatrixXd& projected) {
  read_projected("DoublyNonnegativeReader::apply_projected_lower", c, projected, true);
}

void DoublyNonnegativeReader::read_projected(const char* fn, Eigen::Ref<MatrixXd> c, const MatrixXd& projected,
                                             bool lower_only) {
  check_release(fn, c, lower_only);
  if (!next_is_full())
    throw InvalidParameter(std::string(fn) + ": release " + std::to_string(releases_ + 1) +
                           " is not a full release (the last was " + std::to_string(last_full_) + ")");
  if (projected.rows() != d_ || projected.cols() != d_)
    throw InvalidParameter(std::string(fn) + ": the projection is " + std::to_string(projected.rows()) + " x " +
                           std::to_string(projected.cols()) + ", expected " + std::to_string(d_) + " x " +
                           std::to_string(d_));
  read_full(c, projected);
}

// A full release: N = P₊(C) − C (both exactly symmetric, so is N), then C ← P₊(C) and the orthant.
void DoublyNonnegativeReader::read_full(Eigen::Ref<MatrixXd> c, const MatrixXd& projected) {
  linalg::mirror_lower(c);
  correction_ = projected - c;
  c = projected;
  clip_nonnegative_symmetric(c);
  for (int round = 1; round < options_.rounds; ++round) {
    projector_.project(c);
    clip_nonnegative_symmetric(c);
  }
  last_full_ = ++releases_;
  ++full_solves_;
}

DoublyNonnegativeReader::State DoublyNonnegativeReader::state() const {
  return {releases_, full_solves_, last_full_, correction_};
}

void DoublyNonnegativeReader::restore(const State& s) {
  const std::string where = "DoublyNonnegativeReader::restore: ";
  if (s.full_solves > s.releases || s.last_full > s.releases || (s.releases > 0) != (s.last_full > 0) ||
      (s.last_full > 0) != (s.full_solves > 0))
    throw InvalidParameter(where + "inconsistent counts (releases " + std::to_string(s.releases) + ", full solves " +
                           std::to_string(s.full_solves) + ", last full release " + std::to_string(s.last_full) + ")");
  const Index expected = s.last_full > 0 ? d_ : 0;
  if (s.correction.rows() != expected || s.correction.cols() != expected)
    throw InvalidParameter(where + "correction is " + std::to_string(s.correction.rows()) + " x " +
                           std::to_string(s.correction.cols()) + ", expected " + std::to_string(expected) + " x " +
                           std::to_string(expected));
  if (expected > 0) require_symmetric("DoublyNonnegativeReader::restore: correction", s.correction);
  releases_ = s.releases;
  full_solves_ = s.full_solves;
  last_full_ = s.last_full;
  correction_ = s.correction;
}

// The correction is exactly symmetric (doubly_nonnegative.hpp), so it always goes packed.
void DoublyNonnegativeReader::State::save(proto::DoublyNonnegativeReader& out) const {
  const State& s = *this;
  out.set_releases(s.releases);
  out.set_full_solves(s.full_solves);
  out.set_last_full(s.last_full);
  const Eigen::MatrixXd& n = s.correction;
  if (n.rows() != n.cols() || n != n.transpose())
    throw InvalidParameter("DoublyNonnegativeReader state: the correction is not exactly symmetric");
  auto& c = *out.mutable_correction();
  c.set_size(n.rows());
  c.mutable_lower()->Resize(static_cast<int>(n.rows() * (n.rows() + 1) / 2), 0.0);
  linalg::pack_lower(n, Eigen::Map<Eigen::VectorXd>(c.mutable_lower()->mutable_data(), c.lower_size()));
}

DoublyNonnegativeReader::State DoublyNonnegativeReader::State::load(const proto::DoublyNonnegativeReader& m,
                                                                    const std::string& field) {
  State s;
  s.releases = m.releases();
  s.full_solves = m.full_solves();
  s.last_full = m.last_full();
  linalg::unpack_lower(linalg::load_packed(m.correction(), field + ".correction"), s.correction);
  return s;
}

}  // namespace dpstream::pca
