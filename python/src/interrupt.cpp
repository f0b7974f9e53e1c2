// Safe points for signals in the long calls (interrupt.hpp).
#include "interrupt.hpp"

#include <chrono>
#include <future>
#include <memory>
#include <thread>

namespace dpstream::python {

void check_signals() {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

void ingest_interruptibly(const Eigen::MatrixXd& block, std::uint64_t block_rows, std::uint64_t pending,
                          const std::function<void(const Eigen::Ref<const Eigen::MatrixXd>&)>& ingest,
                          stream::RowGuard& guard, const stream::RowGuard& before, const RowArray& rows) {
  Eigen::Index done = 0;
  while (done < block.rows()) {
    const auto room = static_cast<Eigen::Index>(block_rows - pending);
    const Eigen::Index take = std::min(room, block.rows() - done);
    {
      py::gil_scoped_release unlocked;
      ingest(block.middleRows(done, take));
    }
    done += take;
    pending = (pending + static_cast<std::uint64_t>(take)) % block_rows;
    if (done == block.rows() || PyErr_CheckSignals() == 0) continue;
    // Stopped: the guard keeps the counts of the rows the stream took, re-admitted as they were.
    const auto view = rows.unchecked<2>();
    guard = before;
    Eigen::VectorXd row(block.cols());
    for (Eigen::Index i = 0; i < done; ++i) {
      for (Eigen::Index j = 0; j < row.size(); ++j) row(j) = view(i, j);
      guard.admit(row);
    }
    throw py::error_already_set();
  }
}

pca::PrivateSubspace release_interruptibly(const pca::PrivatePcaMethod& method, Eigen::MatrixXd rows,
                                           privacy::PrivacyAccountant& accountant) {
  // The thread owns everything it reads (the method holds its state by shared_ptr), so it may
  // outlive this call when a signal stops the wait.
  auto scratch = std::make_shared<privacy::PrivacyAccountant>(
      privacy::PrivacyAccountant::load(accountant.save()));
  auto task = std::make_shared<std::packaged_task<pca::PrivateSubspace()>>(
      [method, rows = std::move(rows), scratch] { return method.release(rows, *scratch); });
  std::future<pca::PrivateSubspace> result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  for (;;) {
    {
      py::gil_scoped_release unlocked;
      if (result.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready) break;
    }
    check_signals();
  }
  pca::PrivateSubspace released = result.get();  // the library's error, if the release threw one
  accountant.restore(scratch->save());
  return released;
}

}  // namespace dpstream::python
