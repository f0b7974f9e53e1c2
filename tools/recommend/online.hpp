// dpstream-recommend --online: the online Recommender (online_recommender.hpp) replayed on a ratings
// log in timestamp order.
//
//   users by first timestamp ─▶ serve (fold-in on her training ratings, top-N) ─▶ score her held-out
//                               ratings against what she was served ─▶ add her to the continual release
//
// At the end of the log the pending users are released as a shorter block (Recommender::flush), so the
// final public model holds every user. A BLT's horizon is --online-horizon (public), never the log's
// count of users (private).
//
// Beside the model, at the same moment: the private baseline of the same release (μ̂ + b̂_j + her own
// b_i, no factors: no extra budget) and the non-private global mean of the training ratings of the
// users who arrived before her (the scale's centre for the first). Scores read raw held-out ratings:
// evaluation, the trusted curator's view, never a release. The stream is charged once for all users.
//
// Files (--out DIR): DIR/online.csv (one line per arrival: the running RMSEs) and DIR/online.svg,
// mode 0600, each written whole or not at all (base::StagedFile); an existing one is refused before
// any noise is drawn, unless --force.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "dpstream/completion/online_recommender.hpp"
#include "recommend/data.hpp"
#include "recommend/settings.hpp"

namespace dpstream::tools::recommend {

// One arrival, after her held-out ratings were scored; the RMSEs run over every arrival so far.
struct OnlinePoint {
  Index arrival = 0;           // 1-based
  std::int64_t user_id = 0;    // as in the input
  std::int64_t timestamp = 0;  // her first
  std::uint64_t releases = 0;  // releases before she was served
  std::size_t scored = 0;      // her held-out ratings
  double rmse = 0, private_baseline_rmse = 0, global_mean_rmse = 0;
};

struct OnlineResult {
  std::vector<OnlinePoint> curve;
  double epsilon_spent = 0, mu = 0, row_norm_bound = 0, item_sigma = 0;  // item_sigma: the last release's σ/β
  std::string budget;  // what the stream was charged to, in its own words (privacy::Budget::describe)
  std::uint64_t releases = 0, scored = 0, top_hits = 0, top_shown = 0;
  completion::RecommenderCounts counts;
  Index items_left_out = 0;
  // The last release of the stream (the pending users flushed at the end of the log): the public noisy
  // prefix and its per-entry sd (empty before any release). The stream's release, what the audits read.
  Eigen::VectorXd released;
  double release_sigma = 0;
  double seconds = 0;
  std::optional<std::string> csv, svg;  // written files
};

class OnlineReplay {
 public:
  // UsageError (exit 2) before any noise: no timestamps, options the Recommender refuses, an --out
  // folder that cannot be created or written, files there that exist without --force.
  OnlineReplay(const RecommendSettings& s, const Prepared& data);
  ~OnlineReplay();
  // Replays, releases the last (shorter) block, then writes the files (if --out).
  OnlineResult run();
  const completion::RecommenderOptions& options() const noexcept { return options_; }

 private:
  const RecommendSettings& s_;
  const Prepared& data_;
  completion::RecommenderOptions options_;
};

// The summary lines (the ε spent printed once, for the whole stream).
std::string online_text(const RecommendSettings& s, const OnlineResult& r);
// The online keys of the JSON line, appended after the common ones (rmse, epsilon_spent: the stream's).
void add_online_json(JsonLine& j, const OnlineResult& r);

// The three running-RMSE curves as a self-contained SVG (online_plot.cpp).
std::string online_svg(const std::vector<OnlinePoint>& curve, const std::string& title, const std::string& subtitle);

}  // namespace dpstream::tools::recommend
