#include "tridiagonal_side.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

// LAPACK (liblapack3, reference or any other provider). gfortran passes each CHARACTER argument's
// length after the others.
extern "C" {
void dstemr_(const char* jobz, const char* range, const int* n, double* d, double* e, const double* vl,
             const double* vu, const int* il, const int* iu, int* m, double* w, double* z, const int* ldz,
             const int* nzc, int* isuppz, int* tryrac, double* work, const int* lwork, int* iwork, const int* liwork,
             int* info, std::size_t jobz_length, std::size_t range_length);
double dlamch_(const char* cmach, std::size_t cmach_length);
void dlarrr_(const int* n, const double* d, const double* e, int* info);
void dlarre_(const char* range, const int* n, double* vl, double* vu, const int* il, const int* iu, double* d,
             double* e, double* e2, const double* rtol1, const double* rtol2, const double* spltol, int* nsplit,
             int* isplit, int* m, double* w, double* werr, double* wgap, int* iblock, int* indexw, double* gers,
             double* pivmin, double* work, int* iwork, int* info, std::size_t range_length);
void dlarrv_(const int* n, const double* vl, const double* vu, double* d, double* l, const double* pivmin,
             const int* isplit, const int* m, const int* dol, const int* dou, const double* minrgp, const double* rtol1,
             const double* rtol2, double* w, double* werr, double* wgap, const int* iblock, const int* indexw,
             const double* gers, double* z, const int* ldz, int* isuppz, double* work, int* iwork, int* info);
void dlarrj_(const int* n, const double* d, const double* e2, const int* ifirst, const int* ilast, const double* rtol,
             const int* offset, double* w, double* werr, double* work, int* iwork, const double* pivmin,
             const double* spdiam, int* info);
}

