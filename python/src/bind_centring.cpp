// dpstream._core.private_mean: the private mean release that centres PrivatePCA and OnlinePCA.
//
// Privacy contract: the rows pass a RowGuard (‖a‖₂ ≤ L: normalize unit, clip or none, as the
// estimator's), then ONE Gaussian mechanism (privacy/gaussian_mechanism.hpp) releases the vector
// (Σ a, L·n) of the d sums and the row count scaled by L. Neighbouring relation: one row added or
// removed (the vector moves by (a, L): ‖·‖₂ ≤ √2·L), which also covers one row zeroed with its slot
// kept (it moves by (a, 0)). Sensitivity √2·L; the accountant is charged (ε, δ) once, before any
// noise is drawn ("private mean (centring)"). The mean is Σ̃/max(ñ, 1): post-processing.
#include <pybind11/eigen.h>

#include <cmath>

#include "bindings.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/gaussian_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::python {

namespace {

// A seeded mean draws from its own sequence, never the one the estimator's PCA or stream is seeded
// with (the two mechanisms' noise must be independent).
constexpr std::uint64_t kMeanSeedSalt = 0x6d65616e63656e74ULL;  // "meancent"

py::dict private_mean(const RowArray& rows, SharedAccountant accountant, const py::kwargs& kw) {
  StreamArgs a = stream_args(kw);
  if (rows.ndim() != 2) throw InvalidRow(0, "expected a 2-d array of rows (n, d)");
  a.dim = rows.shape(1);
  stream::RowGuard guard(a.guard());
  const double bound = a.row_norm_bound();
  const privacy::GaussianMechanism mechanism(std::sqrt(2.0) * bound, privacy::EpsDelta(a.epsilon, a.delta),
                                             privacy::parse_calibration(a.calibration));
  if (kw.contains("check_only") && kw["check_only"].cast<bool>()) return py::dict();  // settings checked
  const Eigen::MatrixXd block = guard_block(rows, guard);
  std::unique_ptr<privacy::NoiseSource> noise =
      a.seed ? std::unique_ptr<privacy::NoiseSource>(std::make_unique<privacy::SeededNoiseSource>(*a.seed ^ kMeanSeedSalt))
             : privacy::make_secure_noise_source();
  Eigen::VectorXd released;
  {
    py::gil_scoped_release unlocked;
    Eigen::VectorXd sums(a.dim + 1);
    sums.head(a.dim) = block.colwise().sum().transpose();
    sums(a.dim) = bound * static_cast<double>(block.rows());
    released = mechanism.release(sums, *noise, budget_of(accountant, "private_mean"), "private mean (centring)");
  }
  const double count = released(a.dim) / bound;
  py::dict d;
  d["mean"] = Eigen::VectorXd(released.head(a.dim) / std::max(count, 1.0));
  d["count"] = count;
  d["sigma"] = mechanism.sigma();
  d["counts"] = counts_dict(guard.counts());
  return d;
}

}  // namespace

void bind_centring(py::module_& m) {
  m.def("private_mean", &private_mean, py::arg("rows"), py::arg("accountant").none(true),
        "The rows' mean released by one Gaussian mechanism on (sum, L * count), sensitivity sqrt(2) L.");
}

}  // namespace dpstream::python
