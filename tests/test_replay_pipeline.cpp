// dpstream-replay's library (tools/replay): the threaded pipeline gives exactly the results of the
// single-threaded protocol it spreads over threads (also with --nonnegative's deeper buffers); a
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
#include "replay/full_projections.hpp"
#include "replay/report.hpp"
#include "replay/run.hpp"
#include "temp_dir.hpp"

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

// The protocol the pipeline runs on four threads, on one: each block scored by both learners with
// the subspace they held before it, then observed; the private learner follows every release of the
// stream it is attached to, follow-the-leader the meter's exact sum at each full block.
Figures single_threaded(const ReplaySettings& s) {
  io::SyntheticRowSource source(rows_options());
  tools::GuardedReader reader(source, {s.normalize, false, 0, false});
  tools::RowBuffer rows(kDim);
  reader.fill(rows, UINT64_MAX);
  const std::uint64_t steps = (kRows + s.block - 1) / s.block;
  stream::ContinualCovariance sum(kDim, s.stream_options(steps));
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
  stream::ContinualCovariance sum(kDim, s.stream_options((kRows + s.block - 1) / s.block));
  pca::FplOptions p;
  p.k = s.k;
  p.mode = pca::FplMode::private_tree;
  pca::FplOnlinePca learner(kDim, p);
  pca::DoublyNonnegativeReader nonnegative(
      kDim, {tools::replay::kNonnegativeRounds, tools::replay::kNonnegativeRefreshRatio});
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
  const auto& p = run.pipeline();
  return {p.meter().opt(), p.meter().gain(p.private_index()), p.meter().gain(p.ftl_index())};
}

TEST_CASE("the threaded pipeline gives the single-threaded protocol's results exactly") {
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
    CHECK(run.pipeline().accountant()->ledger().size() == 1);
  }
}

TEST_CASE("--nonnegative: the deeper pipeline gives the single-threaded protocol's results exactly") {
  // Under --nonnegative S may run up to 8 releases ahead of L (pipeline_slots): the slots wrap
  // around several times in 31 releases, and the reader must still see them in order.
  testing::TempDir dir;
  ReplaySettings s = settings(dir, "blt");
  s.nonnegative = true;
  const tools::replay::PipelineSlots slots = tools::replay::pipeline_slots(kDim, s);
  CHECK(slots.releases == 8);
  CHECK(slots.sums == 8);
  CHECK(slots.ring == 12);
  tools::OpenedInput in;
  in.source = std::make_unique<NonnegativeRows>();
  in.title = "generated, |a|";
  ReplayRun run(s, std::move(in));
  run.replay();
  REQUIRE(run.pipeline().nonnegative() != nullptr);
  CHECK(run.pipeline().nonnegative()->releases() == (kRows + s.block - 1) / s.block);
  const double reference = single_threaded_nonnegative_gain(s);
  CHECK(run.pipeline().meter().gain(run.pipeline().private_index()) == reference);
  CHECK(reference > 0);
}

TEST_CASE("FullProjections: the reader's full releases, projected by two threads, bit for bit as the reader would") {
  using tools::replay::FullProjections;
  constexpr double kRatio = 1.0 / 3.0;
  std::vector<Eigen::MatrixXd> releases(60);
  for (std::size_t t = 1; t < releases.size(); ++t) {
    const Eigen::MatrixXd a = Eigen::MatrixXd::Random(6, 6);
    releases[t] = a + a.transpose();
  }
  // A reader continued from release 40 (last full 35): its next full releases are 47 and 63 > 59.
  pca::DoublyNonnegativeReader reference(6, {1, kRatio}), ahead(6, {1, kRatio});
  for (std::uint64_t t = 1; t <= 40; ++t) {
    Eigen::MatrixXd c = releases[t];
    reference.apply(c);
    Eigen::MatrixXd d = releases[t];
    ahead.apply(d);
  }
  REQUIRE(reference.last_full() == 35);
  FullProjections projections(ahead.releases(), ahead.last_full(), kRatio, 2,
                              [&](std::uint64_t t) -> const Eigen::MatrixXd& { return releases[t]; });
  std::thread helper([&] {
    while (projections.help()) {
    }
  });
  std::vector<std::uint64_t> full;
  for (std::uint64_t t = 41; t < releases.size(); ++t) {
    projections.published(t);
    Eigen::MatrixXd expected = releases[t], read = releases[t];
    const bool is_full = reference.next_is_full();
    reference.apply(expected);
    if (is_full) {
      full.push_back(t);
      const Eigen::MatrixXd* projected = projections.take(t);
      REQUIRE(projected != nullptr);
      ahead.apply_projected(read, *projected);
      projections.give_back(t);
    } else {
      CHECK_THROWS_WITH(ahead.apply_projected(read, releases[t]), Catch::Contains("not a full release"));
      ahead.apply(read);
    }
    CHECK(read == expected);  // bit for bit
  }
  CHECK(full == std::vector<std::uint64_t>{47});
  CHECK(ahead.state().correction == reference.state().correction);
  // The next full release (63) is never published: a take() waits until stop().
  std::thread stopper([&] { projections.stop(); });
  CHECK(projections.take(63) == nullptr);
  stopper.join();
  helper.join();
  CHECK_THROWS_WITH(projections.give_back(63), Catch::Contains("was not taken"));
}

TEST_CASE("pipeline_slots: 2 more releases where 32 MiB holds them; under --nonnegative deeper within its budget, never below 3") {
  using tools::replay::pipeline_slots;
  testing::TempDir dir;
  ReplaySettings s = settings(dir, "separable");
  s.block = 128;
  // d = 784: a slot of each (release, packed sum, block) is ≈ 8.2 MB, 4 fit in 32 MiB: 2 more
  // releases (the most), and as many sums.
  const tools::replay::PipelineSlots at_784 = pipeline_slots(784, s);
  CHECK((at_784.ring == 8 && at_784.sums == 4 && at_784.releases == 4 && at_784.projections == 0));
  // d = 1536: ≈ 30 MB, one fits; d = 2048: ≈ 52 MB, none: the defaults.
  CHECK((pipeline_slots(1536, s).releases == 3 && pipeline_slots(1536, s).sums == 3));
  const tools::replay::PipelineSlots usual = pipeline_slots(2048, s);
  CHECK((usual.ring == 8 && usual.sums == 3 && usual.releases == 2 && usual.projections == 0));
  s.nonnegative = true;
  // d = 784, blocks of 128: a slot of each is 8·(784² · 1.5 + 784·128) bytes ≈ 8.2 MB, 15 fit in
  // 128 MiB; capped at 2 + 6.
  CHECK(pipeline_slots(784, s).releases == 8);
  CHECK(pipeline_slots(784, s).projections == 2);
  // d = 1536: ≈ 29.9 MB a slot, 4 fit: the budget binds below the cap.
  CHECK(pipeline_slots(1536, s).releases == 6);
  // d = 2048: ≈ 52 MB a slot, 2 fit: 4 releases.
  CHECK(pipeline_slots(2048, s).releases == 4);
  // d = 4096: none fit; the minimum, one each for S, L and the slot S writes next.
  const tools::replay::PipelineSlots large = pipeline_slots(4096, s);
  CHECK((large.releases == 3 && large.sums == 3 && large.ring == 8));
  s.nonprivate = true;  // no private learner: nothing to read
  CHECK(pipeline_slots(784, s).releases == 2);
  s.nonnegative = false;
  CHECK((pipeline_slots(784, s).releases == 2 && pipeline_slots(784, s).sums == 3));
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
    CHECK(run.pipeline().sum()->options().horizon == 10);
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
