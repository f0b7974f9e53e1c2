// The pieces of the extension dpstream._core, one translation unit each (python/dpstream/meson.build
// compiles them in parallel). The bindings only wire the library: every check, every noise draw and
// every charge is the library's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <Eigen/Core>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "dpstream/privacy/budget.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::python {

namespace py = pybind11;

// A row block from Python: any array of shape (n, d) that numpy can convert to float64. C-contiguous
// float64 is read in place; float32 or another layout is converted once (forcecast).
using RowArray = py::array_t<double, py::array::forcecast>;

void bind_errors(py::module_& m);
void bind_privacy(py::module_& m);
void bind_stream(py::module_& m);
void bind_pca(py::module_& m);
void bind_replay(py::module_& m);
void bind_centring(py::module_& m);  // bind_centring.cpp: the private mean
void bind_units(py::module_& m);  // bind_units.cpp: _ContributionBound

// The accountant a Python object shares (None: none). Python keeps the owner alive.
using SharedAccountant = std::shared_ptr<privacy::PrivacyAccountant>;
// Its budget: the accountant, or, for None, an unaccounted budget that says `who` was given none.
inline privacy::Budget budget_of(const SharedAccountant& accountant, const std::string& who) {
  return privacy::Budget::either(accountant.get(), who + ": no accountant was given (accountant=None)");
}

// The stream options from the Python constructor's arguments (InvalidParameter naming a bad name).
struct StreamArgs {
  Eigen::Index dim = 0;
  double epsilon = 1.0, delta = 1e-6;
  std::uint64_t block = 1;
  std::string mechanism = "tree";
  std::optional<std::uint64_t> horizon;  // releases; None: unbounded (trees) or required
  std::string noise_shape = "goe";
  std::optional<std::uint64_t> seed;
  // As the tools' --normalize / --clip-norm (common/cli.hpp): unit (a/‖a‖, L = 1), clip (to
  // L = clip_norm) or none (L = clip_norm, rows over it refused).
  std::string normalize = "clip";
  double clip_norm = 1.0;
  std::string relation = "zero_out";
  std::string calibration = "tight";
  bool nonnegative = false;
  std::string journal;  // the release journal's path ("": none; continual_sum.hpp)
  // Unit level (stream/participation.hpp): at most this many rows of one user (0: row level), and
  // the minimum separation of her blocks.
  std::uint32_t max_rows_per_user = 0;
  std::uint64_t min_separation = 0;

  double row_norm_bound() const { return normalize == "unit" ? 1.0 : clip_norm; }

  stream::ContinualSumOptions options() const;
  stream::RowGuardOptions guard() const;
};
StreamArgs stream_args(const py::kwargs& kwargs);

// rows (n × d, any layout) through a copy of `guard` into a column-major block, with the GIL
// released: every row is checked before any is kept, so an InvalidRow leaves `guard` unchanged (as a
// refused update_block leaves the stream). The caller's array is never modified.
Eigen::MatrixXd guard_block(const RowArray& rows, stream::RowGuard& guard);

// InvalidParameter unless `part`'s rows were guarded with `guard`'s policy (clip or reject, scaling,
// domain): the library checks the bound, which privacy rests on; the policy decides whether the
// releases equal a single process's.
void require_guard_policy(const stream::BlockAggregate& part, const stream::RowGuardOptions& guard);

// Counts as a dict (seen, accepted, clipped, rejected, zero).
py::dict counts_dict(const stream::RowGuardCounts& c);

}  // namespace dpstream::python
