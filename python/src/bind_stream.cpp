// dpstream._core (the module is defined at the end), its _ContinualCovariance (RowGuard →
// ContinualCovariance, releases collected for Python) and the pre-aggregated blocks of distributed
// ingestion (stream/block_aggregate.hpp).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <vector>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/stream/block_aggregate.hpp"

namespace dpstream::python {

namespace {

// One release, owned (the stream's noisy_prefix is only valid until its next release).
struct ReleaseCopy {
  std::uint64_t step = 0, rows = 0;
  Eigen::MatrixXd noisy_second_moment;
  double noise_variance = 0, off_diagonal_noise_variance = 0;
};

class PyContinualCovariance {
 public:
  // From a checkpoint (the C++ side's ContinualSumCheckpoint bytes) if one is given: then the
  // accountant, if any, takes the checkpoint's ledger by PrivacyAccountant::restore (never lower).
  PyContinualCovariance(const StreamArgs& a, SharedAccountant accountant, const std::optional<std::string>& checkpoint)
      : accountant_(std::move(accountant)), guard_(a.guard()),
        sum_(checkpoint ? stream::ContinualCovariance::load(*checkpoint, a.dim, a.options(), budget_of(accountant_, "ContinualCovariance"))
                        : stream::ContinualCovariance(a.dim, a.options(), budget_of(accountant_, "ContinualCovariance"))) {
    sum_.subscribe([this](const stream::ContinualCovariance::Release& r) {
      releases_.push_back({r.step, r.rows, r.noisy_prefix, r.noise_variance, r.off_diagonal_noise_variance});
    });
  }

  // The releases this call made, in order.
  // A signal (Ctrl-C) stops it at a release boundary (interrupt.hpp); the releases made before it are
  // returned by the next call.
  std::vector<ReleaseCopy> update(const RowArray& rows) {
    const stream::RowGuard before = guard_;
    const Eigen::MatrixXd block = guard_block(rows, guard_);
    const stream::ContinualSumOptions& o = sum_.options();
    if (o.horizon != 0 && static_cast<std::uint64_t>(block.rows()) >
                              (o.horizon - sum_.steps()) * o.block_rows - sum_.rows_pending()) {
      try {  // past a fixed horizon: the library refuses the block whole (BudgetExhausted), unchanged
        py::gil_scoped_release unlocked;
        sum_.update_block(block);
      } catch (...) {
        guard_ = before;
        throw;
      }
      return take();
    }
    ingest_interruptibly(block, sum_.options().block_rows, sum_.rows_pending(),
                         [this](const Eigen::Ref<const Eigen::MatrixXd>& piece) { sum_.update_block(piece); },
                         guard_, before, rows);
    return take();
  }
  std::vector<ReleaseCopy> flush() {
    py::gil_scoped_release unlocked;
    sum_.flush();
    return take();
  }
  std::vector<ReleaseCopy> add_aggregate(const py::bytes& bytes) {
    const stream::BlockAggregate part = stream::BlockAggregate::load(std::string(bytes));
    require_guard_policy(part, guard_.options());
    {
      py::gil_scoped_release unlocked;
      sum_.add_aggregate(part);
    }
    aggregated_ += part.counts;
    return take();
  }
  ReleaseCopy latest() const {
    const auto r = sum_.latest();
    return {r.step, r.rows, r.noisy_prefix, r.noise_variance, r.off_diagonal_noise_variance};
  }
  stream::RowGuardCounts counts() const {
    stream::RowGuardCounts c = guard_.counts();
    return c += aggregated_;
  }
  const stream::ContinualCovariance& sum() const { return sum_; }
  stream::ContinualCovariance& sum() { return sum_; }

