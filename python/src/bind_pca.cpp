// dpstream._core._OnlinePCA (RowGuard → ContinualCovariance → FplOnlinePca, with the RegretMeter of
// the online-PCA session's protocol) and _PrivatePCA (the library's one-shot methods,
// pca/private_pca_method.hpp, as dpstream-pca runs them).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <chrono>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/stream/block_aggregate.hpp"
#include "dpstream/stream/separable_noise.hpp"
#include "dpstream/stream/stationary_estimate.hpp"
#include "dpstream/pca/private_pca_method.hpp"
#include "dpstream/session/followed_release.hpp"

namespace dpstream::python {

namespace {

// The protocol of the online-PCA session (dpstream/session/online_pca_session.hpp) on one thread and
// on rows in any chunks: each block is scored with the subspace of the releases before it, then
// observed by the meter, then given to the stream, whose release the learner follows (the stationary
// estimate under separable; every release projected exactly under nonnegative), as the session does
// on its threads.
class PyOnlinePca {
 public:
  PyOnlinePca(const StreamArgs& a, Eigen::Index k, bool regret, bool baseline, SharedAccountant accountant)
      : accountant_(std::move(accountant)), guard_(a.guard()), block_(a.block),
        sum_(a.dim, a.options(), budget_of(accountant_, "OnlinePCA")), nonnegative_(a.nonnegative) {
    pca::FplOptions p;
    p.k = k;
    p.mode = pca::FplMode::private_tree;
    learner_ = std::make_unique<pca::FplOnlinePca>(a.dim, p);
    if (const auto* separable = dynamic_cast<const stream::SeparableNoise*>(&sum_.noise()))
      stationary_.emplace(separable->strategy());
    sum_.subscribe([this](const stream::ContinualCovariance::Release& r) { follow(r); });
    if (!regret) return;
    std::vector<std::string> names{"private"};
    if (baseline) names.push_back("ftl");
    meter_ = std::make_unique<eval::RegretMeter>(a.dim, k, names);
    if (baseline) {
      pca::FplOptions f;
      f.k = k;
      f.mode = pca::FplMode::follow_the_leader;
      f.refresh_every = a.block;
      ftl_ = std::make_unique<pca::FplOnlinePca>(a.dim, f);
    }
  }

  void partial_fit(const RowArray& rows) {
    const auto start = std::chrono::steady_clock::now();
    const stream::RowGuard before = guard_;
    const Eigen::MatrixXd block = guard_block(rows, guard_);
    struct Timer {  // the library's time, for bench/python_ingest.py (the bindings' share is the rest)
      std::chrono::steady_clock::time_point start;
      double& total;
      ~Timer() { total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
    } timer{start, library_seconds_};
    ingest_interruptibly(block, block_, sum_.rows_pending(),
                         [this](const Eigen::Ref<const Eigen::MatrixXd>& piece) { ingest(piece); }, guard_, before,
                         rows);
  }
  // A part of the current block summed by a worker (dpstream.dask): the stream checks it and
  // releases at the block's end, which the learner follows. The meter is not fed here (its rows
  // are on the workers: dpstream.dask scores them there).
  void add_aggregate(const py::bytes& bytes) {
    const stream::BlockAggregate part = stream::parse_block_aggregate(std::string(bytes));
    if (meter_) throw InvalidParameter("add_aggregate: this OnlinePCA meters its regret from rows (track_regret=True)");
    require_guard_policy(part, guard_.options());
    {
      py::gil_scoped_release unlocked;
      sum_.add_aggregate(part);
    }
    aggregated_ += part.counts;
  }
  void finish() {
    py::gil_scoped_release unlocked;
    sum_.flush();
    if (meter_) meter_->finish();
  }
  Eigen::MatrixXd transform(const RowArray& rows) const {
    if (rows.ndim() != 2 || rows.shape(1) != learner_->dimension())
      throw InvalidParameter("transform: expected rows of dimension " + std::to_string(learner_->dimension()));
    const auto view = rows.unchecked<2>();
    Eigen::MatrixXd x(view.shape(0), view.shape(1));
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j) x(i, j) = view(i, j);
    return x * learner_->basis();
  }
  py::dict regret() const {
    if (!meter_) throw InvalidParameter("regret: this OnlinePCA was built with track_regret=False");
    py::dict d;
    const std::size_t p = meter_->learner("private");
    d["rows"] = meter_->rows(), d["opt"] = meter_->opt(), d["gain"] = meter_->gain(p);
    d["regret"] = meter_->regret(p), d["regret_over_opt"] = meter_->regret_over_opt(p);
    d["nonprivate_regret_over_opt"] = ftl_ ? py::object(py::float_(meter_->regret_over_opt(meter_->learner("ftl"))))
                                           : py::object(py::none());
    return d;
  }
  const pca::FplOnlinePca& learner() const { return *learner_; }
  const stream::ContinualCovariance& sum() const { return sum_; }
  stream::RowGuardCounts counts() const {
    stream::RowGuardCounts c = guard_.counts();
    return c += aggregated_;
  }

 private:
  // Rows inside one block: scored, observed, then streamed (a release at the block's end).
  void ingest(const Eigen::Ref<const Eigen::MatrixXd>& rows) {
    if (meter_) {
      meter_->add_gains(meter_->learner("private"), learner_->gains(rows));
      if (ftl_) meter_->add_gains(meter_->learner("ftl"), ftl_->gains(rows));
      meter_->observe(rows);
      if (ftl_ && meter_->rows() % block_ == 0) ftl_->follow_solved(meter_->leader());
    }
    sum_.update_block(rows);
  }
  void follow(const stream::ContinualCovariance::Release& r) {
    if (stationary_) stationary_->add(r.step, r.noisy_prefix);
    followed_ = stationary_ ? Eigen::MatrixXd(stationary_->prefix()) : r.noisy_prefix;
    if (nonnegative_) pca::project_doubly_nonnegative(followed_, session::kNonnegativeRounds);
    std::optional<double> stationary_variance;
    if (stationary_) stationary_variance = stationary_->prefix_variance(sum_.noise().draw_sigma());
    learner_->follow(followed_, session::followed_noise_norm(learner_->dimension(), r, stationary_variance, nonnegative_));
  }

  SharedAccountant accountant_;  // before sum_, which points at it
  stream::RowGuard guard_;
  std::uint64_t block_;
  stream::ContinualCovariance sum_;
  bool nonnegative_;
  std::unique_ptr<pca::FplOnlinePca> learner_, ftl_;
  std::optional<stream::StationaryEstimate<Eigen::MatrixXd>> stationary_;
  std::unique_ptr<eval::RegretMeter> meter_;
  Eigen::MatrixXd followed_;
  stream::RowGuardCounts aggregated_;  // counts of the rows that came as aggregates
 public:
  double library_seconds_ = 0;  // partial_fit's time inside C++ (RowGuard, stream, learner, meter)
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
      .def("serialize_stream", [](const PyOnlinePca& p) { return py::bytes(p.sum().serialize()); });
  m.def("private_pca_fit", &private_pca_fit, py::arg("rows"), py::arg("method"), py::arg("k"),
        py::arg("accountant").none(true));
}

}  // namespace dpstream::python
