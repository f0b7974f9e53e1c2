// dpstream._core.replay: a replay of a row stream through the online-PCA session, wired from the
// library as dpstream-replay wires it (no tool code): the input opened by the library's policy
// (io/open_rows.hpp), its rows read through the guard (io/guarded_rows.hpp) and handed to the session
// (session/online_pca_session.hpp) block by block, regret.csv written from the meter
// (eval/regret_report.hpp), and a dict with the keys and values of the tool's JSON line. The same
// library calls in the same order give the tool's figures bit for bit (python/tests/test_replay.py).
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/eval/regret_report.hpp"
#include "dpstream/base/atomic_file.hpp"
#include "dpstream/io/guarded_rows.hpp"
#include "dpstream/io/open_rows.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/session/online_pca_session.hpp"
#include "dpstream/session/session_labels.hpp"
#include "dpstream/stream/blt.hpp"
#include "dpstream/stream/row_normalization.hpp"
#include "dpstream/stream/seeded_permutation.hpp"

namespace dpstream::python {

namespace {

using Eigen::Index;

// replay()'s keywords (python/dpstream/_replay.py fills every one).
struct ReplayArgs {
  std::string input, format, out, mechanism, noise_shape, blt_error, calibration, learner;
  std::vector<std::string> learners;
  Index k = 10;
  double epsilon = 1.0, delta = 1e-6;
  std::uint64_t block = 128, limit = 0, minibatch = 1000;
  std::optional<std::uint64_t> seed, shuffle;
  stream::RowNormalization normalize;
  bool nonnegative = false, nonprivate = false;
};

template <class T>
T take(const py::dict& d, const char* key) {
  try {
    return d[key].cast<T>();
  } catch (const py::cast_error&) {
    throw InvalidParameter(std::string("replay: ") + key + "=" + py::str(d[key]).cast<std::string>() +
                           " has the wrong type or is out of range");
  }
}

ReplayArgs read_args(const py::dict& d) {
  ReplayArgs a;
  const std::initializer_list<std::pair<std::string*, const char*>> texts = {
      {&a.input, "input"},           {&a.format, "format"},           {&a.out, "out"},
      {&a.mechanism, "mechanism"},   {&a.noise_shape, "noise_shape"}, {&a.blt_error, "blt_error"},
      {&a.calibration, "calibration"}, {&a.learner, "learner"}};
  for (const auto& [field, key] : texts) *field = take<std::string>(d, key);
  a.learners = take<std::vector<std::string>>(d, "learners");
  a.k = take<Index>(d, "k");
  a.epsilon = take<double>(d, "epsilon");
  a.delta = take<double>(d, "delta");
  a.block = take<std::uint64_t>(d, "block");
  a.limit = take<std::uint64_t>(d, "limit");
  a.minibatch = take<std::uint64_t>(d, "minibatch");
  a.seed = take<std::optional<std::uint64_t>>(d, "seed");
  a.shuffle = take<std::optional<std::uint64_t>>(d, "shuffle");
  a.normalize.normalize = take<std::string>(d, "normalize");
  const auto clip_norm = take<std::optional<double>>(d, "clip_norm");
  a.normalize.clip_norm = clip_norm.value_or(1.0);
  a.normalize.clip_norm_given = clip_norm.has_value();
  a.nonnegative = take<bool>(d, "nonnegative");
  a.nonprivate = take<bool>(d, "nonprivate");
  return a;
}

// What can be checked before the input is opened (the library checks the rest: names, ε, δ).
void check_args(const ReplayArgs& a) {
  if (a.k < 1) throw InvalidParameter("replay: k must be >= 1, got " + std::to_string(a.k));
  if (a.block < 1) throw InvalidParameter("replay: block must be >= 1, got 0");
  if (a.minibatch < 1) throw InvalidParameter("replay: minibatch must be >= 1, got 0");
  if (a.input.empty() && a.format != "auto") throw InvalidParameter("replay: format= needs input=");
  a.normalize.validate();
  session::check_learners(a.learners);
  if (a.nonprivate && a.learners != std::vector<std::string>{"fpl"})
    throw InvalidParameter("replay: learner=" + a.learner + " conflicts with nonprivate=True");
}

session::OnlinePcaOptions session_options(const ReplayArgs& a) {
  session::OnlinePcaOptions o;
  o.k = a.k;
  o.block = a.block;
  o.nonprivate = a.nonprivate;
  o.nonnegative = a.nonnegative;
  o.learners = a.learners;
  o.minibatch = a.minibatch;
  stream::ContinualSumOptions& s = o.stream;  // the session sets the horizon from known_rows
  s.block_rows = a.block;
  s.strategy = stream::parse_noise_strategy(a.mechanism);
  s.shape = privacy::parse_symmetric_noise_shape(a.noise_shape);
  s.blt_error = stream::parse_blt_error(a.blt_error);
  s.privacy.target = privacy::EpsDelta(a.epsilon, a.delta);
  s.privacy.calibration = privacy::parse_calibration(a.calibration);
  s.privacy.row_norm_bound = a.normalize.norm_bound();
  s.privacy.noise.seed = a.seed;
  return o;
}

// One replay: the input, its rows, the session, and what the report reads from them.
struct Replay {
  explicit Replay(ReplayArgs args) : a(std::move(args)) {}