namespace dpstream::linalg::detail {

using Eigen::Index;
using Eigen::VectorXd;

bool TridiagonalSide::compute(const VectorXd& a, const VectorXd& b) {
  // dstemr answers n ≤ 2 in closed form, before its stages.
  side_only_ = a.size() > 2 && side_by_stages(a, b);
  return side_only_ || all_by_dstemr(a, b);
}

// T into LAPACK's copies (it overwrites them; its E has n entries, the last one free); returns n.
int TridiagonalSide::load(const VectorXd& a, const VectorXd& b) {
  const int n = static_cast<int>(a.size());
  diagonal_ = a;
  off_.resize(n);
  off_.head(n - 1) = b;
  off_(n - 1) = 0;
  return n;
}

// The smaller side of 0 among values (ascending) once `shift` is added to each.
void TridiagonalSide::choose_side(const VectorXd& signed_values, double shift) {
  const Index n = signed_values.size();
  Index negatives = 0;
  while (negatives < n && signed_values(negatives) + shift <= 0) ++negatives;
  negative_ = negatives <= n - negatives;
  first_ = negative_ ? 0 : negatives;
  count_ = negative_ ? negatives : n - negatives;
}

// dstemr's stages for JOBZ = 'V', RANGE = 'A', TRYRAC (LAPACK 3.11's dstemr.f, the general-n part),
// with dlarrv's DOL:DOU the side. False where dstemr has to answer instead (see the header).
bool TridiagonalSide::side_by_stages(const VectorXd& a, const VectorXd& b) {
  const int n = load(a, b);
  // Scaling into the range where the Sturm counts cannot over- or underflow (dstemr's).
  const double safe_min = dlamch_("S", 1), eps = dlamch_("P", 1);
  const double small = safe_min / eps, r_min = std::sqrt(small);
  const double r_max = std::min(std::sqrt(1 / small), 1 / std::sqrt(std::sqrt(safe_min)));
  double t_norm = std::max(diagonal_.cwiseAbs().maxCoeff(), off_.head(n - 1).cwiseAbs().maxCoeff());
  double scale = 1;
  if (t_norm > 0 && t_norm < r_min)
    scale = r_min / t_norm;
  else if (t_norm > r_max)
    scale = r_max / t_norm;
  if (scale != 1) {
    diagonal_ *= scale;
    off_.head(n - 1) *= scale;
    t_norm *= scale;
  }
  int info = 0;
  dlarrr_(&n, diagonal_.data(), off_.data(), &info);
  const bool relative = info == 0;  // T warrants relatively accurate eigenvalues
  const double split_tolerance = relative ? eps : -eps;

  // dstemr's workspace layout: Gerschgorin intervals, errors, gaps, T's diagonal, E², then 12n for the
  // stages; split points, blocks, indices within blocks, then 7n.
  const std::size_t un = static_cast<std::size_t>(n);
  work_.assign(18 * un, 0.0);
  iwork_.assign(10 * un, 0);
  double *gers = &work_[0], *errors = &work_[2 * un], *gaps = &work_[3 * un], *t_diagonal = &work_[4 * un],
         *squares = &work_[5 * un], *stage_work = &work_[6 * un];
  int *splits = &iwork_[0], *blocks = &iwork_[un], *indices = &iwork_[2 * un], *stage_iwork = &iwork_[3 * un];
  if (relative) std::copy(diagonal_.data(), diagonal_.data() + n, t_diagonal);
  for (int j = 0; j + 1 < n; ++j) squares[j] = off_(j) * off_(j);
  const double rtol1 = std::sqrt(eps), rtol2 = std::max(std::sqrt(eps) * 5e-3, 4 * eps), min_relative_gap = 1e-3;
  double low = 0, high = 0, pivot_min = 0;
  int unused_index = 0, block_count = 0, m = 0;
  values_.resize(n);
  dlarre_("A", &n, &low, &high, &unused_index, &unused_index, diagonal_.data(), off_.data(), squares, &rtol1, &rtol2,
          &split_tolerance, &block_count, splits, &m, values_.data(), errors, gaps, blocks, indices, gers, &pivot_min,
          stage_work, stage_iwork, &info, 1);
  if (info != 0 || m != n || block_count != 1) return false;
  choose_side(values_, off_(n - 1));  // one block: its eigenvalues relative to the shift stored at its end
  if (count_ == 0) {  // nothing on the smaller side (T is semidefinite): no vectors
    first_ = 0;
    vectors_.resize(n, 0);
    return true;
  }
  const int dol = static_cast<int>(first_) + 1, dou = static_cast<int>(first_ + count_);
  vectors_.resize(n, n);
  support_.resize(2 * un);
  dlarrv_(&n, &low, &high, diagonal_.data(), off_.data(), &pivot_min, splits, &m, &dol, &dou, &min_relative_gap, &rtol1,
          &rtol2, values_.data(), errors, gaps, blocks, indices, gers, vectors_.data(), &n, support_.data(), stage_work,
          stage_iwork, &info);
  if (info != 0) return false;
  if (relative) {  // dstemr's refinement to relative accuracy, of the side's values
    const int offset = indices[dol - 1] - 1;
    const double full = 4 * eps;
    dlarrj_(&n, t_diagonal, squares, &indices[dol - 1], &indices[dou - 1], &full, &offset, values_.data() + dol - 1,
            errors + dol - 1, stage_work, stage_iwork, &pivot_min, &t_norm, &info);
    if (info != 0) return false;
  }
  if (scale != 1) values_.segment(first_, count_) /= scale;
  // The refined values must still be the side (the neighbour outside it keeps dqds's, shifted).
  const double last_in = negative_ ? values_(dou - 1) : values_(dol - 1);
  const bool inside = negative_ ? last_in <= 0 : last_in > 0;
  const bool outside = negative_ ? (dou == n || values_(dou) > 0) : (dol == 1 || values_(dol - 2) <= 0);
  return inside && outside;
}

// dstemr for every pair (ascending, sorted across blocks), and the side read off its values.
bool TridiagonalSide::all_by_dstemr(const VectorXd& a, const VectorXd& b) {
  const int n = load(a, b);
  const double unused_bound = 0;
  int unused_index = 0, m = 0, info = 0, tryrac = 1;
  support_.resize(2 * static_cast<std::size_t>(n));
  const int lwork = 18 * n, liwork = 10 * n;
  work_.resize(static_cast<std::size_t>(lwork));
  iwork_.resize(static_cast<std::size_t>(liwork));
  values_.resize(n);
  vectors_.resize(n, n);
  dstemr_("V", "A", &n, diagonal_.data(), off_.data(), &unused_bound, &unused_bound, &unused_index, &unused_index, &m,
          values_.data(), vectors_.data(), &n, &n, support_.data(), &tryrac, work_.data(), &lwork, iwork_.data(),
          &liwork, &info, 1, 1);
  if (info != 0 || m != n) return false;
  choose_side(values_, 0.0);
  return true;
}

}  // namespace dpstream::linalg::detail
