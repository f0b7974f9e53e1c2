// The online-PCA session (dpstream/session/): run by the caller's thread it gives the threaded
// session's results bit for bit (every mechanism, nonnegative, several learners); saved as parts at
// a block and rebuilt from them it continues to the uninterrupted results; a missing part, or one
// whose state its object refuses, is refused (CorruptInput) naming it; its threads carry names that
// say what they do; the learner table and the buffers' depth (session_slots) and the projections
// computed ahead (FullProjections).
#include <catch2/catch.hpp>

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/estimator.hpp"
#include "dpstream/pca/private_pca_method.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/pca/streaming_private_pca.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/session/full_projections.hpp"
#include "dpstream/session/online_pca_session.hpp"
#include "dpstream/session/session_labels.hpp"

namespace test_online_pca_session {

using namespace dpstream;
using session::OnlinePcaOptions;
using session::OnlinePcaSession;

constexpr Eigen::Index kDim = 10;
constexpr Eigen::Index kRows = 700;  // 21 full blocks of 32 and a partial one: flush() is exercised

// Seeded unit-norm rows (nonnegative: every entry's sign dropped).
Eigen::MatrixXd rows(bool nonnegative) {
  std::mt19937_64 gen(17);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd x(kRows, kDim);
  for (Eigen::Index i = 0; i < kRows; ++i)
    for (Eigen::Index j = 0; j < kDim; ++j) x(i, j) = (j < 3 ? 3.0 : 1.0) * normal(gen);
  if (nonnegative) x = x.cwiseAbs();
  x.rowwise().normalize();
  x *= 1.0 - 1e-12;  // under the bound 1 after the division's rounding (as RowGuard would clip)
  return x;
}

OnlinePcaOptions options(const std::string& mechanism, bool threaded) {
  OnlinePcaOptions o;
  o.k = 2;
  o.block = 32;
  o.minibatch = 100;
  o.known_rows = kRows;
  o.threaded = threaded;
  o.stream.strategy = stream::parse_noise_strategy(mechanism);
  o.stream.shape = privacy::SymmetricNoiseShape::goe;
  o.stream.privacy.target = privacy::EpsDelta(1.0, 1e-6);
  o.stream.privacy.noise.seed = 9;
  return o;
}

// Everything a run reports, to compare two runs with ==.
struct Outcome {
  double opt;
  std::vector<double> gains;
  Eigen::MatrixXd private_basis, ftl_basis;
  std::vector<double> learner_regrets;
  bool operator==(const Outcome&) const = default;
};

Outcome outcome(const OnlinePcaSession& s) {
  Outcome out{s.meter().opt(), {}, {}, s.follow_the_leader().basis(), {}};
  for (std::size_t i = 0; i < s.meter().learners().size(); ++i) out.gains.push_back(s.meter().gain(i));
  if (s.private_learner()) out.private_basis = s.private_learner()->basis();
  for (const session::LearnerFigures& f : s.learner_figures()) out.learner_regrets.push_back(f.regret_over_opt);
  return out;
}

Outcome run(const OnlinePcaOptions& o, const Eigen::MatrixXd& x) {
  OnlinePcaSession s(kDim, o);
  s.run(x);
  return outcome(s);
}

TEST_CASE("the session run by the caller's thread gives the threaded session's results bit for bit") {
  struct Case {
    std::string mechanism;
    bool nonnegative;
    std::vector<std::string> learners;
  };
  for (const Case& c : {Case{"tree", false, {"fpl"}}, Case{"blt", false, {"fpl"}}, Case{"separable", false, {"fpl"}},
                        Case{"blt", true, {"fpl"}}, Case{"separable", true, {"fpl"}},
                        Case{"tree", false, {"oja", "fpl", "power", "gauss"}}}) {
    INFO(c.mechanism << (c.nonnegative ? " nonnegative" : "") << ", " << c.learners.size() << " learners");
    const Eigen::MatrixXd x = rows(c.nonnegative);
    OnlinePcaOptions threaded = options(c.mechanism, true), inline_ = options(c.mechanism, false);
    threaded.nonnegative = inline_.nonnegative = c.nonnegative;
    threaded.learners = inline_.learners = c.learners;
    const Outcome a = run(threaded, x), b = run(inline_, x);
    CHECK(a == b);
    // A private learner that learned something, below the non-private one (noise costs gain).
    CHECK(a.gains.front() > 0);
    CHECK(a.gains.front() < a.gains.back());
    CHECK(a.learner_regrets.size() == c.learners.size());
  }
}

// A session saved at block 10 (after drain()) and rebuilt from its parts, fed the rest.
Outcome resumed(const OnlinePcaOptions& o, const Eigen::MatrixXd& x, session::SessionParts* saved = nullptr) {
  session::SessionParts parts;
  {
    OnlinePcaSession first(kDim, o);
    for (Eigen::Index b = 0; b < 10; ++b) {
      *first.next_slot(32) = x.middleRows(b * 32, 32);
      first.publish();
    }
    REQUIRE(first.drain());
    parts = first.save();
  }
  if (saved) *saved = parts;
  OnlinePcaSession second(kDim, o, &parts);
  CHECK(second.blocks_published() == 10);
  for (Eigen::Index first = 10 * 32; first < x.rows(); first += 32) {
    const Eigen::Index n = std::min<Eigen::Index>(32, x.rows() - first);
    *second.next_slot(static_cast<std::uint64_t>(n)) = x.middleRows(first, n);
    second.publish();
  }
  second.close();
  second.finish();
  return outcome(second);
}

TEST_CASE("saved as parts and rebuilt from them, a session continues to the uninterrupted results") {
  for (const std::string mechanism : {"blt", "separable"}) {
    for (const bool nonnegative : {false, true}) {
      INFO(mechanism << (nonnegative ? " nonnegative" : ""));
      OnlinePcaOptions o = options(mechanism, true);
      o.nonnegative = nonnegative;
      const Eigen::MatrixXd x = rows(nonnegative);
      session::SessionParts parts;
      CHECK(resumed(o, x, &parts) == run(o, x));
      std::set<std::string> names;
      for (const session::SessionPart& p : parts.parts) names.insert(p.name);
      std::set<std::string> expected{"continual_sum", "private_learner", "ftl", "meter"};
      if (mechanism == "separable") expected.insert("stationary");
      if (nonnegative) expected.insert("nonnegative");
      CHECK(names == expected);
      CHECK(parts.blocks == 10);
    }
  }
}

TEST_CASE("a saved session without one of its parts is refused, naming the part") {
  OnlinePcaOptions o = options("separable", true);
  o.nonnegative = true;
  session::SessionParts parts;
  resumed(o, rows(true), &parts);
  for (const char* name : {"continual_sum", "private_learner", "stationary", "nonnegative", "ftl", "meter"}) {
    session::SessionParts without = parts;
    std::erase_if(without.parts, [&](const session::SessionPart& p) { return p.name == name; });
    CHECK_THROWS_AS(OnlinePcaSession(kDim, o, &without), CorruptInput);
    CHECK_THROWS_WITH(OnlinePcaSession(kDim, o, &without), Catch::Contains(name));
  }
  session::SessionParts garbled = parts;
  garbled.parts.back().bytes = "\xff\xff not a message";
  CHECK_THROWS_WITH(OnlinePcaSession(kDim, o, &garbled), Catch::Contains("meter"));
}

// Bytes that parse but hold a state its object refuses (InvalidParameter from restore()) are a
// corrupt part: CorruptInput naming the part, never the InvalidParameter of a caller's argument.
TEST_CASE("a saved part that parses but holds a state its object refuses is corrupt input, named") {
  const OnlinePcaOptions o = options("blt", true);
  session::SessionParts parts;
  resumed(o, rows(false), &parts);
  // Field 3 is RegretMeter.gains and FplLearner.leader_values (both repeated double): three more
  // values (unpacked encoding, tag 0x19) make a count no meter of one learner, no learner of k = 2 has.
  std::string three_values;
  for (int i = 0; i < 3; ++i) three_values += std::string("\x19", 1) + std::string(8, '\0');
  for (const char* name : {"meter", "ftl", "private_learner"}) {
    INFO(name);
    session::SessionParts bad = parts;
    for (session::SessionPart& p : bad.parts)
      if (p.name == name) p.bytes += three_values;
    CHECK_THROWS_AS(OnlinePcaSession(kDim, o, &bad), CorruptInput);
    CHECK_THROWS_WITH(OnlinePcaSession(kDim, o, &bad), Catch::Contains(std::string("saved ") + name + " part"));
  }
}

// The names of this process's threads (Linux: /proc/self/task/*/comm).
std::multiset<std::string> thread_names() {
  std::multiset<std::string> names;
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return names;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    names.insert(name);
  }
  ::closedir(dir);
  return names;
}