  ReplayArgs a;
  io::OpenedRows in;
  Index d = 0;
  std::size_t width = 0;  // d, to index the row-major buffers
  session::OnlinePcaOptions options;
  std::optional<io::GuardedRows> rows;
  std::vector<double> held;  // shuffle: every row (row-major, d a row), in file order
  std::vector<std::uint64_t> order;
  bool length_counted = false;
  std::string integrity, csv;
  std::unique_ptr<session::OnlinePcaSession> session;
  double seconds = 0;

  io::GuardedRowsOptions read_options() const {
    return {a.normalize.guard_options(d, a.nonnegative), false, a.limit};
  }
  void open();
  void check_output();
  void size_stream();
  void run();
  bool hand(const double* staged, const std::uint64_t* perm, std::uint64_t first, std::uint64_t n);
  py::dict report() const;
};

void Replay::open() {
  try {
    in = io::open_rows({a.input, a.format, "auto", false});
  } catch (const std::exception& e) {  // a dpstream error keeps its class (ResourceLimit: MemoryError)
    rethrow_with_message<InvalidParameter>(std::string("replay: cannot read the input: ") + e.what());
  }
  d = in.source->dimension();
  width = static_cast<std::size_t>(d);
  if (a.k > d)
    throw InvalidParameter("replay: k=" + std::to_string(a.k) + " is larger than the input's dimension " +
                           std::to_string(d));
  std::error_code no_path;  // the resolved input, as the report names it: a file by its canonical path
  const auto canonical = std::filesystem::canonical(in.source->path(), no_path);
  a.input = no_path ? in.source->path() : canonical.string();
  options = session_options(a);
  check_output();
  rows.emplace(*in.source, read_options());
}

// out/regret.csv, checked before a row is read or any noise drawn (as dpstream-replay's
// check_run_paths): only a regular file is replaced, and never the input.
void Replay::check_output() {
  namespace fs = std::filesystem;
  fs::create_directories(a.out);
  csv = (fs::path(a.out) / "regret.csv").string();
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(csv, ec);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw InvalidParameter("replay: out=" + a.out + ": " + csv +
                           " is not a regular file: only a regular file is replaced");
  if (!in.is_default && fs::equivalent(csv, a.input, ec))
    throw InvalidParameter("replay: the input " + a.input + " is out's regret.csv: writing it would destroy the input");
}

// The stream's length, if known, as dpstream-replay finds it: a fixed-horizon mechanism and the
// noisy power method are calibrated for it; a shuffled stream holds every row.
void Replay::size_stream() {
  std::optional<std::uint64_t> expected = in.source->declared_rows();
  if (a.limit != 0) expected = expected ? std::min(*expected, a.limit) : a.limit;
  if (a.shuffle) {
    while (const Eigen::VectorXd* row = rows->next()) held.insert(held.end(), row->data(), row->data() + d);
    options.known_rows = held.size() / width;
    order = stream::seeded_permutation(*options.known_rows, *a.shuffle);
    return;
  }
  options.known_rows = expected;
  if (!options.fixed_horizon() && !options.learners_need_length()) return;
  std::error_code ec;
  if (!expected && !in.is_default && std::filesystem::is_regular_file(a.input, ec)) {
    io::OpenedRows again = io::open_rows({a.input, a.format, "auto", false});
    options.known_rows = io::count_usable_rows(*again.source, read_options());
    length_counted = true;
  }
  if (!options.known_rows)
    throw InvalidParameter("replay: mechanism=" + a.mechanism + " (or learner power) is built for a known number of "
                           "rows, and " + in.source->path() + " is a stream of unknown length: give limit=N");
}

// Rows [first, first + n) of `staged`, in `perm` order (or as held), to the session.
bool Replay::hand(const double* staged, const std::uint64_t* perm, std::uint64_t first, std::uint64_t n) {
  Eigen::MatrixXd* slot = session->next_slot(n);
  if (!slot) return false;  // a worker failed: close() says why
  for (std::uint64_t i = 0; i < n; ++i)
    slot->row(static_cast<Index>(i)) =
        Eigen::Map<const Eigen::RowVectorXd>(staged + (perm ? perm[first + i] : first + i) * width, d);
  session->publish();
  return true;
}

void Replay::run() {
  const auto start = std::chrono::steady_clock::now();
  session = std::make_unique<session::OnlinePcaSession>(d, options);
  if (a.shuffle) {
    const std::uint64_t n = held.size() / width;
    for (std::uint64_t first = 0; first < n; first += a.block)
      if (!hand(held.data(), order.data(), first, std::min(a.block, n - first))) break;
  } else {
    std::vector<double> staged;  // a staging block: rows stream through, the learners overlap the reading
    for (bool more = true; more;) {
      staged.clear();
      const Eigen::VectorXd* row = nullptr;
      while (staged.size() < a.block * width && (row = rows->next()))
        staged.insert(staged.end(), row->data(), row->data() + d);
      more = row != nullptr;
      if (!staged.empty() && !hand(staged.data(), nullptr, 0, staged.size() / width)) break;
    }
  }
  session->close();
  integrity = io::verify_input(*in.source);  // a read stopped by limit: the rest too
  if (rows->used() == 0)
    throw std::runtime_error(in.source->path() + ": no usable rows (" +
                             std::to_string(rows->guard_counts().rejected) + " rejected by the guard, " +
                             std::to_string(in.source->skipped()) + " skipped by the reader)");
  session->finish();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  base::write_file_atomically(csv, eval::regret_csv(session->meter()));  // 0600: OPT is not private
}

// The dict, key for key as dpstream-replay's JSON line (tools/replay/report.cpp; its settings in
// the table's order), but "svg": None (Python writes regret.csv only).
py::dict Replay::report() const {
  const session::OnlinePcaSession& p = *session;
  const eval::RegretMeter& meter = p.meter();
  const bool priv = p.accountant() != nullptr;
  const py::object none = py::none();
  // A figure as the tool's JSON writer gives it: NaN and ±Inf as null.
  auto num = [&](double v) { return std::isfinite(v) ? py::cast(v) : none; };
  auto private_setting = [&](py::object value) { return priv ? value : none; };
  const auto& counts = rows->guard_counts();
  const io::RowSource& source = *in.source;
  const std::size_t main = p.main_index();
  py::dict r;
  r["rows"] = rows->used(), r["dim"] = d, r["k"] = a.k;
  r["epsilon"] = private_setting(num(a.epsilon)), r["delta"] = private_setting(num(a.delta));
  r["mechanism"] = private_setting(py::str(a.mechanism)), r["block"] = a.block;
  r["opt"] = num(meter.opt()), r["gain"] = num(meter.gain(main)), r["regret"] = num(meter.regret(main));
  r["regret_over_opt"] = num(meter.regret_over_opt(main));
  r["nonprivate_regret_over_opt"] = num(meter.regret_over_opt(p.ftl_index()));
  r["rows_clipped"] = counts.clipped, r["rows_rejected"] = counts.rejected;
  r["seconds"] = num(std::round(seconds * 1000) / 1000);
  r["rows_read"] = source.rows_returned() + source.skipped(), r["rows_skipped"] = source.skipped();
  r["rows_zero"] = rows->zero();
  const io::NonRowLines& lines = source.non_row_lines();
  r["header_lines"] = lines.header, r["comment_lines"] = lines.comment, r["blank_lines"] = lines.blank;
  r["input_integrity"] = integrity, r["input"] = a.input, r["normalize"] = a.normalize.normalize;
  r["shuffle"] = a.shuffle, r["nonnegative"] = a.nonnegative;
  r["noise_shape"] = private_setting(py::str(a.noise_shape));
  r["calibration"] = private_setting(py::str(a.calibration)), r["seed"] = private_setting(py::cast(a.seed));
  r["learner"] = a.learner;
  const stream::ContinualCovariance* sum = p.sum();
  r["secure_noise"] = sum ? py::cast(sum->is_secure()) : none;
  r["mu"] = sum ? num(sum->mu()) : none, r["node_sigma"] = sum ? num(sum->noise().draw_sigma()) : none;
  r["csv"] = csv, r["svg"] = none;
  r["privacy_unit"] = "row";  // replay() takes no user keys (OnlinePCA and dpstream.dask do)
  r["neighbours"] = private_setting(py::str(privacy::describe(session::session_relation(p))));
  r["not_private"] = session::not_private_keys();
  r["budget"] = session::session_budget(p);  // the tool's JSON key, in the same place
  if (!priv) return r;
  r["epsilon_spent"] = num(p.accountant()->spent().epsilon);
  py::dict learners;
  for (const session::LearnerFigures& f : p.learner_figures())
    learners[py::str(f.name)] = py::dict(py::arg("regret_over_opt") = num(f.regret_over_opt),
                                         py::arg("captured_ratio") = num(f.captured_ratio),
                                         py::arg("epsilon_share") = num(f.epsilon_share),
                                         py::arg("delta_share") = num(f.delta_share));
  r["learners"] = learners;
  return r;
}

py::dict replay(const py::dict& settings) {
  Replay r(read_args(settings));
  {
    py::gil_scoped_release unlocked;
    Eigen::initParallel();  // the session's threads call Eigen
    check_args(r.a);
    r.open();
    r.size_stream();
    r.run();
  }
  return r.report();
}

}  // namespace

void bind_replay(py::module_& m) {
  m.def("describe_learners", &session::describe_learners);  // the learner table, for replay()'s docstring
  m.def("replay", &replay, py::arg("settings"),
        "A replay through the online-PCA session with replay()'s settings (every key); returns the report dict.");
}

}  // namespace dpstream::python