 private:
  std::vector<ReleaseCopy> take() {
    std::vector<ReleaseCopy> out;
    out.swap(releases_);
    return out;
  }
  SharedAccountant accountant_;  // before sum_, which points at it
  stream::RowGuard guard_;
  stream::ContinualCovariance sum_;
  stream::RowGuardCounts aggregated_;  // counts of the rows that came as aggregates
  std::vector<ReleaseCopy> releases_;
};

py::list to_bytes(const std::vector<stream::BlockAggregate>& parts) {
  py::list out;
  for (const auto& p : parts) out.append(py::bytes(p.save()));
  return out;
}

}  // namespace

void bind_stream(py::module_& m) {
  py::class_<ReleaseCopy>(m, "_Release")
      .def_readonly("step", &ReleaseCopy::step)
      .def_readonly("rows", &ReleaseCopy::rows)
      // A read-only view of the matrix this object owns (no copy).
      .def_property_readonly("noisy_second_moment",
                             [](const ReleaseCopy& r) -> const Eigen::MatrixXd& { return r.noisy_second_moment; },
                             py::return_value_policy::reference_internal)
      .def_readonly("noise_variance", &ReleaseCopy::noise_variance)
      .def_readonly("off_diagonal_noise_variance", &ReleaseCopy::off_diagonal_noise_variance);

  py::class_<PyContinualCovariance>(m, "_ContinualCovariance")
      .def(py::init([](SharedAccountant accountant, std::optional<py::bytes> checkpoint, const py::kwargs& kw) {
             std::optional<std::string> bytes;
             if (checkpoint) bytes = std::string(*checkpoint);
             return std::make_unique<PyContinualCovariance>(stream_args(kw), std::move(accountant), bytes);
           }),
           py::arg("accountant").none(true), py::arg("checkpoint").none(true))
      .def("update", &PyContinualCovariance::update)
      .def("flush", &PyContinualCovariance::flush)
      .def("add_aggregate", &PyContinualCovariance::add_aggregate)
      .def("latest", &PyContinualCovariance::latest)
      .def("has_release", [](const PyContinualCovariance& s) { return s.sum().has_release(); })
      .def("steps", [](const PyContinualCovariance& s) { return s.sum().steps(); })
      .def("rows", [](const PyContinualCovariance& s) { return s.sum().rows(); })
      .def("rows_pending", [](const PyContinualCovariance& s) { return s.sum().rows_pending(); })
      .def("mu", [](const PyContinualCovariance& s) { return s.sum().mu(); })
      .def("participation_bound",
           [](const PyContinualCovariance& s) {
             const stream::ParticipationBound b = s.sum().noise().participation_bound(s.sum().options().participation);
             return py::make_tuple(b.factor, b.exact);
           })
      .def("l2_sensitivity", [](const PyContinualCovariance& s) { return s.sum().l2_sensitivity(); })
      .def("is_secure", [](const PyContinualCovariance& s) { return s.sum().is_secure(); })
      .def("budget_description", [](const PyContinualCovariance& s) { return s.sum().budget().describe(); })
      .def("noise_name", [](const PyContinualCovariance& s) { return s.sum().noise().name(); })
      .def("release_variance", [](const PyContinualCovariance& s, std::uint64_t t) { return s.sum().release_variance(t); })
      .def("guard_counts", [](const PyContinualCovariance& s) { return counts_dict(s.counts()); })
      .def("serialize", [](const PyContinualCovariance& s) { return py::bytes(s.sum().save()); })
      .def("save_checkpoint", [](const PyContinualCovariance& s, const std::string& path) { base::save_file(path, s.sum()); });

  // Worker side of distributed ingestion: the rows [first_row, first_row + n) guarded and summed, cut
  // at multiples of `block` (by global row offset), each part as the library's sealed Protobuf bytes.
  m.def("aggregate_rows", [](const std::string& kind, const RowArray& rows, std::uint64_t first_row, const py::kwargs& kw) {
    const StreamArgs a = stream_args(kw);
    if (rows.ndim() != 2) throw InvalidRow(first_row, "expected a 2-d array of rows (n, d)");
    const auto view = rows.unchecked<2>();
    Eigen::MatrixXd block(view.shape(0), view.shape(1));
    for (Eigen::Index i = 0; i < block.rows(); ++i)
      for (Eigen::Index j = 0; j < block.cols(); ++j) block(i, j) = view(i, j);
    std::vector<stream::BlockAggregate> parts;
    {
      py::gil_scoped_release unlocked;
      parts = stream::aggregate_rows(kind, block, first_row, a.block, a.guard());
    }
    return to_bytes(parts);
  });
  // Reduction: the parts of `left` followed by those of `right`, the two parts that meet at the join
  // merged when they are pieces of one block.
  m.def("combine_aggregates", [](const std::vector<py::bytes>& left, const std::vector<py::bytes>& right) {
    std::vector<stream::BlockAggregate> parts;
    for (const auto& b : left) parts.push_back(stream::BlockAggregate::load(std::string(b)));
    for (const auto& b : right) {
      stream::BlockAggregate p = stream::BlockAggregate::load(std::string(b));
      if (!parts.empty() && stream::mergeable(parts.back(), p))
        parts.back() = stream::merge_aggregates(parts.back(), p);
      else
        parts.push_back(std::move(p));
    }
    return to_bytes(parts);
  });
  m.def("aggregate_info", [](const py::bytes& b) {
    const stream::BlockAggregate p = stream::BlockAggregate::load(std::string(b));
    py::dict d;
    d["first_row"] = p.first_row, d["rows"] = p.rows, d["block"] = p.block(), d["dimension"] = p.dimension;
    d["counts"] = counts_dict(p.counts);
    d["packed_sum"] = p.packed_sum;  // raw data (evaluation: dpstream.dask's regret meter)
    return d;
  });
  // The rows as RowGuard passes them (clipped or unit-scaled copies; InvalidRow naming the global
  // index): what a worker scores for the regret meter, the same rows its parts summed.
  m.def("guard_rows", [](const RowArray& rows, std::uint64_t first_row, const py::kwargs& kw) {
    stream::RowGuardOptions g = stream_args(kw).guard();
    stream::RowGuard guard(g);
    try {
      return Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>(guard_block(rows, guard));
    } catch (const InvalidRow& e) {
      throw e.at_row(first_row + e.row_index());
    }
  });
}

}  // namespace dpstream::python

// The module (here, in the lightest translation unit: a file of its own would compile pybind11's
// headers once more, ~30 s).
PYBIND11_MODULE(_core, m) {
  m.doc() = "dpstream's C++ core (pybind11). Use the package dpstream, which wraps it.";
  dpstream::python::bind_errors(m);
  dpstream::python::bind_privacy(m);
  dpstream::python::bind_stream(m);
  dpstream::python::bind_pca(m);
  dpstream::python::bind_replay(m);
  dpstream::python::bind_centring(m);
  dpstream::python::bind_units(m);
}
