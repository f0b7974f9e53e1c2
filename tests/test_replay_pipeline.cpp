// dpstream-replay's library (tools/replay) on the online-PCA session: the threaded session gives
// exactly the results of the single-threaded protocol it spreads over threads (also with
// --nonnegative's deeper buffers); a
// checkpoint resumes to the uninterrupted run's results bit for bit, and a resume with a changed
// setting is refused naming the flag; a file that does not declare its length is counted for a
// fixed-horizon mechanism; the JSON line is well formed; the separable strategy's estimate on packed
// releases is the full one's, and its checkpoint reads both the packed and the earlier full form.
// In-memory and in-process: generated rows, no tool process spawned.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/guarded_reader.hpp"
#include "common/input.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/io/synthetic_rows.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/separable_noise.hpp"
#include "dpstream/stream/stationary_estimate.hpp"
#include "learner_states.pb.h"
#include "dpstream/session/followed_release.hpp"
#include "replay/report.hpp"
#include "replay/run.hpp"
#include "temp_dir.hpp"
#include "unaccounted.hpp"

namespace test_replay_pipeline {

using namespace dpstream;
using tools::replay::ReplayRun;
using tools::replay::ReplaySettings;

constexpr Eigen::Index kDim = 12;
constexpr std::uint64_t kRows = 1000;  // 31 full blocks of 32 and a partial one: flush() is exercised

io::SyntheticRowsOptions rows_options() {
  io::SyntheticRowsOptions o;
  o.dimension = kDim;
  o.rows = kRows;
  o.seed = 5;
  return o;
}

tools::OpenedInput generated() {
  tools::OpenedInput in;
  in.source = std::make_unique<io::SyntheticRowSource>(rows_options());
  in.title = "generated";
  return in;
}

ReplaySettings settings(const testing::TempDir& dir, const std::string& mechanism) {
  ReplaySettings s;
  s.mechanism = mechanism;
  s.k = 3;
  s.block = 32;
  s.privacy.seed = 9;
  s.out = dir.file("out");
  return s;
}

struct Figures {
  double opt, private_gain, ftl_gain;
};

// The protocol the session runs on four threads, on one: each block scored by both learners with
// the subspace they held before it, then observed; the private learner follows every release of the
// stream it is attached to, follow-the-leader the meter's exact sum at each full block.
Figures single_threaded(const ReplaySettings& s) {
  io::SyntheticRowSource source(rows_options());
  tools::GuardedReader reader(source, {s.normalize, false, 0, false});
  tools::RowBuffer rows(kDim);
  reader.fill(rows, UINT64_MAX);
  const std::uint64_t steps = (kRows + s.block - 1) / s.block;
  stream::ContinualCovariance sum(kDim, s.stream_options(steps), test_budget::unaccounted());
  pca::FplOptions p;
  p.k = s.k;
  p.mode = pca::FplMode::private_tree;
  pca::FplOnlinePca learner(kDim, p);
  learner.attach(sum);
  pca::FplOptions f;
  f.k = s.k;
  f.mode = pca::FplMode::follow_the_leader;
  f.refresh_every = s.block;
  pca::FplOnlinePca ftl(kDim, f);
  eval::RegretMeter meter(kDim, s.k, {"private", "ftl"}, s.block * std::max<std::uint64_t>(1, steps / 200));
  for (std::uint64_t first = 0; first < rows.rows; first += s.block) {
    const std::uint64_t n = std::min(s.block, rows.rows - first);
    const Eigen::MatrixXd block = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        rows.row(first), static_cast<Eigen::Index>(n), kDim);
    meter.add_gains(1, ftl.gains(block));
    meter.add_gains(0, learner.gains(block));
    meter.observe(block);
    if (meter.rows() % s.block == 0) ftl.follow(meter.hindsight_covariance());
    sum.update_block(block);
  }
  sum.flush();
  meter.finish();
  return {meter.opt(), meter.gain(0), meter.gain(1)};
}

