// Long calls that stop on a pending signal (Ctrl-C: KeyboardInterrupt) at safe points, with the GIL
// re-acquired to ask Python (PyErr_CheckSignals), and what such a stop leaves behind.
#pragma once

#include <cstdint>
#include <functional>

#include <Eigen/Core>

#include "bindings.hpp"
#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/pca/private_pca_method.hpp"

namespace dpstream::python {

// Raises the pending signal's exception (py::error_already_set) if a handler raised one. GIL held.
void check_signals();

// Feeds `block` to `ingest` in pieces that end where a release of `block_rows` rows ends (`pending`
// rows of the current one were taken already), the GIL released during each piece, checking for a
// signal between pieces. On one, `guard` becomes `before` with only the ingested rows of `rows`
// re-admitted (its counts are then those of the rows the stream took) and the signal's exception is
// raised: the stream stands at a release boundary, nothing half-ingested. GIL held on entry.
void ingest_interruptibly(const Eigen::MatrixXd& block, std::uint64_t block_rows, std::uint64_t pending,
                          const std::function<void(const Eigen::Ref<const Eigen::MatrixXd>&)>& ingest,
                          stream::RowGuard& guard, const stream::RowGuard& before, const RowArray& rows);

// method.release(rows) on a thread of its own, charging a copy of `accountant`'s ledger; the caller
// waits with the GIL released and checks for a signal every 50 ms. Completed: `accountant` takes the
// copy's new charges (PrivacyAccountant::restore: BudgetExhausted if a concurrent charge left no room,
// and nothing is returned). Interrupted: the signal's exception is raised at once and `accountant` is
// never charged; the computation in flight (an eigensolver has no safe point) finishes on its thread
// and is discarded. GIL held on entry.
pca::PrivateSubspace release_interruptibly(const pca::PrivatePcaMethod& method, Eigen::MatrixXd rows,
                                           privacy::PrivacyAccountant& accountant);

}  // namespace dpstream::python
