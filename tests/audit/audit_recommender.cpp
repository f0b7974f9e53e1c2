// Privacy audits of the private recommender (method: epsilon_audit.hpp), user level.
// Neighbours: add/remove one user — D' is D without the target user's ratings.
//
//  * The private baseline (private_baseline.hpp): both released blocks are observable. The attacker
//    knows every rating, so she computes the exact blocks under D and D' (baseline_statistics) and the
//    exact log-likelihood ratio Σ_blocks (‖y − s'‖² − ‖y − s‖²)/(2σ²). The target rates every item at
//    the top of the scale, so both blocks move by exactly their sensitivity √2 (attained): the measured
//    μ is the claim's.
//  * Planted bug: weights per rating instead of per user (w = 1 for each of her m = 4 ratings, as if
//    every rating were a user): the item block then moves by 2√2, and the audit must flag the claim.
//  * The online Recommender (online_recommender.hpp): its first release, all users in one block, so
//    every row is a function of its user's ratings alone; the attacker computes the rows
//    (packed_row) and the exact likelihood ratio of the noisy prefix. Audited against the whole
//    stream's μ (one release of a tree is at most that). Planted bug: the target added twice (two
//    participations), which doubles her row and must be flagged.
//  * DpamAls V-steps (slow): from release 2 on, the statistics are a function of the public model
//    after release 1 (the baseline and V), so the attacker computes them exactly under D and D'
//    (dpam_v_step_statistics) and the exact Gaussian log-likelihood ratio. The baseline release and
//    release 1 (computed from the initial V, not released) are left out: the audit measures T − 1 of
//    the T V-steps, against the claim of those alone.
//  * DpamAls's model gate: one Gaussian sum of the users' clipped held-out gains against a public
//    model. The attacker computes every term (dpam_gate_term) under D and D' and the exact likelihood
//    ratio. The target's factor fits her ratings perfectly, so her gain is far over the bound and the
//    sensitivity gate_bound is attained. Planted bug: her term not clipped, which must be flagged.
//
// Trials as in audit_completion.cpp: 40000 a side, δ' = 0.1, confidence 1 − 1e-4.
#include <catch2/catch.hpp>

#include <cmath>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/dpam_als.hpp"
#include "dpstream/completion/online_recommender.hpp"
#include "dpstream/completion/private_baseline.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/privacy/gaussian_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "epsilon_audit.hpp"
#include "../unaccounted.hpp"