// Generated rows with every entry's sign dropped: nonnegative rows, for --nonnegative.
class NonnegativeRows final : public io::RowSource {
 public:
  NonnegativeRows() : io::RowSource("generated, |a|", false), rows_(rows_options()) {}
  Eigen::Index dimension() const override { return rows_.dimension(); }
  bool next(io::RowRecord& out) override {
    if (!rows_.next(out)) return false;
    out.dense = out.dense.cwiseAbs();
    return true;
  }
  std::optional<std::uint64_t> declared_rows() const override { return rows_.declared_rows(); }
  io::RowFormat format() const override { return io::RowFormat::synthetic; }

 private:
  io::SyntheticRowSource rows_;
};

// The private learner's protocol under --nonnegative, on one thread: every release read by the
// replay's reader, then followed (with no noise floor: followed_noise_norm's 0 for a reading).
double single_threaded_nonnegative_gain(const ReplaySettings& s) {
  NonnegativeRows source;
  tools::GuardedReader reader(source, {s.normalize, false, 0, true});
  tools::RowBuffer rows(kDim);
  reader.fill(rows, UINT64_MAX);
  stream::ContinualCovariance sum(kDim, s.stream_options((kRows + s.block - 1) / s.block), test_budget::unaccounted());
  pca::FplOptions p;
  p.k = s.k;
  p.mode = pca::FplMode::private_tree;
  pca::FplOnlinePca learner(kDim, p);
  pca::DoublyNonnegativeReader nonnegative(
      kDim, {session::kNonnegativeRounds, session::kNonnegativeRefreshRatio});
  sum.subscribe([&](const stream::ContinualCovariance::Release& r) {
    Eigen::MatrixXd followed = r.noisy_prefix;
    nonnegative.apply(followed);
    learner.follow(followed, 0);
  });
  eval::RegretMeter meter(kDim, s.k, {"private"}, s.block);
  for (std::uint64_t first = 0; first < rows.rows; first += s.block) {
    const std::uint64_t n = std::min(s.block, rows.rows - first);
    const Eigen::MatrixXd block = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        rows.row(first), static_cast<Eigen::Index>(n), kDim);
    meter.add_gains(0, learner.gains(block));
    meter.observe(block);
    sum.update_block(block);
  }
  return meter.gain(0);
}

Figures replayed(ReplayRun& run) {
  const auto& p = run.session();
  return {p.meter().opt(), p.meter().gain(p.private_index()), p.meter().gain(p.ftl_index())};
}

TEST_CASE("the threaded session gives the single-threaded protocol's results exactly") {
  testing::TempDir dir;
  for (const std::string mechanism : {"tree", "blt"}) {
    ReplaySettings s = settings(dir, mechanism);
    ReplayRun run(s, generated());
    run.replay();
    const Figures threads = replayed(run), reference = single_threaded(s);
    INFO(mechanism);
    CHECK(threads.opt == reference.opt);
    CHECK(threads.private_gain == reference.private_gain);
    CHECK(threads.ftl_gain == reference.ftl_gain);
    // A private learner that learned something, below the non-private one (noise costs gain).
    CHECK(threads.private_gain > 0);
    CHECK(threads.private_gain < threads.ftl_gain);
    CHECK(run.session().accountant()->ledger().size() == 1);
  }
}

TEST_CASE("--nonnegative: the deeper session gives the single-threaded protocol's results exactly") {
  // Under --nonnegative the stream may run up to 8 releases ahead of the learner (session_slots): the slots wrap
  // around several times in 31 releases, and the reader must still see them in order.
  testing::TempDir dir;
  ReplaySettings s = settings(dir, "blt");
  s.nonnegative = true;
  const session::SessionSlots slots = session::session_slots(kDim, s.session_options(kRows));
  CHECK(slots.releases == 8);
  CHECK(slots.sums == 8);
  CHECK(slots.ring == 12);
  tools::OpenedInput in;
  in.source = std::make_unique<NonnegativeRows>();
  in.title = "generated, |a|";
  ReplayRun run(s, std::move(in));
  run.replay();
  REQUIRE(run.session().nonnegative() != nullptr);
  CHECK(run.session().nonnegative()->releases() == (kRows + s.block - 1) / s.block);
  const double reference = single_threaded_nonnegative_gain(s);
  CHECK(run.session().meter().gain(run.session().private_index()) == reference);
  CHECK(reference > 0);
}