TEST_CASE("the session's threads carry the names of what they do") {
#ifdef __linux__
  OnlinePcaOptions o = options("blt", true);
  o.nonnegative = true;
  OnlinePcaSession s(kDim, o);
  // Each thread names itself when it starts: wait for them (up to 10 s, far beyond a thread's start).
  std::multiset<std::string> names;
  for (int tries = 0; tries < 1000; ++tries) {
    names = thread_names();
    if (names.count("stream") && names.count("learner") && names.count("evaluation") && names.count("projection")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (const char* name : {"stream", "learner", "evaluation", "projection"}) {
    INFO(name);
    CHECK(names.count(name) == 1);
  }
  s.close();
  // Unthreaded: the caller runs every step, no thread is started.
  const std::size_t before = thread_names().size();
  OnlinePcaSession inline_session(kDim, options("blt", false));
  CHECK(thread_names().size() == before);
#endif
}

// The estimator contract (estimator.hpp), checked at compile time: the types it names fit the kind
// it says, and one it says is not yet fitted does not.
static_assert(OneShotEstimator<pca::PrivatePcaMethod>);
static_assert(StreamingEstimator<stream::ContinualCovariance, Eigen::Index, const stream::ContinualSumOptions&,
                                 const privacy::Budget&>);
static_assert(StreamingEstimator<pca::StreamingPrivateOja, Eigen::Index, const pca::StreamingPrivateOjaOptions&>);
static_assert(StreamingEstimator<pca::StreamingPrivatePca, Eigen::Index, const pca::StreamingPrivatePcaOptions&,
                                 const privacy::Budget&>);
static_assert(!OneShotEstimator<stream::ContinualCovariance>);

// The one-shot contract takes the budget handle: a release that needs a bare accountant (and so
// cannot be run unaccounted, with its reason stated) does not fit.
struct AccountantOnlyRelease {
  pca::PrivateSubspace release(const Eigen::MatrixXd& rows, privacy::PrivacyAccountant& accountant) const;
};
static_assert(!OneShotEstimator<AccountantOnlyRelease>);

TEST_CASE("the learner table: fpl and the row-fed learners; an unknown or repeated one is refused by name") {
  CHECK(session::known_learners() == std::vector<std::string>{"fpl", "oja", "power", "gauss"});
  OnlinePcaOptions o = options("tree", false);
  o.learners = {"fpl", "pca"};
  CHECK_THROWS_WITH(OnlinePcaSession(kDim, o), Catch::Contains("unknown learner 'pca'"));
  o.learners = {"oja", "fpl", "oja"};
  CHECK_THROWS_WITH(OnlinePcaSession(kDim, o), Catch::Contains("'oja' is listed twice"));
  // What the front ends read from the table: every learner in the help, with its label in reports;
  // the facts a front end plans by (the stream's length, memory) come from the listed kinds.
  const std::string help = session::describe_learners();
  for (const std::string& name : session::known_learners()) CHECK_THAT(help, Catch::Contains(name + " ("));
  CHECK(session::learner_label("power") == "streaming noisy power method");
  CHECK(session::learner_label("ftl") == "follow-the-leader (non-private)");
  CHECK(session::row_learners_need_length({"fpl", "power"}));
  CHECK_FALSE(session::row_learners_need_length({"fpl", "oja", "gauss"}));
  CHECK(session::row_learner_matrices({"fpl", "oja", "power", "gauss"}) == 5);
}

TEST_CASE("FullProjections: the reader's full releases, projected by two threads, bit for bit as the reader would") {
  using session::FullProjections;
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

TEST_CASE("session_slots: 2 more releases where 32 MiB holds them; under nonnegative deeper within its budget, never below 3") {
  using session::session_slots;
  OnlinePcaOptions s = options("separable", true);
  s.block = 128;
  // d = 784: a slot of each (release, packed sum, block) is ≈ 8.2 MB, 4 fit in 32 MiB: 2 more
  // releases (the most), and as many sums.
  const session::SessionSlots at_784 = session_slots(784, s);
  CHECK((at_784.ring == 8 && at_784.sums == 4 && at_784.releases == 4 && at_784.projections == 0));
  // d = 1536: ≈ 30 MB, one fits; d = 2048: ≈ 52 MB, none: the defaults.
  CHECK((session_slots(1536, s).releases == 3 && session_slots(1536, s).sums == 3));
  const session::SessionSlots usual = session_slots(2048, s);
  CHECK((usual.ring == 8 && usual.sums == 3 && usual.releases == 2 && usual.projections == 0));
  s.nonnegative = true;
  // d = 784, blocks of 128: a slot of each is 8·(784² · 1.5 + 784·128) bytes ≈ 8.2 MB, 15 fit in
  // 128 MiB; capped at 2 + 6.
  CHECK(session_slots(784, s).releases == 8);
  CHECK(session_slots(784, s).projections == 2);
  // d = 1536: ≈ 29.9 MB a slot, 4 fit: the budget binds below the cap.
  CHECK(session_slots(1536, s).releases == 6);
  // d = 2048: ≈ 52 MB a slot, 2 fit: 4 releases.
  CHECK(session_slots(2048, s).releases == 4);
  // d = 4096: none fit; the minimum, one each for the stream, the learner and the slot the stream writes next.
  const session::SessionSlots large = session_slots(4096, s);
  CHECK((large.releases == 3 && large.sums == 3 && large.ring == 8));
  s.nonprivate = true;  // no private learner: nothing to read
  CHECK(session_slots(784, s).releases == 2);
  s.nonnegative = false;
  CHECK((session_slots(784, s).releases == 2 && session_slots(784, s).sums == 3));
}

}  // namespace test_online_pca_session
