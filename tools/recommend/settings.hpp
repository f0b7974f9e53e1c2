// dpstream-recommend's settings: the flags, their checks, and the defaults that depend on the data
// (the centring constant, the rating bound, the per-user cap ξ).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cli_fwd.hpp"
#include <Eigen/Core>

#include "common/cli.hpp"

namespace dpstream::tools::recommend {

using Eigen::Index;

struct RecommendSettings {
  // data
  std::string input, format = "auto", synthetic = "seed004";
  // The public item catalogue of a file (data.hpp): --catalogue FILE, or --items-public declaring the
  // file's set of rated items public knowledge. A private run on a file needs one of them.
  std::string catalogue;
  bool items_public = false;
  bool skip_malformed = false;
  Index synthetic_users = 0, synthetic_items = 0, synthetic_rank = 5, per_user = 20;
  double observed = 0.1;
  double test_fraction = 0.1;
  Index top_items = 0, max_per_user = 0;
  std::uint64_t split_seed = 1;
  // model
  std::string method = "dpam", mechanism = "gaussian", mode = "rigorous";
  PrivacyFlags privacy;  // --epsilon, --delta, --seed (the calibration follows --mode)
  Index rank = 10;
  int iterations = 0;  // 0: the method's default (fw 10, als/irls 20)
  int irls_iterations = 20;
  std::optional<double> lambda;  // unset: 0.5 (seed 004) for seed001/seed004, 10 for star_scale sets
  double huber_alpha = 3.0;
  std::optional<double> noise_variance;  // faithful: overrides the variance derived from ε
  // Ratings are centred by a public constant before training (a data mean would be a query) and the
  // bound applies to the centred values. Unset: 3 and 2 for a file or a MovieLens-shaped set (the
  // 1..5 scale: movielens, ml-latest-small, ml-10m), 0 and 1 for seed001 (entries in [−1, 1]), 0 and the rank for seed004 (U, V ∈ [0, 1]).
  std::optional<double> center, rating_bound;
  double factor_bound = 1.0;
  // dpam: the public rating scale of a file or the MovieLens-shaped sets (before centring)
  double rating_min = 0.5, rating_max = 5.0;
  std::optional<double> nuclear_norm, row_norm_bound;
  bool oracle_k = false;  // fw on a generated set: k = ‖U Vᵀ‖_nuc of the truth (the oracle k of Jain, Thakkar & Thakurta 2018, Section 4)
  std::string step = "standard", eigensolver = "exact";
  double bias = 1.0;
  // output
  std::string recommend;
  Index top = 10;
  // streaming
  Index refresh_every = 0;
  long planned_refreshes = 0;
  // online (online.hpp): users arrive in timestamp order, are served, then join the continual release
  bool online = false;
  Index release_every = 50;
  std::string online_noise = "tree";  // tree (plain, unbounded) | blt (horizon: --online-horizon)
  Index online_horizon = 0;            // blt: releases, public
  std::string out;     // --out DIR: DIR/online.csv and DIR/online.svg
  bool force = false;  // replace those files if they exist
  std::string max_memory;  // --max-memory (common/memory.hpp): estimates of what grows are checked against it

  bool generated() const { return input.empty(); }
  bool private_run() const { return mechanism != "none"; }
};

void add_recommend_options(CLI::App& app, RecommendSettings& s);
// UsageError naming the flag for anything that can be checked before the data is read.
void validate(const RecommendSettings& s);

// One user id of --recommend, as given and as a number.
struct RecommendId {
  std::string text;
  std::int64_t id = 0;
};
// --recommend's comma-separated ids; UsageError for one that is not an integer.
std::vector<RecommendId> parse_recommend_ids(const std::string& list);

// dpam's rating scale in centred units: [--rating-min, --rating-max] − centre for a file or the
// MovieLens-shaped sets, ±the rating bound for seed001 / seed004.
std::pair<double, double> centred_scale_of(const RecommendSettings& s);

// A ratings file or a MovieLens-shaped set (movielens, ml-latest-small, ml-10m): ratings on the
// 1..5 star scale, whose defaults (centre, bound, λ) are the file's.
bool star_scale(const RecommendSettings& s);
// The centring constant, the bound on |centred rating| and ξ (0: no cap), by the rules above.
double center_of(const RecommendSettings& s);
double rating_bound_of(const RecommendSettings& s);
Index effective_cap(const RecommendSettings& s);

// The neighbouring relation the run's (ε, δ) holds for, in words (the summary's and the JSON's
// "neighbours").
std::string neighbours_of(const RecommendSettings& s);

}  // namespace dpstream::tools::recommend