TEST_CASE("a checkpoint resumes to the uninterrupted run's results; a changed setting is refused by name") {
  testing::TempDir dir;
  ReplaySettings whole = settings(dir, "blt");
  ReplayRun uninterrupted(whole, generated());
  uninterrupted.replay();

  // A run that checkpoints every 5 releases; its last checkpoint (release 30) is left on disk, as a
  // run killed after it would leave it.
  ReplaySettings first = settings(dir, "blt");
  first.checkpoint = dir.file("run.ckpt");
  first.checkpoint_every = 5;
  {
    ReplayRun run(first, generated());
    run.replay();
  }
  REQUIRE(std::ifstream(first.checkpoint).good());

  ReplaySettings changed = first;
  changed.resume = true;
  changed.privacy.epsilon = 2;
  CHECK_THROWS_WITH(ReplayRun(changed, generated()),
                    Catch::Contains("other settings") && Catch::Contains("--epsilon"));

  ReplaySettings resumed = first;
  resumed.resume = true;
  resumed.checkpoint_every = 0;  // may change on resume
  ReplayRun run(resumed, generated());
  CHECK(run.figures().resumed_rows == 30 * 32);
  run.replay();
  const Figures a = replayed(uninterrupted), b = replayed(run);
  CHECK(a.opt == b.opt);
  CHECK(a.private_gain == b.private_gain);
  CHECK(a.ftl_gain == b.ftl_gain);
  run.remove_checkpoint();
  CHECK_FALSE(std::ifstream(first.checkpoint).good());
}

TEST_CASE("a file that does not declare its length is counted for a fixed-horizon mechanism") {
  testing::TempDir dir;
  const std::string csv = dir.file("rows.csv");
  {
    std::ofstream out(csv);
    for (int i = 0; i < 100; ++i) out << (i % 7) << "," << 1 + i % 3 << ",0.5\n";
    out << "1,nan,2\n";  // refused by the guard: counted, not used
  }
  for (const std::string mechanism : {"blt", "separable"}) {
    ReplaySettings s = settings(dir, mechanism);
    s.k = 1;
    s.block = 10;
    s.input.path = csv;
    s.input.skip_malformed = true;
    ReplayRun run(s, tools::open_input(s.input));
    CHECK(run.known_rows() == std::optional<std::uint64_t>(100));
    CHECK(run.figures().length_counted);
    run.replay();
    CHECK(run.session().sum()->options().horizon == 10);
    CHECK(run.reader().guard_counts().rejected == 1);
  }
  // The tree needs no length: an unbounded stream, nothing counted.
  ReplaySettings tree = settings(dir, "tree");
  tree.k = 1;
  tree.input.path = csv;
  tree.input.skip_malformed = true;
  ReplayRun run(tree, tools::open_input(tree.input));
  CHECK_FALSE(run.known_rows().has_value());
  CHECK_FALSE(run.figures().length_counted);
}

TEST_CASE("the JSON line: the fixed keys first, null for what a non-private run does not have") {
  testing::TempDir dir;
  ReplaySettings s = settings(dir, "tree");
  s.nonprivate = true;
  ReplayRun run(s, generated());
  run.replay();
  const tools::replay::ReportFiles files = tools::replay::write_report_files(run);
  const std::string json = tools::replay::json_line(run, files);
  CHECK(json.rfind("{\"rows\":1000,\"dim\":12,\"k\":3,\"epsilon\":null,\"delta\":null,\"mechanism\":null,\"block\":32,"
                   "\"opt\":", 0) == 0);
  CHECK(json.find("\"seed\":null") != std::string::npos);
  CHECK(json.find("nan") == std::string::npos);
  CHECK(json.back() == '}');
}

}  // namespace test_replay_pipeline