namespace audit_recommender {

namespace {

using dpstream::audit::gdp_epsilon;
using dpstream::audit::kAuditDelta;
using dpstream::audit::run_audit;
using dpstream::completion::Rating;
using dpstream::completion::RatingsMatrix;
using dpstream::privacy::EpsDelta;
using Eigen::Index;
using Eigen::VectorXd;

constexpr long kTrials = 40000;
constexpr Index kUsers = 6, kItems = 4, kTarget = 0;

const std::vector<Rating> kShared = {{1, 0, 4.0}, {1, 1, 3.0}, {2, 1, 5.0}, {2, 2, 2.0}, {3, 0, 1.0},
                                     {3, 3, 4.0}, {4, 0, 3.0}, {4, 1, 4.0}, {5, 2, 4.5}, {5, 3, 0.5}};
const std::vector<Rating> kTargetRatings = {{kTarget, 0, 5.0}, {kTarget, 1, 5.0}, {kTarget, 2, 5.0}, {kTarget, 3, 5.0}};

RatingsMatrix data(bool with_target) {
  std::vector<Rating> all = kShared;
  if (with_target) all.insert(all.end(), kTargetRatings.begin(), kTargetRatings.end());
  return RatingsMatrix(kUsers, kItems, all);
}

// The baseline's blocks; `per_rating` plants the bug (every rating weighted as a user of its own).
dpstream::completion::BaselineStatistics blocks(const RatingsMatrix& ratings, bool per_rating) {
  const dpstream::completion::RatingScale scale;
  if (!per_rating) return dpstream::completion::baseline_statistics(ratings, scale);
  dpstream::completion::BaselineStatistics out{VectorXd::Zero(2), VectorXd::Zero(2 * ratings.items()), 0};
  for (Index i = 0; i < ratings.users(); ++i) {
    const std::vector<std::pair<Index, double>> row = ratings.user_ratings(i);
    for (const auto& rating : row) {
      VectorXd ignored = VectorXd::Zero(2);  // the global block keeps its per-user terms
      dpstream::completion::add_user_baseline_terms(scale, {&rating, 1}, ignored, out.items);
    }
    VectorXd unused = VectorXd::Zero(2 * ratings.items());
    dpstream::completion::add_user_baseline_terms(scale, row, out.global, unused);
  }
  return out;
}

// One trial of the baseline release: its exact log-likelihood ratio of D' against D.
VectorXd baseline_feature(const dpstream::completion::BaselineNoise& noise, bool per_rating, bool neighbour,
                          std::uint64_t seed) {
  const auto d = blocks(data(true), per_rating), d_prime = blocks(data(false), per_rating);
  const auto& observed = neighbour ? d_prime : d;
  dpstream::privacy::SeededNoiseSource source(seed);
  VectorXd global = observed.global, items = observed.items;
  dpstream::privacy::GaussianMechanism::with_sigma(std::sqrt(2.0), noise.global_sigma).add_noise(global, source, test_budget::unaccounted());
  dpstream::privacy::GaussianMechanism::with_sigma(std::sqrt(2.0), noise.item_sigma).add_noise(items, source, test_budget::unaccounted());
  const auto llr = [](const VectorXd& y, const VectorXd& s, const VectorXd& s_prime, double sigma) {
    return 0.5 * ((y - s_prime).squaredNorm() - (y - s).squaredNorm()) / (sigma * sigma);
  };
  return VectorXd::Constant(1, llr(global, d.global, d_prime.global, noise.global_sigma) +
                                   llr(items, d.items, d_prime.items, noise.item_sigma));
}

}  // namespace

TEST_CASE("audit: the private baseline stays within its claim", "[audit][completion]") {
  const dpstream::completion::PrivateBaseline probe({}, EpsDelta(2.0, 1e-3), 0.25);
  const double claimed = gdp_epsilon(probe.noise().mu(), kAuditDelta);
  const auto result = run_audit("private baseline (both blocks)", 501, kTrials, kAuditDelta, claimed,
                                [&](bool n, std::uint64_t s) { return baseline_feature(probe.noise(), false, n, s); });
  CHECK(result.epsilon_lb <= claimed);
  // Not vacuous: the target attains both sensitivities, so the measured μ is the claim's (measured: a
  // bound of 0.49 against the claim's 0.58; the planted bug below reaches 1.52).
  CHECK(result.epsilon_lb > 0.3 * claimed);
}

TEST_CASE("audit: planted bug — baseline weights per rating instead of per user is caught", "[audit][planted]") {
  const dpstream::completion::PrivateBaseline probe({}, EpsDelta(2.0, 1e-3), 0.25);
  const double claimed = gdp_epsilon(probe.noise().mu(), kAuditDelta);
  const auto result = run_audit("planted: baseline weights per rating", 502, kTrials, kAuditDelta, claimed,
                                [&](bool n, std::uint64_t s) { return baseline_feature(probe.noise(), true, n, s); });
  CHECK(result.epsilon_lb > claimed);
}

namespace {

// One trial of the online Recommender's first release: all six users are added in one block (before
// any release, so every row is a function of its user's ratings alone), and the attacker's exact
// log-likelihood ratio of that release under D' against D. `twice` plants the bug: the target is
// added twice (two participations: the contract's "call add() once per user" broken).
VectorXd recommender_feature(const dpstream::completion::RecommenderOptions& options, bool twice, bool neighbour,
                             std::uint64_t seed) {
  auto o = options;
  o.als.seed = seed;
  dpstream::completion::Recommender recommender(o, test_budget::unaccounted());
  std::vector<std::vector<std::pair<Index, double>>> rows(kUsers);
  for (const Rating& r : kShared) rows[static_cast<std::size_t>(r.user)].emplace_back(r.item, r.value);
  for (const Rating& r : kTargetRatings) rows[kTarget].emplace_back(r.item, r.value);
  VectorXd others = VectorXd::Zero(recommender.dimension());
  for (Index i = 1; i < kUsers; ++i) others += recommender.packed_row(rows[static_cast<std::size_t>(i)]);
  const VectorXd target = recommender.packed_row(rows[kTarget]) * (twice ? 2.0 : 1.0);
  if (!neighbour) {
    recommender.add(rows[kTarget]);
    if (twice) recommender.add(rows[kTarget]);
  }
  for (Index i = 1; i < kUsers; ++i) recommender.add(rows[static_cast<std::size_t>(i)]);
  recommender.flush();
  const VectorXd& y = recommender.released();
  const double variance = recommender.release_sigma() * recommender.release_sigma();
  return VectorXd::Constant(1, 0.5 * ((y - others).squaredNorm() - (y - others - target).squaredNorm()) / variance);
}

dpstream::completion::RecommenderOptions audited_recommender() {
  dpstream::completion::RecommenderOptions o;
  o.items = kItems;
  o.release_every = 64;  // one block: the flush makes the only release
  o.als.rank = 1;
  o.als.fold_in.factor_regularization = 1e-3;  // the target's factor reaches B_u
  o.als.target = EpsDelta(2.0, 1e-3);
  return o;
}

}  // namespace

TEST_CASE("audit: the online Recommender's release stays within the stream's claim", "[audit][completion]") {
  const auto options = audited_recommender();
  const double claimed = gdp_epsilon(dpstream::completion::Recommender(options, test_budget::unaccounted()).mu(), kAuditDelta);
  const auto result = run_audit("online recommender (first release)", 504, kTrials, kAuditDelta, claimed,
                                [&](bool n, std::uint64_t s) { return recommender_feature(options, false, n, s); });
  CHECK(result.epsilon_lb <= claimed);
}

TEST_CASE("audit: planted bug — a user added twice to the online stream is caught", "[audit][planted]") {
  const auto options = audited_recommender();
  const double claimed = gdp_epsilon(dpstream::completion::Recommender(options, test_budget::unaccounted()).mu(), kAuditDelta);
  const auto result = run_audit("planted: recommender user added twice", 505, kTrials, kAuditDelta, claimed,
                                [&](bool n, std::uint64_t s) { return recommender_feature(options, true, n, s); });
  CHECK(result.epsilon_lb > claimed);
}

TEST_CASE("audit: DpamAls V-steps 2..T stay within their claim", "[audit][completion][slow]") {
  dpstream::completion::DpamAlsOptions options;
  options.rank = 1;
  options.iterations = 3;
  options.min_item_count_sds = 0.0;  // every item gets a factor
  options.fold_in.factor_regularization = 1e-3;  // factors reach B_u: the sensitivity is attained
  options.target = EpsDelta(3.0, 1e-3);
  const dpstream::completion::DpamAls probe(options);
  // The claim of the T − 1 measured V-steps alone: μ² = (T − 1)·Δ_a²/σ_a².
  const double measured_mu = std::sqrt(options.iterations - 1.0) * probe.release_sensitivity() / probe.release_sigma();
  const double claimed = gdp_epsilon(measured_mu, kAuditDelta);
  const RatingsMatrix d = data(true), d_prime = data(false);
  const auto result = run_audit(
      "dpam als (V-steps 2..T)", 503, kTrials, kAuditDelta, claimed, [&](bool neighbour, std::uint64_t seed) {
        auto o = options;
        o.seed = seed;
        dpstream::completion::DpamAls dpam(o);
        dpstream::completion::ItemModel previous;  // the public model the next release is computed from
        double llr = 0.0;
        const double variance = probe.release_sigma() * probe.release_sigma();
        dpam.train(neighbour ? d_prime : d, test_budget::unaccounted(), "audit", [&](const dpstream::completion::DpamRelease& r) {
          if (r.iteration >= 2) {
            const VectorXd s = dpstream::completion::dpam_v_step_statistics(o, previous, d);
            const VectorXd s_prime = dpstream::completion::dpam_v_step_statistics(o, previous, d_prime);
            llr += 0.5 * ((r.statistics - s_prime).squaredNorm() - (r.statistics - s).squaredNorm()) / variance;
          }
          previous = r.model;
        });
        return VectorXd::Constant(1, llr);
      });
  // Measured: a bound of 0.10 against the claim's 0.56 — the target's clipped residuals and factor do
  // not reach the worst case in every item here, so this audit is weak evidence; the sensitivity itself
  // is checked exactly in test_dpam_als ("V-step: removing any user ...").
  CHECK(result.epsilon_lb <= claimed);
}

namespace {

// The public model the gate is computed against: one factor, +1 on even items and −1 on odd ones.
dpstream::completion::ItemModel gate_model() {
  dpstream::completion::ItemModel model;
  model.global_mean = 3.0;
  model.item_bias = VectorXd::Zero(kItems);
  model.item_factors.resize(kItems, 1);
  model.item_factors << 1.0, -1.0, 1.0, -1.0;
  model.item_weight = VectorXd::Constant(kItems, 10.0);
  return model;
}

const std::vector<std::pair<Index, double>> kGateTarget = {{0, 5.0}, {1, 1.0}, {2, 5.0}, {3, 1.0}};

// One trial of the gate's release: the exact log-likelihood ratio of D' against D. `unclipped` plants
// the bug: the target's term enters at its raw mean gain.
VectorXd gate_feature(const dpstream::completion::DpamAlsOptions& options, double sigma, bool unclipped,
                      bool neighbour, std::uint64_t seed) {
  const auto model = gate_model();
  const RatingsMatrix shared = data(false);
  double others = 0.0;
  for (Index i = 0; i < shared.users(); ++i) {
    bool clipped = false;
    others += dpstream::completion::dpam_gate_term(options, model, shared.user_ratings(i), clipped).value_or(0.0);
  }
  auto target_options = options;
  if (unclipped) target_options.gate_bound = 1e9;
  bool clipped = false;
  const double with_target = others + *dpstream::completion::dpam_gate_term(target_options, model, kGateTarget, clipped);
  dpstream::privacy::SeededNoiseSource source(seed);
  VectorXd y = VectorXd::Constant(1, neighbour ? others : with_target);
  dpstream::privacy::GaussianMechanism::with_sigma(options.gate_bound, sigma).add_noise(y, source, test_budget::unaccounted());
  const double llr = 0.5 * (std::pow(y[0] - others, 2) - std::pow(y[0] - with_target, 2)) / (sigma * sigma);
  return VectorXd::Constant(1, llr);
}

dpstream::completion::DpamAlsOptions audited_gate() {
  dpstream::completion::DpamAlsOptions o;
  o.target = EpsDelta(2.0, 1e-3);
  o.gate_share = 0.5;  // a large share: a strong gate to audit
  o.global_share = 0.1;
  o.baseline_share = 0.1;
  return o;
}

}  // namespace

TEST_CASE("audit: the DpamAls model gate stays within its claim", "[audit][completion]") {
  const auto o = audited_gate();
  const dpstream::completion::DpamAls probe(o);
  const double claimed = gdp_epsilon(o.gate_bound / probe.gate_sigma(), kAuditDelta);
  bool clipped = false;
  REQUIRE(*dpstream::completion::dpam_gate_term(o, gate_model(), kGateTarget, clipped) == o.gate_bound);
  REQUIRE(clipped);  // the sensitivity is attained
  const auto result = run_audit("dpam model gate", 506, kTrials, kAuditDelta, claimed,
                                [&](bool n, std::uint64_t s) { return gate_feature(o, probe.gate_sigma(), false, n, s); });
  CHECK(result.epsilon_lb <= claimed);
  CHECK(result.epsilon_lb > 0.3 * claimed);  // not vacuous: the bound is attained
}

TEST_CASE("audit: planted bug — a gate term left unclipped is caught", "[audit][planted]") {
  const auto o = audited_gate();
  const dpstream::completion::DpamAls probe(o);
  const double claimed = gdp_epsilon(o.gate_bound / probe.gate_sigma(), kAuditDelta);
  const auto result = run_audit("planted: gate term unclipped", 507, kTrials, kAuditDelta, claimed,
                                [&](bool n, std::uint64_t s) { return gate_feature(o, probe.gate_sigma(), true, n, s); });
  CHECK(result.epsilon_lb > claimed);
}

}  // namespace audit_recommender
