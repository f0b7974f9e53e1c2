// Private Frank–Wolfe (completion/private_frank_wolfe.hpp) of Jain, Thakkar & Thakurta, "Differentially
// private matrix completion revisited" (ICML 2018), Algorithm 1: σ pins and accounting for both
// calibrations, the option checks, clipping vs refusal, the budget check before any data is read, the
// projection invariant, the per-round sensitivity over neighbouring pairs, the joint-DP structure, the
// rank, the release's noise against its closed form, the eigensolver against SelfAdjointEigenSolver, the
// oja eigensolver, and the synthetic regression against a reference prototype's table.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/completion/metrics.hpp"
#include "dpstream/completion/private_frank_wolfe.hpp"
#include "dpstream/completion/synthetic_ratings.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/snap.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_private_frank_wolfe {

using namespace dpstream;
using namespace dpstream::completion;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using privacy::Calibration;
using privacy::EpsDelta;
using privacy::Neighbours;

namespace {

// Users × items ratings: each user rates `per_user` distinct items chosen uniformly, values
// U[−scale, scale]. From a SeededNoiseSource (portable, unlike <random>'s distributions).
std::vector<Rating> random_ratings(Index users, Index items, Index per_user, double scale, std::uint64_t seed) {
  privacy::SeededNoiseSource rng(seed);
  std::vector<Rating> out;
  std::vector<Index> order(static_cast<std::size_t>(items));
  for (Index i = 0; i < users; ++i) {
    std::iota(order.begin(), order.end(), Index{0});
    for (Index k = 0; k < per_user; ++k) {  // partial Fisher–Yates
      const auto pick = k + static_cast<Index>(rng.uniform_open() * static_cast<double>(items - k));
      std::swap(order[static_cast<std::size_t>(k)], order[static_cast<std::size_t>(pick)]);
    }
    std::vector<Index> chosen(order.begin(), order.begin() + per_user);
    std::sort(chosen.begin(), chosen.end());
    for (Index j : chosen) out.push_back({i, j, scale * (2.0 * rng.uniform_open() - 1.0)});
  }
  return out;
}

FrankWolfeOptions small_options(int iterations, double row_norm_bound, std::uint64_t seed) {
  FrankWolfeOptions o;
  o.nuclear_norm_bound = 50.0;
  o.iterations = iterations;
  o.privacy.row_norm_bound = row_norm_bound;
  o.privacy.target = EpsDelta(1.0, 1e-6);
  o.privacy.noise.seed = seed;
  return o;
}

// Y (users × items) from the trusted-curator view.
MatrixXd trusted_matrix(const FrankWolfeResult& result, Index users, Index items) {
  MatrixXd y(users, items);
  for (Index i = 0; i < users; ++i)
    for (Index j = 0; j < items; ++j) y(i, j) = result.predict(i, j);
  return y;
}

// Every user of `ratings`, built locally (FrankWolfeUser reads only her own row).
std::vector<FrankWolfeUser> local_users(const FrankWolfeOptions& options, const RatingsMatrix& ratings) {
  std::vector<FrankWolfeUser> users;
  for (Index i = 0; i < ratings.users(); ++i) users.emplace_back(options, ratings, i);
  return users;
}

// W = Σ A_iᵀA_i over `users` (skipping `skip`), as a full symmetric matrix.
MatrixXd gram_of(const std::vector<FrankWolfeUser>& users, Index items, Index skip = -1) {
  MatrixXd gram = MatrixXd::Zero(items, items);
  for (const FrankWolfeUser& user : users)
    if (user.user() != skip) user.add_contribution(gram);
  return gram.selfadjointView<Eigen::Lower>();
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// CI-scale protocol (ours; the reference prototype's split is not known): rank_one_ratings with ξ + 1 = 21 ratings
// per user; one of them, chosen uniformly per user by a seeded draw, is held out as that user's test
// rating (1e5 test ratings), the other ξ = 20 train. So every user has exactly ξ training ratings and
// ‖P_Ω(Y*_i)‖ ≤ √ξ = L, as in the prototype's setting (clipping never triggers).
struct HeldOutSplit {
  RatingsMatrix train;
  std::vector<Rating> test;
  double oracle_nuclear_norm = 0.0;  // k = ‖u‖‖v‖ = ‖u vᵀ‖_nuc
};

HeldOutSplit held_out_split(Index users, Index items, Index per_user, std::uint64_t seed) {
  const SyntheticRatings data = rank_one_ratings(users, items, per_user + 1, seed);
  privacy::SeededNoiseSource pick(seed ^ 0x5eedULL);
  std::vector<Rating> train, test;
  train.reserve(static_cast<std::size_t>(users * per_user));
  for (Index i = 0; i < users; ++i) {
    const auto held = static_cast<Index>(pick.uniform_open() * static_cast<double>(per_user + 1));
    for (Index k = 0; k <= per_user; ++k)
      (k == held ? test : train).push_back(data.ratings[static_cast<std::size_t>(i * (per_user + 1) + k)]);
  }
  return {RatingsMatrix(users, items, train), std::move(test), data.user_factors.norm() * data.item_factors.norm()};
}


}  // namespace

TEST_CASE("Frank-Wolfe sigma pins: the paper formula as printed, tight below it, accountant within the target",
          "[frank-wolfe][calibration]") {
  // L² = 80, T = 10, δ = 1e-6 (a worked value of Algorithm 1's σ): σ = 80·√(640·ln 1e6)/ε. The pins are printed
  // to 0.1, so they are met within 0.05.
  const double l = std::sqrt(80.0);
  const std::vector<std::pair<double, double>> pins = {
      {1.0, 7522.5}, {0.1, 75225.2}, {0.5, 15045.0}, {2.0, 3761.3}, {5.0, 1504.5}};
  for (const auto& [epsilon, pin] : pins) {
    const EpsDelta target(epsilon, 1e-6);
    CHECK(paper_frank_wolfe_sigma(l, 10, target) == Approx(pin).margin(0.05));
    // Replacement: 64 → 128, i.e. × √2 (header).
    CHECK(paper_frank_wolfe_sigma(l, 10, target, Neighbours::replace_row) ==
          Approx(std::sqrt(2.0) * paper_frank_wolfe_sigma(l, 10, target)).epsilon(1e-14));

    FrankWolfeOptions o;
    o.iterations = 10;
    o.privacy.row_norm_bound = l;
    o.privacy.target = target;
    for (Neighbours relation : {Neighbours::add_remove_row, Neighbours::replace_row}) {
      o.privacy.relation = relation;
      o.privacy.calibration = Calibration::paper;
      const PrivateFrankWolfe paper(o);
      CHECK(paper.sigma() == paper_frank_wolfe_sigma(l, 10, target, relation));
      o.privacy.calibration = Calibration::tight;
      const PrivateFrankWolfe tight(o);
      // Tight: one Gaussian of sensitivity Δ·√T (GDP composition of the T releases).
      const double delta_release = relation == Neighbours::add_remove_row ? 4.0 * 80.0 : 4.0 * std::sqrt(2.0) * 80.0;
      CHECK(tight.release_sensitivity() == Approx(delta_release).epsilon(1e-14));
      CHECK(tight.releases() == 10);
      CHECK(tight.joint_sensitivity() == Approx(delta_release * std::sqrt(10.0)).epsilon(1e-14));
      CHECK(tight.sigma() == Approx(privacy::analytic_gaussian_sigma(delta_release * std::sqrt(10.0), target)).epsilon(1e-12));
      CHECK(tight.sigma() < paper.sigma());

      // The accountant, charged once, never spends more than the target (paper: zCDP ε ≤ 0.957ε).
      for (const PrivateFrankWolfe* mechanism : {&paper, &tight}) {
        privacy::PrivacyAccountant accountant(target);
        PrivateFrankWolfe trained(mechanism->options());
        const RatingsMatrix ratings(3, 4, random_ratings(3, 4, 2, 1.0, 1));
        trained.train(ratings, accountant);
        REQUIRE(accountant.ledger().size() == 1);
        const double sigma = mechanism->sigma();
        CHECK(*accountant.ledger()[0].rho ==
              Approx(10.0 * delta_release * delta_release / (2.0 * sigma * sigma)).epsilon(1e-12));
        CHECK(accountant.spent().epsilon <= epsilon * (1.0 + 1e-9));
      }
    }
  }
  // The zCDP bound behind the paper's 64 (Thm 3.1): ε_DP = ε²/(8 ln(1/δ)) + ε/√2 < ε.
  const double rho = privacy::gaussian_rho(4.0 * 80.0 * std::sqrt(10.0), paper_frank_wolfe_sigma(l, 10, {1.0, 1e-6}));
  CHECK(rho == Approx(1.0 / (8.0 * std::log(1e6))).epsilon(1e-12));
  CHECK(privacy::epsilon_from_rho_standard(rho, 1e-6) < 0.96);
}

TEST_CASE("Frank-Wolfe sensitivity formulas; W(D) - W(D') over random neighbouring pairs stays within them",
          "[frank-wolfe][privacy]") {
  CHECK(frank_wolfe_release_sensitivity(Neighbours::add_remove_row, 3.0) == Approx(36.0).epsilon(1e-15));
  CHECK(frank_wolfe_release_sensitivity(Neighbours::replace_row, 3.0) == Approx(36.0 * std::sqrt(2.0)).epsilon(1e-15));

  // Ratings up to 3 in magnitude against L = 2: most users are clipped, so their rows sit at norm L and
  // the residuals can reach 2L. The broadcasts of one run are fed to the users of D and D' alike
  // (adaptive composition conditions on them).
  const Index users = 60, items = 10;
  const double l = 2.0;
  FrankWolfeOptions o = small_options(6, l, 5);
  o.step = FrankWolfeStep::standard;
  o.bias_multiplier = 0.0;  // large steps: residuals move far from −ratings
  o.nuclear_norm_bound = 200.0;
  const std::vector<Rating> base = random_ratings(users, items, 6, 3.0, 21);
  const RatingsMatrix d(users, items, base);
  PrivateFrankWolfe mechanism(o);
  const FrankWolfeResult run = mechanism.train(d, test_budget::unaccounted());
  REQUIRE(run.broadcasts.size() == 5);

  privacy::SeededNoiseSource pick(99);
  double worst_add_remove = 0.0, worst_replace = 0.0;
  for (int pair = 0; pair < 20; ++pair) {
    const auto changed = static_cast<Index>(pick.uniform_open() * users);
    // Replacement: user `changed` gets a fresh random row.
    std::vector<Rating> replaced;
    for (const Rating& r : base)
      if (r.user != changed) replaced.push_back(r);
    for (Rating r : random_ratings(1, items, 1 + pair % 9, 3.0, 1000 + pair)) {
      r.user = changed;
      replaced.push_back(r);
    }
    const RatingsMatrix d_replaced(users, items, replaced);
    std::vector<FrankWolfeUser> ours = local_users(o, d), theirs = local_users(o, d_replaced);
    for (const FrankWolfeBroadcast& broadcast : run.broadcasts) {
      const MatrixXd w = gram_of(ours, items);
      // Add/remove: D' = D without user `changed` (every other user is the same object).
      const double removed = (w - gram_of(ours, items, changed)).norm();
      const double swapped = (w - gram_of(theirs, items)).norm();
      CHECK(removed <= 4.0 * l * l * (1.0 + 1e-12));
      CHECK(swapped <= 4.0 * std::sqrt(2.0) * l * l * (1.0 + 1e-12));
      worst_add_remove = std::max(worst_add_remove, removed / (4.0 * l * l));
      worst_replace = std::max(worst_replace, swapped / (4.0 * std::sqrt(2.0) * l * l));
      for (auto* population : {&ours, &theirs})
        for (FrankWolfeUser& user : *population) user.apply(broadcast);
    }
  }
  // The pairs come near the bound (a clipped user alone gives L² = 1/4 of it at round 1).
  CHECK(worst_add_remove > 0.25);
  CHECK(worst_replace > 0.2);
}

TEST_CASE("options are checked at construction, each naming its field", "[frank-wolfe][validation]") {
  const auto refused = [](auto change, const char* name) {
    FrankWolfeOptions o;
    change(o);
    CHECK_THROWS_NAMING(PrivateFrankWolfe(o), InvalidParameter, Contains(name));
  };
  refused([](FrankWolfeOptions& o) { o.nuclear_norm_bound = 0.0; }, "nuclear_norm_bound");
  refused([](FrankWolfeOptions& o) { o.nuclear_norm_bound = std::nan(""); }, "nuclear_norm_bound");
  refused([](FrankWolfeOptions& o) { o.iterations = 0; }, "iterations");
  refused([](FrankWolfeOptions& o) { o.privacy.row_norm_bound = -1.0; }, "row_norm_bound");
  refused([](FrankWolfeOptions& o) { o.privacy.row_norm_bound = 1e200; }, "row_norm_bound");  // (2L)² overflows
  refused([](FrankWolfeOptions& o) { o.privacy.target = EpsDelta(1.0, 0.0); }, "delta");
  refused([](FrankWolfeOptions& o) { o.privacy.calibration = static_cast<Calibration>(7); }, "calibration");
  refused([](FrankWolfeOptions& o) { o.privacy.relation = static_cast<Neighbours>(7); }, "relation");
  refused([](FrankWolfeOptions& o) { o.step = static_cast<FrankWolfeStep>(7); }, "step");
  refused([](FrankWolfeOptions& o) { o.bias_multiplier = 1.5; }, "bias_multiplier");
  refused([](FrankWolfeOptions& o) { o.bias_multiplier = -0.1; }, "bias_multiplier");
  refused([](FrankWolfeOptions& o) { o.failure_probability = 0.0; }, "failure_probability");
  refused([](FrankWolfeOptions& o) { o.failure_probability = 1.0; }, "failure_probability");
  refused([](FrankWolfeOptions& o) { o.eigensolver = static_cast<FrankWolfeEigensolver>(7); }, "eigensolver");
  refused([](FrankWolfeOptions& o) { o.oja_iterations = 0; }, "oja_iterations");
  refused(
      [](FrankWolfeOptions& o) {
        o.nonprivate = true;
        o.eigensolver = FrankWolfeEigensolver::oja;
      },
      "eigensolver");
  // The paper calibration's condition ε ≤ 2 ln(1/δ) = 27.63 at δ = 1e-6 (Algorithm 1, Thm 3.1); tight has none.
  refused(
      [](FrankWolfeOptions& o) {
        o.privacy.calibration = Calibration::paper;
        o.privacy.target = EpsDelta(30.0, 1e-6);
      },
      "epsilon");
  FrankWolfeOptions tight;
  tight.privacy.target = EpsDelta(30.0, 1e-6);
  CHECK_NOTHROW(PrivateFrankWolfe(tight));
  CHECK_THROWS_NAMING(paper_frank_wolfe_sigma(1.0, 10, EpsDelta(30.0, 1e-6)), InvalidParameter, Contains("epsilon"));

  // Calls that are refused.
  const RatingsMatrix ratings(4, 5, random_ratings(4, 5, 2, 0.5, 3));
  FrankWolfeOptions nonprivate;
  nonprivate.nonprivate = true;
  PrivateFrankWolfe baseline(nonprivate);
  CHECK(baseline.sigma() == 0.0);
  CHECK(baseline.releases() == 0);
  CHECK_FALSE(baseline.secure());
  privacy::PrivacyAccountant accountant(EpsDelta(1.0, 1e-6));
  CHECK_THROWS_NAMING(baseline.train(ratings, accountant), InvalidParameter, Contains("accountant"));
  PrivateFrankWolfe mechanism(small_options(4, 1.0, 1));
  CHECK_THROWS_NAMING(mechanism.train(RatingsMatrix(3, 0, {}), test_budget::unaccounted()), InvalidParameter, Contains("item"));
  CHECK_THROWS_NAMING(FrankWolfeUser(small_options(4, 1.0, 1), ratings, 4), InvalidParameter, Contains("user 4"));
  FrankWolfeUser user(small_options(4, 1.0, 1), ratings, 0);
  FrankWolfeBroadcast out_of_order{2, VectorXd::Unit(5, 0), 1.0, 1.0, 2.0};
  CHECK_THROWS_NAMING(user.apply(out_of_order), InvalidParameter, Contains("broadcast"));
  FrankWolfeBroadcast wrong_size{1, VectorXd::Unit(4, 0), 1.0, 1.0, 2.0};
  CHECK_THROWS_NAMING(user.apply(wrong_size), InvalidParameter, Contains("entries"));
  CHECK_THROWS_NAMING(frank_wolfe_step_size(FrankWolfeStep::paper, 10, 10), InvalidParameter, Contains("step"));
  CHECK(frank_wolfe_step_size(FrankWolfeStep::paper, 10, 3) == 0.1);
  CHECK(frank_wolfe_step_size(FrankWolfeStep::standard, 10, 1) == 2.0 / 3.0);  // round t = 2: 2/(t+1)
  CHECK(frank_wolfe_step_size(FrankWolfeStep::standard, 10, 3) == 0.4);
}

TEST_CASE("users over L are clipped and counted, or refused naming the user", "[frank-wolfe][validation]") {
  // L = 2. User 1: norm 5 (3-4 row); user 2: norm 2·(1 + 1e-13) (within the refusal slack, over L);
  // users 0 and 3 within L.
  const double over = 2.0 * (1.0 + 1e-13);
  const std::vector<Rating> ratings = {{0, 0, 1.0}, {1, 0, 3.0}, {1, 2, -4.0}, {2, 1, over}, {3, 3, -2.0}};
  const RatingsMatrix matrix(4, 4, ratings);
  FrankWolfeOptions o = small_options(3, 2.0, 4);

  PrivateFrankWolfe clipping(o);
  const FrankWolfeResult result = clipping.train(matrix, test_budget::unaccounted());
  CHECK(result.users_clipped == 2);
  const FrankWolfeUser clipped(o, matrix, 1);
  CHECK(clipped.clipped());
  CHECK(clipped.ratings().norm() <= 2.0);
  CHECK(clipped.ratings()(0) == Approx(3.0 * 2.0 / 5.0).epsilon(1e-15));  // scaled, direction kept
  CHECK(clipped.ratings()(1) == Approx(-4.0 * 2.0 / 5.0).epsilon(1e-15));
  CHECK_FALSE(FrankWolfeUser(o, matrix, 3).clipped());  // exactly L is not over

  o.clip_user_rows = false;
  PrivateFrankWolfe refusing(o);
  CHECK_THROWS_NAMING(refusing.train(matrix, test_budget::unaccounted()), InvalidRow, Contains("user 1"));
  try {
    refusing.train(matrix, test_budget::unaccounted());
  } catch (const InvalidRow& e) {
    CHECK(e.row_index() == 1);
  }
  // Without user 1, user 2 (over L by 1e-13 relative) passes the 1e-12 round-off allowance.
  const RatingsMatrix without_user_1(4, 4, {{0, 0, 1.0}, {2, 1, over}, {3, 3, -2.0}});
  const FrankWolfeResult accepted = refusing.train(without_user_1, test_budget::unaccounted());
  CHECK(accepted.users_clipped == 0);
}

TEST_CASE("a budget too small is refused before any rating is read or noise drawn", "[frank-wolfe][accounting]") {
  const RatingsMatrix valid(30, 8, random_ratings(30, 8, 4, 0.5, 8));
  // User 2 over L with refusal: if the data were read before charging, InvalidRow would come first.
  std::vector<Rating> bad_ratings = random_ratings(30, 8, 4, 0.5, 8);
  bad_ratings.push_back({2, 7, 100.0});
  std::sort(bad_ratings.begin(), bad_ratings.end(),
            [](const Rating& a, const Rating& b) { return a.user != b.user ? a.user < b.user : a.item < b.item; });
  bad_ratings.erase(std::unique(bad_ratings.begin(), bad_ratings.end(),
                                [](const Rating& a, const Rating& b) { return a.user == b.user && a.item == b.item; }),
                    bad_ratings.end());
  const RatingsMatrix bad(30, 8, bad_ratings);
  FrankWolfeOptions o = small_options(5, 2.0, 17);
  o.clip_user_rows = false;

  PrivateFrankWolfe refused(o);
  privacy::PrivacyAccountant small_budget(EpsDelta(0.5, 1e-6));
  CHECK_THROWS_NAMING(refused.train(bad, small_budget), BudgetExhausted, Contains("private frank-wolfe"));
  CHECK(small_budget.ledger().empty());

  // Nothing was drawn either: the refused object now gives what a fresh one gives.
  privacy::PrivacyAccountant budget(EpsDelta(1.0, 1e-6));
  const FrankWolfeResult after = refused.train(valid, budget);
  PrivateFrankWolfe fresh(o);
  const FrankWolfeResult expected = fresh.train(valid, test_budget::unaccounted());
  REQUIRE(after.broadcasts.size() == expected.broadcasts.size());
  for (std::size_t t = 0; t < after.broadcasts.size(); ++t)
    CHECK(after.broadcasts[t].direction == expected.broadcasts[t].direction);
  CHECK(budget.ledger().size() == 1);
  // A run refused after the charge (a user over L) keeps its charge: conservative.
  privacy::PrivacyAccountant large_budget(EpsDelta(10.0, 1e-6));
  CHECK_THROWS_AS(refused.train(bad, large_budget), InvalidRow);
  CHECK(large_budget.ledger().size() == 1);
}

TEST_CASE("Frank-Wolfe projection invariant: after every local step ||P_Omega(Y_i)|| <= L and ||A_i|| <= 2L",
          "[frank-wolfe][projection]") {
  // k at 30× the scale of the data and the standard step (η₁ = 1): the unprojected iterates overshoot,
  // so Π binds. The users are replayed from the broadcasts; the replay must end on the trusted
  // coefficients bitwise (so the invariant is the run's, not just the replay's).
  const Index users = 300, items = 25;
  const double l = std::sqrt(8.0);
  const RatingsMatrix ratings(users, items, random_ratings(users, items, 8, 1.0, 31));
  for (FrankWolfeStep step : {FrankWolfeStep::standard, FrankWolfeStep::paper}) {
    FrankWolfeOptions o = small_options(8, l, 32);
    o.step = step;
    o.nuclear_norm_bound = 30.0 * std::sqrt(static_cast<double>(users * items));
    o.bias_multiplier = 0.0;
    o.privacy.target = EpsDelta(20.0, 1e-6);
    std::vector<FrankWolfeUser> replay = local_users(o, ratings);
    int at_the_bound = 0;
    PrivateFrankWolfe mechanism(o);
    const FrankWolfeResult result = mechanism.train(ratings, test_budget::unaccounted(), "fw", [&](const FrankWolfeRound& round) {
      for (FrankWolfeUser& user : replay) {
        user.apply(round.broadcast);
        const double norm = user.observed_predictions().norm();
        CHECK(norm <= l * (1.0 + 1e-12));
        CHECK(user.residual().norm() <= 2.0 * l * (1.0 + 1e-12));
        if (norm >= l * (1.0 - 1e-9)) ++at_the_bound;
      }
    });
    CHECK(at_the_bound > 0);
    for (const FrankWolfeUser& user : replay)
      for (Index s = 0; s < user.steps(); ++s)
        CHECK(same_bits(user.coefficients()(s), result.trusted_user_coefficients(user.user(), s)));
  }
}

TEST_CASE("Frank-Wolfe joint DP: user j's row is a function of the broadcasts and her own ratings only",
          "[frank-wolfe][joint-dp]") {
  // Same noise seed; user i = 5 changes her ratings. The broadcasts change; every other user's row,
  // rebuilt from the RECORDED broadcasts and her own ratings (the ones of D, which are hers in D' too),
  // equals the trusted view of the D' run bit for bit.
  const Index users = 80, items = 15, changed = 5;
  std::vector<Rating> base = random_ratings(users, items, 6, 1.0, 41);
  std::vector<Rating> moved = base;
  for (Rating& r : moved)
    if (r.user == changed) r.value = -r.value + 0.25;
  const RatingsMatrix d(users, items, base), d_prime(users, items, moved);
  FrankWolfeOptions o = small_options(6, std::sqrt(6.0), 43);
  o.privacy.target = EpsDelta(5.0, 1e-6);
  o.bias_multiplier = 0.2;  // visible steps at this small m
  o.step = FrankWolfeStep::standard;

  PrivateFrankWolfe run_d(o), run_d_prime(o);
  const FrankWolfeResult on_d = run_d.train(d, test_budget::unaccounted()), on_d_prime = run_d_prime.train(d_prime, test_budget::unaccounted());
  bool broadcasts_differ = false;
  for (std::size_t t = 0; t < on_d.broadcasts.size(); ++t)
    broadcasts_differ = broadcasts_differ || on_d.broadcasts[t].direction != on_d_prime.broadcasts[t].direction;
  CHECK(broadcasts_differ);
  CHECK(on_d.trusted_user_coefficients.cwiseAbs().maxCoeff() > 0.0);

  int rows_checked = 0, rows_differ = 0;
  for (Index j = 0; j < users; ++j) {
    if (j == changed) continue;
    const VectorXd mine = rebuild_user_predictions(o, d, j, on_d_prime.broadcasts);
    const VectorXd in_d = rebuild_user_predictions(o, d, j, on_d.broadcasts);
    bool equal_prime = true, equal_d = true;
    for (Index item = 0; item < items; ++item) {
      equal_prime = equal_prime && same_bits(mine(item), on_d_prime.predict(j, item));
      equal_d = equal_d && same_bits(in_d(item), on_d.predict(j, item));
    }
    CHECK(equal_prime);
    CHECK(equal_d);
    ++rows_checked;
    if (mine != in_d) ++rows_differ;  // through the broadcasts only
  }
  CHECK(rows_checked == users - 1);
  CHECK(rows_differ > 0);
}

TEST_CASE("Frank-Wolfe rank: every row lies in the span of the T-1 broadcast directions", "[frank-wolfe][rank]") {
  const Index users = 200, items = 30;
  const RatingsMatrix ratings(users, items, random_ratings(users, items, 10, 1.0, 51));
  for (bool nonprivate : {false, true}) {
    FrankWolfeOptions o = small_options(5, std::sqrt(10.0), 52);
    o.nonprivate = nonprivate;
    o.bias_multiplier = 0.0;
    o.privacy.target = EpsDelta(10.0, 1e-6);
    PrivateFrankWolfe mechanism(o);
    const FrankWolfeResult result = mechanism.train(ratings, test_budget::unaccounted());
    REQUIRE(result.broadcasts.size() == 4);
    const MatrixXd y = trusted_matrix(result, users, items);
    MatrixXd v(4, items);
    for (int s = 0; s < 4; ++s) {
      v.row(s) = result.broadcasts[static_cast<std::size_t>(s)].direction.transpose();
      CHECK(result.broadcasts[static_cast<std::size_t>(s)].direction.norm() == Approx(1.0).epsilon(1e-12));
    }
    // Projection onto the row space of V̂: relative residual at round-off (1e-12 with margin).
    const MatrixXd projected = y * v.transpose() * (v * v.transpose()).inverse() * v;
    CHECK((y - projected).norm() <= 1e-12 * y.norm());
    const VectorXd singular = linalg::singular_values(y);
    CHECK(singular(0) > 0.0);
    CHECK(singular(4) <= 1e-12 * singular(0));  // rank ≤ T − 1 = 4
  }
}

TEST_CASE("the release: W(t) plus symmetric N(0, sigma^2) noise on and below the diagonal, snapped",
          "[frank-wolfe][statistical]") {
  // Users replayed from the broadcasts give the exact W(t); Ŵ(t) − W(t) must be the noise: over the
  // K = (T−1)·n(n+1)/2 independent entries, Σ(N/σ)² ~ χ²_K, Σ N/(σ√K) ~ N(0, 1). Bands at α = 1e-9 each
  // (Laurent–Massart, Chernoff; stat_helpers.hpp): a correct sampler fails with probability ≤ 2e-9,
  // while σ off by 5% moves χ² by 10% = 7.5 band half-widths. Round-off of W's summation (≤ 1e-12·σ here)
  // and snapping (≤ 2^-31·σ) are far below.
  const Index users = 100, items = 40;
  const RatingsMatrix ratings(users, items, random_ratings(users, items, 8, 1.0, 61));
  FrankWolfeOptions o = small_options(11, std::sqrt(8.0), 62);
  o.privacy.target = EpsDelta(50.0, 1e-6);
  PrivateFrankWolfe mechanism(o);
  const double sigma = mechanism.sigma();
  const double grid = privacy::snap_granularity(sigma);
  std::vector<FrankWolfeUser> replay = local_users(o, ratings);
  double chi_square = 0.0, sum = 0.0, count = 0.0;
  bool symmetric = true, snapped = true;
  mechanism.train(ratings, test_budget::unaccounted(), "fw", [&](const FrankWolfeRound& round) {
    REQUIRE(round.released_gram != nullptr);
    const MatrixXd& released = *round.released_gram;
    const MatrixXd w = gram_of(replay, items);
    for (Index j = 0; j < items; ++j)
      for (Index i = j; i < items; ++i) {
        const double noise = (released(i, j) - w(i, j)) / sigma;
        chi_square += noise * noise;
        sum += noise;
        count += 1.0;
        symmetric = symmetric && same_bits(released(i, j), released(j, i));
        snapped = snapped && std::fmod(released(i, j), grid) == 0.0;
      }
    for (FrankWolfeUser& user : replay) user.apply(round.broadcast);
  });
  CHECK(count == 10.0 * 40.0 * 41.0 / 2.0);
  const auto [low, high] = testing::chi_square_interval(count, 1e-9);
  CHECK(chi_square >= low);
  CHECK(chi_square <= high);
  CHECK(std::fabs(sum / std::sqrt(count)) <= testing::chernoff_z(1e-9));
  CHECK(symmetric);
  CHECK(snapped);
}

TEST_CASE("exact eigensolver: the top pair of the release, as SelfAdjointEigenSolver finds it",
          "[frank-wolfe][eigensolver]") {
  // Lanczos stops at a Ritz residual ≤ 1e-10·‖Ŵ‖₂; the eigenvalue then agrees to ~1e-10 relative and the
  // pair's residual is ≤ 1e-10·‖Ŵ‖₂ (checked at 1e-9). Noise-dominated (small ε: a clustered top of the
  // spectrum), data-dominated, and non-private releases.
  const Index users = 400, items = 120;
  const RatingsMatrix ratings(users, items, random_ratings(users, items, 15, 1.0, 71));
  for (double epsilon : {0.5, 20.0, 0.0}) {
    FrankWolfeOptions o = small_options(5, std::sqrt(15.0), 72);
    o.nonprivate = epsilon == 0.0;
    if (!o.nonprivate) o.privacy.target = EpsDelta(epsilon, 1e-6);
    PrivateFrankWolfe mechanism(o);
    int rounds = 0;
    mechanism.train(ratings, test_budget::unaccounted(), "fw", [&](const FrankWolfeRound& round) {
      const MatrixXd& released = *round.released_gram;
      const linalg::SymmetricEigenSolver reference(released);
      const double top = reference.eigenvalues()(items - 1);
      const double norm = reference.eigenvalues().cwiseAbs().maxCoeff();
      const FrankWolfeBroadcast& b = round.broadcast;
      CHECK(std::fabs(b.top_eigenvalue - top) <= 1e-9 * norm);
      CHECK((released * b.direction - b.top_eigenvalue * b.direction).norm() <= 1e-9 * norm);
      CHECK(b.direction.norm() == Approx(1.0).epsilon(1e-12));
      CHECK(b.singular_value == std::sqrt(std::max(b.top_eigenvalue, 0.0)));
      CHECK(b.damped_singular_value == b.singular_value + mechanism.bias(items));
      ++rounds;
    });
    CHECK(rounds == 4);
  }
}

TEST_CASE("oja eigensolver: no n x n matrix, T(Gamma+1) releases accounted, useful at large epsilon",
          "[frank-wolfe][oja]") {
  // CI-scale set (as in the synthetic regression) with the tight calibration at ε = 5: Oja's σ covers all T(Γ+1) releases
  // (110 here), so it is ≈ 3.3× the exact mode's; the RMSE still beats the zero predictor (0.335) by a
  // wide margin (measured 0.238 for this split and seed; the prototype's exact mode with the paper σ: 0.206).
  const HeldOutSplit split = held_out_split(100000, 100, 20, 81);
  FrankWolfeOptions o;
  o.nuclear_norm_bound = split.oracle_nuclear_norm;
  o.iterations = 10;
  o.privacy.row_norm_bound = std::sqrt(20.0);
  o.privacy.target = EpsDelta(5.0, 1e-6);
  o.step = FrankWolfeStep::standard;
  o.eigensolver = FrankWolfeEigensolver::oja;
  o.oja_iterations = 10;
  o.privacy.noise.seed = 82;
  PrivateFrankWolfe mechanism(o);
  const double l2 = o.privacy.row_norm_bound * o.privacy.row_norm_bound;
  CHECK(mechanism.releases() == 10 * 11);
  CHECK(mechanism.release_sensitivity() == Approx(4.0 * l2).epsilon(1e-14));  // (2L)², both relations
  CHECK(mechanism.sigma() == privacy::analytic_gaussian_sigma(4.0 * l2 * std::sqrt(110.0), o.privacy.target));
  FrankWolfeOptions paper = o;
  paper.privacy.calibration = Calibration::paper;
  CHECK(PrivateFrankWolfe(paper).sigma() == pca::paper_oja_sigma(2.0 * o.privacy.row_norm_bound, 10 * 10, o.privacy.target));

  privacy::PrivacyAccountant accountant(o.privacy.target);
  int rounds = 0;
  const FrankWolfeResult result = mechanism.train(split.train, accountant, "fw oja", [&](const FrankWolfeRound& round) {
    CHECK(round.released_gram == nullptr);
    ++rounds;
  });
  CHECK(rounds == 9);
  REQUIRE(accountant.ledger().size() == 1);
  CHECK(*accountant.ledger()[0].rho ==
        Approx(110.0 * 16.0 * l2 * l2 / (2.0 * mechanism.sigma() * mechanism.sigma())).epsilon(1e-12));
  CHECK(accountant.spent().epsilon <= 5.0 * (1.0 + 1e-9));
  CHECK(result.bias == Approx(std::sqrt(mechanism.sigma() * std::log(100.0 / 0.01)) * std::sqrt(10.0)).epsilon(1e-12));
  const double error = rmse([&](Index u, Index j) { return result.predict(u, j); }, split.test);
  CHECK(error < 0.26);
}

TEST_CASE("PrivateOja's expert sigma override (what the oja mode uses): that sigma, charged as rho only",
          "[frank-wolfe][oja]") {
  pca::PrivateOjaOptions o;
  o.iterations = 5;
  o.privacy.row_norm_bound = 2.0;
  o.privacy.noise.seed = 3;
  o.sigma = 123.0;
  pca::PrivateOja oja(o);
  CHECK(oja.sigma() == 123.0);
  privacy::PrivacyAccountant accountant(EpsDelta(100.0, 1e-6));
  const MatrixXd rows = MatrixXd::Identity(4, 3);
  oja.run(rows, accountant);
  REQUIRE(accountant.ledger().size() == 1);
  // Γ + 1 = 6 releases of sensitivity L² = 4: ρ = 6·16/(2·123²); no (ε, δ) claim (basic bound +inf).
  CHECK(*accountant.ledger()[0].rho == Approx(6.0 * 16.0 / (2.0 * 123.0 * 123.0)).epsilon(1e-12));
  CHECK(std::isinf(accountant.ledger()[0].epsilon));
  o.sigma = 0.0;
  CHECK_THROWS_NAMING(pca::PrivateOja(o), InvalidParameter, Contains("sigma"));
}

TEST_CASE("seeded runs are reproducible; two runs of one object differ; unseeded is secure; T = 1",
          "[frank-wolfe][noise]") {
  const RatingsMatrix ratings(50, 12, random_ratings(50, 12, 5, 1.0, 91));
  const FrankWolfeOptions o = small_options(4, std::sqrt(5.0), 92);
  PrivateFrankWolfe a(o), b(o);
  const FrankWolfeResult first = a.train(ratings, test_budget::unaccounted()), same = b.train(ratings, test_budget::unaccounted()), second = a.train(ratings, test_budget::unaccounted());
  CHECK(first.trusted_user_coefficients == same.trusted_user_coefficients);
  for (std::size_t t = 0; t < first.broadcasts.size(); ++t) {
    CHECK(first.broadcasts[t].direction == same.broadcasts[t].direction);
    CHECK(first.broadcasts[t].top_eigenvalue != second.broadcasts[t].top_eigenvalue);
  }
  CHECK_FALSE(a.secure());
  FrankWolfeOptions unseeded = o;
  unseeded.privacy.noise.seed.reset();
  CHECK(PrivateFrankWolfe(unseeded).secure());
  unseeded.eigensolver = FrankWolfeEigensolver::oja;
  CHECK(PrivateFrankWolfe(unseeded).secure());

  // T = 1: the warm-up only; nothing is released and every prediction is 0; still charged for 1 release.
  FrankWolfeOptions one = o;
  one.iterations = 1;
  PrivateFrankWolfe warm_up_only(one);
  privacy::PrivacyAccountant accountant(one.privacy.target);
  const FrankWolfeResult nothing = warm_up_only.train(ratings, accountant);
  CHECK(nothing.broadcasts.empty());
  CHECK(nothing.predict(3, 7) == 0.0);
  CHECK(accountant.ledger().size() == 1);
  CHECK(warm_up_only.releases() == 1);
}


TEST_CASE("Frank-Wolfe synthetic regression: test RMSE within 0.02 of a reference prototype's table (3 seeds)",
          "[frank-wolfe][regression][statistical-regression]") {
  // m = 1e5, n = 100, ξ = 20, rank one, δ = 1e-6, oracle k, L = √20, T = 10, paper calibration, full
  // bias (c = 1), exact eigensolver. "Non-private" is nonprivate = true: the same algorithm with σ = 0
  // (no noise, no bias). The ±0.02 band is the prototype's acceptance criterion for a 3-seed mean; it
  // absorbs the unknown details of the prototype's split and β (the seed-to-seed spread of the private
  // cells is ≈ 0.003). One training at this scale takes ≈ 0.25 s (release build, 2 cores).
  struct Cell {
    FrankWolfeStep step;
    double epsilon;  // 0: non-private
    double reference;  // the reference prototype's table
  };
  const std::vector<Cell> table = {{FrankWolfeStep::paper, 0.0, 0.139},    {FrankWolfeStep::paper, 1.0, 0.290},
                                   {FrankWolfeStep::paper, 5.0, 0.239},    {FrankWolfeStep::standard, 0.0, 0.049},
                                   {FrankWolfeStep::standard, 1.0, 0.285}, {FrankWolfeStep::standard, 5.0, 0.206}};
  const std::vector<Cell>& cells = table;
  std::vector<double> mean(cells.size(), 0.0);
  double zero_predictor = 0.0;
  const std::vector<std::uint64_t> seeds = {1, 2, 3};
  for (std::uint64_t seed : seeds) {
    const HeldOutSplit split = held_out_split(100000, 100, 20, seed);
    zero_predictor += rmse([](Index, Index) { return 0.0; }, split.test) / 3.0;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      FrankWolfeOptions o;
      o.nuclear_norm_bound = split.oracle_nuclear_norm;
      o.iterations = 10;
      o.privacy.row_norm_bound = std::sqrt(20.0);
      o.privacy.calibration = Calibration::paper;
      o.step = cells[c].step;
      o.nonprivate = cells[c].epsilon == 0.0;
      if (!o.nonprivate) o.privacy.target = EpsDelta(cells[c].epsilon, 1e-6);
      o.privacy.noise.seed = 1000 + seed;
      PrivateFrankWolfe mechanism(o);
      const FrankWolfeResult result = mechanism.train(split.train, test_budget::unaccounted());
      CHECK(result.users_clipped == 0);
      mean[c] += rmse([&](Index u, Index j) { return result.predict(u, j); }, split.test) / 3.0;
    }
  }
  CHECK(zero_predictor == Approx(0.335).margin(0.01));  // the zero predictor's sanity value
  for (std::size_t c = 0; c < cells.size(); ++c) {
    INFO("step " << to_string(cells[c].step) << ", epsilon " << cells[c].epsilon << ": RMSE " << mean[c]
                 << ", reference " << cells[c].reference);
    CHECK(mean[c] == Approx(cells[c].reference).margin(0.02));
  }
  // RMSE falls with ε and stays above the non-private value (the expected behaviour).
  CHECK(mean[0] < mean[2]);
  CHECK(mean[2] < mean[1]);
  CHECK(mean[3] < mean[5]);
  CHECK(mean[5] < mean[4]);
}

TEST_CASE("parse_frank_wolfe_step and parse_frank_wolfe_eigensolver: inverses of to_string; other names refused", "[frank-wolfe]") {
  for (const FrankWolfeStep step : {FrankWolfeStep::paper, FrankWolfeStep::standard})
    CHECK(parse_frank_wolfe_step(to_string(step)) == step);
  for (const FrankWolfeEigensolver solver : {FrankWolfeEigensolver::exact, FrankWolfeEigensolver::oja})
    CHECK(parse_frank_wolfe_eigensolver(to_string(solver)) == solver);
  CHECK_THROWS_NAMING(parse_frank_wolfe_step("1/T"), InvalidParameter,
                      Contains("Frank-Wolfe step '1/T': expected paper or standard"));
  CHECK_THROWS_NAMING(parse_frank_wolfe_eigensolver("lanczos"), InvalidParameter,
                      Contains("Frank-Wolfe eigensolver 'lanczos': expected exact or oja"));
}

}  // namespace test_private_frank_wolfe
