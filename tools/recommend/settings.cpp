#include "recommend/settings.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "common/memory.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/privacy/params.hpp"
#include "recommend/resources.hpp"

namespace dpstream::tools::recommend {

namespace {

void add_data_options(CLI::App& app, RecommendSettings& s) {
  app.add_option("--input", s.input, "ratings: user,item,rating[,ts] as CSV, TSV (u.data), '::' (ratings.dat) or a row log");
  app.add_option("--format", s.format, "auto | csv | tsv | colons | pb")
      ->check(CLI::IsMember({"auto", "csv", "tsv", "colons", "pb"}))->capture_default_str();
  app.add_option("--catalogue", s.catalogue,
                 "public item catalogue: item ids one per line, or the first column of a CSV with an optional header "
                 "(MovieLens's movies.csv); ratings of other items are dropped (counted). A private run on --input needs "
                 "it or --items-public");
  app.add_flag("--items-public", s.items_public,
               "declare the input's set of rated items public knowledge and use it as the catalogue (instead of "
               "--catalogue; stated in the summary and the JSON)");
  app.add_flag("--skip-malformed", s.skip_malformed, "count and skip malformed lines instead of stopping");
  app.add_option("--synthetic", s.synthetic,
                 "without --input: seed001 (rank one, U[-1,1]), seed004 (U[0,1] factors), movielens (MovieLens-100K-shaped, "
                 "1..5), ml-latest-small or ml-10m (MovieLens latest-small / 10M-shaped: half stars, power-law "
                 "popularity and activity, timestamps; their own size and rank 10)")
      ->check(CLI::IsMember({"seed001", "seed004", "movielens", "ml-latest-small", "ml-10m"}))->capture_default_str();
  app.add_option("--synthetic-users", s.synthetic_users, "generated set: users (default seed001 100000, seed004 200, movielens 943)")
      ->check(at_least(0));
  app.add_option("--synthetic-items", s.synthetic_items, "generated set: items (default seed001 100, seed004 200, movielens 1682)")
      ->check(at_least(0));
  app.add_option("--synthetic-rank", s.synthetic_rank, "generated seed004 / movielens set: rank")->capture_default_str();
  app.add_option("--per-user", s.per_user, "generated seed001 set: ratings per user")->capture_default_str();
  app.add_option("--observed", s.observed, "generated seed004 set: observed fraction")->capture_default_str();
  app.add_option("--test-fraction", s.test_fraction, "held-out share of the ratings, in (0, 1)")->capture_default_str();
  app.add_option("--top-items", s.top_items,
                 "non-private runs (--mechanism none): keep only the N most-rated items (0: all); it reads exact counts, "
                 "so a private run refuses it (give the items to keep as --catalogue)")
      ->check(at_least(0));
  app.add_option("--max-per-user", s.max_per_user, "cap xi training ratings per user, chosen at random (default: rigorous als/irls 100, fw 80, else none)")
      ->check(at_least(0));
  app.add_option("--split-seed", s.split_seed, "seed of the split, the cap and a generated set")
      ->check(at_least(0))->capture_default_str();
}

void add_model_options(CLI::App& app, RecommendSettings& s) {
  app.add_option("--method", s.method,
                 "dpam (private ALS on a private baseline, adaptive weights) | fw | als | irls (the seeds' papers)")
      ->check(CLI::IsMember({"dpam", "fw", "als", "irls"}))->capture_default_str();
  app.add_option("--mechanism", s.mechanism, "gaussian | laplace | huber | none")
      ->check(CLI::IsMember({"gaussian", "laplace", "huber", "none"}))->capture_default_str();
  app.add_option("--mode", s.mode, "rigorous (a proof; fw: tight calibration) | faithful (as printed; fw: the paper's sigma)")
      ->check(CLI::IsMember({"faithful", "rigorous"}))->capture_default_str();
  app.add_option("--epsilon", s.privacy.epsilon, "privacy: epsilon (faithful als/irls: the paper's per-draw epsilon)")->capture_default_str();
  app.add_option("--delta", s.privacy.delta, "privacy: delta, in (0, 1)")->capture_default_str();
  app.add_option("--rank", s.rank, "als/irls: factor rank")->capture_default_str();
  app.add_option("--iters", s.iterations, "fw: T rounds (default 10); als/irls: alternations (default 20)")
      ->check(at_least(0));
  app.add_option("--irls-iters", s.irls_iterations, "irls: inner R-IRLS steps K")->capture_default_str();
  app.add_option("--lambda", s.lambda, "als/irls: ridge regularisation (default: 10 for files and the movielens / ml-* sets, 0.5 as seed 004 for seed001 / seed004)");
  app.add_option("--huber-alpha", s.huber_alpha, "irls: Huber transition of the weights")->capture_default_str();
  app.add_option("--noise-variance", s.noise_variance, "faithful als/irls: the noise variance (instead of deriving it from epsilon)");
  app.add_option("--center", s.center, "public constant subtracted from every rating (default: 3 for files and the movielens / ml-* sets, else 0)");
  app.add_option("--rating-bound", s.rating_bound,
                 "bound on |centred rating|: rigorous als/irls clip to it (counted); fw's L = bound x sqrt(xi) (default: 2 for files and the movielens / ml-* sets, seed001 1, seed004 the rank)");
  app.add_option("--factor-bound", s.factor_bound, "dpam, rigorous als/irls: user-factor norm bound")->capture_default_str();
  app.add_option("--rating-min", s.rating_min, "dpam: the public scale's lowest rating (files, movielens / ml-* sets)")->capture_default_str();
  app.add_option("--rating-max", s.rating_max, "dpam: the public scale's highest rating (files, movielens / ml-* sets)")->capture_default_str();
  app.add_option("--nuclear-norm", s.nuclear_norm, "fw: nuclear-norm bound k (default: rating bound x sqrt(users x items) / 4)");
  app.add_flag("--oracle-k", s.oracle_k, "fw on a generated set: k = the truth's nuclear norm (the oracle choice of Jain, Thakkar & Thakurta 2018, Section 4)");
  app.add_option("--row-norm-bound", s.row_norm_bound, "fw: per-user ratings norm bound L (default: rating bound x sqrt(max per user))");
  app.add_option("--step", s.step, "fw: paper (1/T) | standard (2/(t+1))")->check(CLI::IsMember({"paper", "standard"}))->capture_default_str();
  app.add_option("--bias", s.bias, "fw: multiplier in [0, 1] of the eigenvalue bias (1: as printed)")->capture_default_str();
  app.add_option("--eigensolver", s.eigensolver, "fw: exact | oja")->check(CLI::IsMember({"exact", "oja"}))->capture_default_str();
  app.add_option("--seed", s.privacy.seed, "seed the noise: reproducible, NOT secure (default: the secure source)")
      ->check(at_least(0));
}

}  // namespace

void add_recommend_options(CLI::App& app, RecommendSettings& s) {
  add_data_options(app, s);
  add_model_options(app, s);
  app.add_option("--recommend", s.recommend, "print the top items for these user ids (comma-separated)");
  app.add_option("--top", s.top, "how many items --recommend prints")->check(at_least(1))->capture_default_str();
  app.add_option("--refresh-every", s.refresh_every, "streaming: users arrive one by one; retrain every B users (0: train once)")
      ->check(at_least(0));
  app.add_option("--planned-refreshes", s.planned_refreshes, "streaming: refreshes the budget is split over (default: users / B)")
      ->check(at_least(0));
  app.add_flag("--online", s.online,
               "online (dpam): replay the ratings in timestamp order; each user is served at her first timestamp from her "
               "training ratings, scored on her held-out ones, then joins one continual release (one charge for the stream)");
  app.add_option("--release-every", s.release_every, "online: users per release of the item model")
      ->check(at_least(1))->capture_default_str();
  app.add_option("--online-noise", s.online_noise,
                 "online: the continual release's noise, tree (plain, unbounded) or blt (a fixed horizon of releases: "
                 "--online-horizon)")
      ->check(CLI::IsMember({"tree", "blt"}))->capture_default_str();
  app.add_option("--online-horizon", s.online_horizon,
                 "online blt: the releases the BLT is calibrated for (public; a log with more users than "
                 "horizon x --release-every is refused)")
      ->check(at_least(0));
  app.add_option("--out", s.out, "online: folder for online.csv and online.svg (created); existing files are refused unless --force");
  app.add_flag("--force", s.force, "online: replace online.csv and online.svg in --out");
  add_memory_option(app, s.max_memory);
}

namespace {

void validate_online(const RecommendSettings& s) {
  if (!s.online) {
    if (!s.out.empty() || s.force || s.online_noise != "tree" || s.online_horizon > 0)
      throw UsageError("--out, --force, --online-noise and --online-horizon apply to --online runs");
    return;
  }
  if (s.method != "dpam") throw UsageError("--online serves the dpam model: --method must be dpam, got " + s.method);
  if (s.refresh_every > 0 || s.planned_refreshes > 0)
    throw UsageError("--online releases the item model every --release-every users: --refresh-every and "
                     "--planned-refreshes are for the batch retraining");
  if (s.release_every < 1) throw UsageError("--release-every must be >= 1, got " + std::to_string(s.release_every));
  if (s.force && s.out.empty()) throw UsageError("--force needs --out");
  if ((s.online_noise == "blt") != (s.online_horizon > 0))
    throw UsageError("--online-noise blt needs --online-horizon N (releases, public: the log's count of users is "
                     "private), and --online-horizon applies to blt only");
  if (!s.recommend.empty())
    throw UsageError("--recommend lists a batch model's top items; --online serves each user at her arrival (its top "
                     "--top hits are counted in online_top_hits)");
  if (s.generated() && !s.synthetic.starts_with("ml-"))
    throw UsageError("--online needs timestamps: --synthetic " + s.synthetic + " has none (use ml-latest-small or ml-10m, or a file)");
}

// Every choice before the mechanisms is public, local to one user or charged: the catalogue is.
void validate_catalogue(const RecommendSettings& s) {
  if (s.generated()) {
    if (!s.catalogue.empty() || s.items_public)
      throw UsageError("--catalogue and --items-public apply to --input (a generated set's catalogue is its items 0..n-1, public)");
    return;
  }
  if (!s.catalogue.empty() && s.items_public)
    throw UsageError("--catalogue and --items-public are exclusive: the catalogue is the file given or the input's items");
  if (!s.private_run()) return;  // no claim to keep
  if (s.top_items > 0)
    throw UsageError("--top-items keeps items by their exact counts in the private ratings, outside the accounting: "
                     "give the items to keep as a public --catalogue FILE instead (or run --mechanism none)");
  // Defaults computed from the file's count of users (private) are not defaults a private run can use.
  if (s.method == "fw" && !s.nuclear_norm && !s.oracle_k)
    throw UsageError("--method fw on --input: give --nuclear-norm k (public); the default k reads the file's count "
                     "of users, which is private");
  if (s.refresh_every > 0 && s.planned_refreshes == 0)
    throw UsageError("--refresh-every on --input: give --planned-refreshes R (public); the default reads the file's "
                     "count of users, which is private");
  if (s.catalogue.empty() && !s.items_public)
    throw UsageError("--input " + s.input + ": a private run needs a public item catalogue: give --catalogue FILE (item ids, "
                     "one per line or a CSV's first column, e.g. MovieLens's movies.csv), or --items-public to declare "
                     "the file's set of rated items public knowledge (an item only one user rated would otherwise "
                     "show that she is in the data)");
}

}  // namespace

void validate(const RecommendSettings& s) {
  validate(s.privacy);
  memory_limit(s.max_memory);  // a bad --max-memory refused now; the limit bounds the readers' lines too
  check_iteration_caps(s);
  if (s.rank < 1) throw UsageError("--rank must be >= 1, got " + std::to_string(s.rank));
  if (!(s.test_fraction > 0 && s.test_fraction < 1))
    throw UsageError("--test-fraction must be in (0, 1), got " + base::format_value(s.test_fraction));
  if (s.method == "dpam" && s.mechanism != "gaussian")
    throw UsageError("--method dpam adds Gaussian noise: --mechanism must be gaussian, got " + s.mechanism +
                     " (for a non-private reference: --method als --mechanism none)");
  if (s.method == "dpam" && s.refresh_every > 0)
    throw UsageError("--method dpam does not retrain in blocks (--refresh-every): it is trained once");
  if (!(std::isfinite(s.rating_min) && std::isfinite(s.rating_max) && s.rating_min < s.rating_max))
    throw UsageError("--rating-min and --rating-max must be finite with min < max, got " +
                     base::format_value(s.rating_min) + " and " + base::format_value(s.rating_max));
  if (s.method == "fw" && s.mechanism != "gaussian" && s.mechanism != "none")
    throw UsageError("--method fw adds Gaussian noise: --mechanism must be gaussian or none, got " + s.mechanism);
  if (s.top_items > 0 && s.generated()) throw UsageError("--top-items applies to a ratings file, not a generated set");
  validate_catalogue(s);
  if (s.generated() && s.synthetic.starts_with("ml-") && (s.synthetic_users || s.synthetic_items))
    throw UsageError("--synthetic-users / --synthetic-items apply to seed001, seed004 and movielens; --synthetic " +
                     s.synthetic + " has the size of its MovieLens release");
  if (s.oracle_k && (!s.generated() || center_of(s) != 0.0))
    throw UsageError("--oracle-k needs a generated set without centring (seed001 or seed004)");
  if (s.center && !std::isfinite(*s.center)) throw UsageError("--center must be finite, got " + base::format_value(*s.center));
  if (star_scale(s)) {  // the scale every method clips to, once centred: found now, not at the baseline's release
    const auto [low, high] = centred_scale_of(s);
    if (!(std::isfinite(low) && std::isfinite(high) && low < high))
      throw UsageError("--center " + base::format_value(center_of(s)) + " leaves the centred scale [--rating-min - center, "
                       "--rating-max - center] = [" + base::format_value(low) + ", " + base::format_value(high) +
                       "] without finite low < high");
  }
  if (s.planned_refreshes > 0 && s.refresh_every == 0) throw UsageError("--planned-refreshes needs --refresh-every");
  validate_online(s);
  parse_recommend_ids(s.recommend);
}

std::vector<RecommendId> parse_recommend_ids(const std::string& list) {
  std::vector<RecommendId> ids;
  if (list.empty()) return ids;
  std::stringstream in(list);
  std::string text;
  while (std::getline(in, text, ',')) {
    RecommendId id{text, 0};
    try {
      std::size_t used = 0;
      id.id = std::stoll(text, &used);
      if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::logic_error&) {
      throw UsageError("--recommend: '" + text + "' is not a user id");
    }
    ids.push_back(id);
  }
  return ids;
}

bool star_scale(const RecommendSettings& s) {
  return !s.generated() || s.synthetic == "movielens" || s.synthetic == "ml-latest-small" || s.synthetic == "ml-10m";
}

double center_of(const RecommendSettings& s) {
  if (s.center) return *s.center;
  return star_scale(s) ? 3.0 : 0.0;
}

double rating_bound_of(const RecommendSettings& s) {
  if (s.rating_bound) return *s.rating_bound;
  if (star_scale(s)) return 2.0;
  return s.synthetic == "seed001" ? 1.0 : static_cast<double>(s.synthetic_rank);
}

std::pair<double, double> centred_scale_of(const RecommendSettings& s) {
  const double center = center_of(s);
  if (star_scale(s)) return {s.rating_min - center, s.rating_max - center};
  const double bound = rating_bound_of(s);
  return {-bound, bound};
}

// ξ: what --max-per-user 0 (unset) means. Rigorous ALS/IRLS need a cap (their sensitivity is √ξ·…):
// 100 (AlsOptions' default); Frank–Wolfe bounds users by L = B_r·√ξ: seed 001's ξ = 80. Else no cap.
Index effective_cap(const RecommendSettings& s) {
  // dpam needs no cap: its weights normalise each user's contribution (dpam_als.hpp).
  if (s.max_per_user > 0 || s.mechanism == "none" || s.method == "dpam") return s.max_per_user;
  if (s.method == "fw") return 80;
  return s.mode == "rigorous" ? 100 : 0;
}

std::string neighbours_of(const RecommendSettings& s) {
  if (!s.private_run()) return "none: no noise, not private";
  if (s.online)  // the continual release's relation (online_recommender.hpp): rows by position
    return "one user's training ratings emptied in her arrival slot (her row zeroed, her slot kept: every later "
           "user keeps her position and block); adding or removing a user shifts the later users' slots and is "
           "covered only when she arrives last";
  const std::string user = "one user's ratings (all her lines in the input) added or removed";
  if (s.refresh_every > 0)
    return "one user's ratings emptied in her place in the input's user order (her slot kept), or " + user +
           " when she comes last; inserting a user earlier moves the later users between refreshes and is not covered";
  if (s.mode == "faithful" && s.method != "fw")
    return user + ", as the paper states it (faithful mode: conditional on the paper's sensitivity, NOT a guarantee)";
  return user;
}

}  // namespace dpstream::tools::recommend
