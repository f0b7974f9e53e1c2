// dpstream._core._OnlinePCA (RowGuard → the library's online-PCA session, fed by ingest) and
// _PrivatePCA (the library's one-shot methods, pca/private_pca_method.hpp, as dpstream-pca runs them).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <chrono>
#include <limits>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/pca/private_pca_method.hpp"
#include "dpstream/session/online_pca_session.hpp"
#include "dpstream/stream/block_aggregate.hpp"

namespace dpstream::python {

namespace {

// Python's OnlinePCA: rows through the guard, in chunks of any size, into the library's online-PCA
// session (session/online_pca_session.hpp: ingest, on the caller's thread), which holds the protocol
// — each block scored with the subspace of the releases before it, observed by the meter, then
// streamed, its release followed (the stationary estimate under separable; every release read
// exactly doubly nonnegative under nonnegative) — as dpstream-replay drives it block by block.
session::OnlinePcaOptions online_pca_options(const StreamArgs& a, Eigen::Index k, bool regret, bool baseline) {
  using Evaluation = session::OnlinePcaOptions::Evaluation;
  session::OnlinePcaOptions o;
  o.k = k;
  o.block = a.block;
  o.nonnegative = a.nonnegative;
  o.stream = a.options();
  o.threaded = false;  // ingest() on the caller's thread, the GIL released
  o.evaluation = !regret ? Evaluation::none : baseline ? Evaluation::meter_and_ftl : Evaluation::meter_only;
  o.curve_every = 0;  // the final figures only
  o.nonnegative_refresh_ratio = 0;  // every release read exactly (a full projection)
  if (a.horizon) {  // the session sizes a fixed horizon from the stream's length
    if (a.block != 0 && *a.horizon > std::numeric_limits<std::uint64_t>::max() / a.block)
      throw InvalidParameter("horizon " + std::to_string(*a.horizon) + " releases of " + std::to_string(a.block) +
                             " rows: more rows than 2^64");
    o.known_rows = *a.horizon * a.block;
  }
  return o;
}

class PyOnlinePca {
 public:
  PyOnlinePca(const StreamArgs& a, Eigen::Index k, bool regret, bool baseline, SharedAccountant accountant)
      : accountant_(std::move(accountant)), guard_(a.guard()), block_(a.block),
        session_(a.dim, online_pca_options(a, k, regret, baseline), budget_of(accountant_, "OnlinePCA")) {}

  void partial_fit(const RowArray& rows) {
    const auto start = std::chrono::steady_clock::now();
    const stream::RowGuard before = guard_;
    const Eigen::MatrixXd block = guard_block(rows, guard_);
    struct Timer {  // the library's time, for bench/python_ingest.py (the bindings' share is the rest)
      std::chrono::steady_clock::time_point start;
      double& total;
      ~Timer() { total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
    } timer{start, library_seconds_};
    ingest_interruptibly(block, block_, session_.rows_pending(),
                         [this](const Eigen::Ref<const Eigen::MatrixXd>& piece) { session_.ingest(piece); }, guard_,
                         before, rows);
  }
  // A part of the current block summed by a worker (dpstream.dask): the stream checks it and
  // releases at the block's end, which the learner follows. The meter is not fed here (its rows
  // are on the workers: dpstream.dask scores them there).
  void add_aggregate(const py::bytes& bytes) {
    const stream::BlockAggregate part = stream::BlockAggregate::load(std::string(bytes));
    if (session_.has_meter())
      throw InvalidParameter("add_aggregate: this OnlinePCA meters its regret from rows (track_regret=True)");
    require_guard_policy(part, guard_.options());
    {
      py::gil_scoped_release unlocked;
      session_.add_aggregate(part);
    }
    aggregated_ += part.counts;
  }
  void finish() {
    py::gil_scoped_release unlocked;
    session_.finish();
  }
  Eigen::MatrixXd transform(const RowArray& rows) const {
    if (rows.ndim() != 2 || rows.shape(1) != learner().dimension())
      throw InvalidParameter("transform: expected rows of dimension " + std::to_string(learner().dimension()));
    const auto view = rows.unchecked<2>();
    Eigen::MatrixXd x(view.shape(0), view.shape(1));
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j) x(i, j) = view(i, j);
    return x * learner().basis();
  }
  py::dict regret() const {
    if (!session_.has_meter()) throw InvalidParameter("regret: this OnlinePCA was built with track_regret=False");
    const eval::RegretMeter& meter = session_.meter();
    py::dict d;
    const std::size_t p = meter.learner("private");
    d["rows"] = meter.rows(), d["opt"] = meter.opt(), d["gain"] = meter.gain(p);
    d["regret"] = meter.regret(p), d["regret_over_opt"] = meter.regret_over_opt(p);
    d["nonprivate_regret_over_opt"] = session_.has_follow_the_leader()
                                          ? py::object(py::float_(meter.regret_over_opt(meter.learner("ftl"))))
                                          : py::object(py::none());
    return d;
  }
  const pca::FplOnlinePca& learner() const { return *session_.private_learner(); }
  const stream::ContinualCovariance& sum() const { return *session_.sum(); }
  stream::RowGuardCounts counts() const {
    stream::RowGuardCounts c = guard_.counts();
    return c += aggregated_;
  }

 private:
  SharedAccountant accountant_;  // before session_, which charges it
  stream::RowGuard guard_;
  std::uint64_t block_;
  session::OnlinePcaSession session_;
  stream::RowGuardCounts aggregated_;  // counts of the rows that came as aggregates
 public:
  double library_seconds_ = 0;  // partial_fit's time inside C++ (RowGuard, session)
};

// The library's one-shot methods (pca/private_pca_method.hpp), the rows through the same guard the
// tools use.
py::dict private_pca_fit(const RowArray& rows, const std::string& method, Eigen::Index k, SharedAccountant accountant,
                         const py::kwargs& kw) {
  const StreamArgs a = stream_args(kw);
  pca::PrivatePcaMethodOptions o;
  o.method = method;
  o.k = k;
  if (kw.contains("iterations") && !kw["iterations"].is_none()) {
    o.iterations = kw["iterations"].cast<int>();
    o.iterations_given = true;
  }
  o.privacy.target = privacy::EpsDelta(a.epsilon, a.delta);
  o.privacy.calibration = privacy::parse_calibration(a.calibration);
  o.privacy.noise.seed = a.seed;
  o.privacy.row_norm_bound = a.row_norm_bound();
  if (method != "gauss" && method != "power" && method != "oja")
    throw InvalidParameter("method '" + method + "': expected gauss, power or oja");
  if (rows.ndim() != 2) throw InvalidRow(0, "expected a 2-d array of rows (n, d)");
  StreamArgs with_dim = a;
  with_dim.dim = rows.shape(1);
  if (k < 1 || k > with_dim.dim)
    throw InvalidParameter("n_components " + std::to_string(k) + " is outside [1, " + std::to_string(with_dim.dim) + "]");
  stream::RowGuard guard(with_dim.guard());
  const pca::PrivatePcaMethod built(o, with_dim.dim);  // checks the options before any row or noise
  if (kw.contains("check_only") && kw["check_only"].cast<bool>()) return py::dict();  // before a centring charge
  const Eigen::MatrixXd block = guard_block(rows, guard);
  if (!accountant) accountant = std::make_shared<privacy::PrivacyAccountant>(privacy::EpsDelta(a.epsilon, a.delta));
  const pca::PrivateSubspace subspace = release_interruptibly(built, block, *accountant);
  py::dict d;
  d["vectors"] = subspace.vectors, d["values"] = subspace.values, d["method"] = subspace.method;
  d["counts"] = counts_dict(guard.counts());
  d["budget"] = privacy::Budget(*accountant).describe();
  return d;
}

}  // namespace

void bind_pca(py::module_& m) {
  py::class_<PyOnlinePca>(m, "_OnlinePCA")
      .def(py::init([](Eigen::Index k, bool regret, bool baseline, SharedAccountant accountant, const py::kwargs& kw) {
             return std::make_unique<PyOnlinePca>(stream_args(kw), k, regret, baseline, std::move(accountant));
           }),
           py::arg("k"), py::arg("track_regret"), py::arg("baseline"), py::arg("accountant").none(true))
      .def("partial_fit", &PyOnlinePca::partial_fit)
      .def("add_aggregate", &PyOnlinePca::add_aggregate)
      .def("finish", &PyOnlinePca::finish)
      .def("library_seconds", [](const PyOnlinePca& p) { return p.library_seconds_; })
      .def("transform", &PyOnlinePca::transform)
      .def("regret", &PyOnlinePca::regret)
      .def("basis", [](const PyOnlinePca& p) { return Eigen::MatrixXd(p.learner().basis()); })
      .def("leader_values", [](const PyOnlinePca& p) { return Eigen::VectorXd(p.learner().leader_values()); })
      .def("refreshes", [](const PyOnlinePca& p) { return p.learner().refreshes(); })
      .def("steps", [](const PyOnlinePca& p) { return p.sum().steps(); })
      .def("rows", [](const PyOnlinePca& p) { return p.sum().rows(); })
      .def("participation_bound",
           [](const PyOnlinePca& p) {
             const stream::ParticipationBound b = p.sum().noise().participation_bound(p.sum().options().participation);
             return py::make_tuple(b.factor, b.exact);
           })
      .def("mu", [](const PyOnlinePca& p) { return p.sum().mu(); })
      .def("is_secure", [](const PyOnlinePca& p) { return p.sum().is_secure(); })
      .def("guard_counts", [](const PyOnlinePca& p) { return counts_dict(p.counts()); })
      .def("serialize_stream", [](const PyOnlinePca& p) { return py::bytes(p.sum().save()); });
  m.def("private_pca_fit", &private_pca_fit, py::arg("rows"), py::arg("method"), py::arg("k"),
        py::arg("accountant").none(true));
}

}  // namespace dpstream::python
