// dpstream-recommend: private matrix completion of a ratings file (or a generated set), scored on a
// held-out split next to the item-mean and global-mean baselines.
//
//   ratings (csv/tsv/::/pb) ─▶ top-N items ─▶ seeded train/test split ─▶ cap ξ per user (train)
//        or generated (seed 001 / seed 004)                                   │
//                    method (fw | als | irls) × mechanism × mode ◀──────────────┘ ─▶ test RMSE
//
// Privacy: the model is trained under the method's contract (private_frank_wolfe.hpp, private_als.hpp):
// user-level joint DP for fw and for als/irls in rigorous mode; faithful als/irls reproduce seed 004 as
// printed and prove nothing (its per-draw ε is printed next to the ε its draws really compose to).
// Every score printed here (the RMSEs, both baselines, the recommendations) reads raw ratings: it is
// evaluation, the trusted-curator view of the simulation, not a release. The top-N item choice reads
// the item counts without noise (ratings_io.hpp).
//
// With --refresh-every B the users arrive one by one (file order) and the model is retrained every B
// users on all users so far (streaming_completion.hpp), the budget split over the planned refreshes.
//
// Output: a human summary and, as the last line of stdout, one JSON object
// {method, mechanism, mode, epsilon, delta, rank, rmse, rmse_item_mean, rmse_global_mean,
//  epsilon_spent, seconds, ...}. Exit status: 0 done; 1 the run stopped (malformed input, budget);
// 2 bad command line or input that cannot be opened.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include "dpstream/completion/metrics.hpp"
#include "dpstream/completion/private_als.hpp"
#include "dpstream/completion/private_frank_wolfe.hpp"
#include "dpstream/completion/ratings_io.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/completion/streaming_completion.hpp"
#include "dpstream/completion/synthetic_ratings.hpp"
#include "dpstream/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/params.hpp"
#include "json_text.hpp"
#include "tool_main.hpp"

using namespace dpstream;
using namespace dpstream::completion;
using Eigen::Index;
using Clock = std::chrono::steady_clock;

namespace {

using tools::UsageError;

struct Settings {
  // data
  std::string input, format = "auto", synthetic = "seed004";
  bool skip_malformed = false;
  Index synthetic_users = 0, synthetic_items = 0, synthetic_rank = 5, per_user = 20;
  double observed = 0.1;
  double test_fraction = 0.1;
  Index top_items = 0, max_per_user = 0;
  std::uint64_t split_seed = 1;
  // model
  std::string method = "als", mechanism = "gaussian", mode = "rigorous";
  double epsilon = 1.0, delta = 1e-6;
  Index rank = 10;
  int iterations = 0;  // 0: the method's default (fw 10, als/irls 20)
  int irls_iterations = 20;
  std::optional<double> lambda;  // unset: 0.5 (seed 004) for generated sets, 10 for files and movielens
  double huber_alpha = 3.0;
  std::optional<double> noise_variance;  // faithful: overrides the variance derived from ε
  // Ratings are centred by a public constant before training (a data mean would be a query) and the
  // bound applies to the centred values. Unset: 3 and 2 for a file or the MovieLens-shaped set (the
  // 1..5 scale), 0 and 1 for seed001 (entries in [−1, 1]), 0 and the rank for seed004 (U, V ∈ [0, 1]).
  std::optional<double> center, rating_bound;
  double factor_bound = 1.0;
  std::optional<double> nuclear_norm, row_norm_bound;
  bool oracle_k = false;  // fw on a generated set: k = ‖U Vᵀ‖_nuc of the truth (digest A.9.1)
  std::string step = "standard", eigensolver = "exact";
  double bias = 1.0;
  std::optional<std::uint64_t> seed;
  // output
  std::string recommend;
  Index top = 10;
  // streaming
  Index refresh_every = 0;
  long planned_refreshes = 0;
};

// The prepared data: a train matrix (ξ-capped), the test ratings, and what the preparation did.
struct Prepared {
  RatingsTable table;                 // external ids (a file) or dense ids (generated)
  std::vector<Rating> train, test;
  std::uint64_t dropped_by_cap = 0;
  Index users_capped = 0;
  std::optional<SyntheticRatings> truth;  // generated sets only
  std::string description;
};

double center_of(const Settings& s) {
  if (s.center) return *s.center;
  return !s.input.empty() || s.synthetic == "movielens" ? 3.0 : 0.0;
}

double rating_bound_of(const Settings& s) {
  if (s.rating_bound) return *s.rating_bound;
  if (!s.input.empty() || s.synthetic == "movielens") return 2.0;
  return s.synthetic == "seed001" ? 1.0 : static_cast<double>(s.synthetic_rank);
}

// ξ: what --max-per-user 0 (unset) means. Rigorous ALS/IRLS need a cap (their sensitivity is √ξ·…):
// 100 (AlsOptions' default); Frank–Wolfe bounds users by L = B_r·√ξ: seed 001's ξ = 80. Else no cap.
Index effective_cap(const Settings& s) {
  if (s.max_per_user > 0 || s.mechanism == "none") return s.max_per_user;
  if (s.method == "fw") return 80;
  return s.mode == "rigorous" ? 100 : 0;
}

Prepared prepare(const Settings& s) {
  Prepared p;
  if (!s.input.empty()) {
    if (!std::ifstream(s.input)) throw UsageError("cannot open --input " + s.input + ": " + std::strerror(errno));
    ReadRatingsOptions o;
    o.skip_malformed = s.skip_malformed;
    try {
      o.format = parse_ratings_format(s.format);
    } catch (const InvalidParameter& e) {
      throw UsageError(e.what());
    }
    p.table = read_ratings(s.input, o);  // CorruptInput "PATH:LINE: what" stops the run (exit 1)
    p.description = s.input;
  } else {
    const bool rank_one = s.synthetic == "seed001", movielens = s.synthetic == "movielens";
    const Index users = s.synthetic_users ? s.synthetic_users : (rank_one ? 100000 : movielens ? 943 : 200);
    const Index items = s.synthetic_items ? s.synthetic_items : (rank_one ? 100 : movielens ? 1682 : 200);
    try {
      p.truth = rank_one ? rank_one_ratings(users, items, s.per_user, s.split_seed)
                : movielens ? movielens_like_ratings(users, items, std::llround(static_cast<double>(users) * (100000.0 / 943.0)), s.synthetic_rank, s.split_seed)
                            : uniform_factor_ratings(users, items, s.synthetic_rank, s.observed, s.split_seed);
    } catch (const InvalidParameter& e) {
      throw UsageError(e.what());
    }
    p.table.ratings = p.truth->ratings;
    for (Index i = 0; i < users; ++i) p.table.user_ids.push_back(i);
    for (Index j = 0; j < items; ++j) p.table.item_ids.push_back(j);
    std::ostringstream d;
    if (rank_one)
      d << "generated seed-001 set: rank one, " << users << " users x " << items << " items, " << s.per_user
        << " ratings each";
    else if (movielens)
      d << "generated MovieLens-shaped set: " << users << " users x " << items << " items, " << p.truth->ratings.size()
        << " ratings 1..5, rank " << s.synthetic_rank;
    else
      d << "generated seed-004 set: U, V ~ U[0,1], rank " << s.synthetic_rank << ", " << users << " x " << items
        << ", " << s.observed * 100 << "% observed";
    p.description = d.str();
  }
  const double center = center_of(s);
  if (center != 0.0)
    for (Rating& r : p.table.ratings) r.value -= center;
  if (s.top_items > 0) {
    if (p.truth) throw UsageError("--top-items applies to a ratings file, not a generated set");
    p.table = keep_top_items(p.table, s.top_items);
  }
  RatingsSplit split = split_ratings(p.table.ratings, s.test_fraction, s.split_seed);
  p.test = std::move(split.test);
  if (const Index cap = effective_cap(s); cap > 0) {
    CappedRatings capped = cap_ratings_per_user(split.train, cap, s.split_seed);
    p.train = std::move(capped.kept);
    p.dropped_by_cap = capped.dropped;
    p.users_capped = capped.users_capped;
  } else {
    p.train = std::move(split.train);
  }
  return p;
}

// A trained model as the tool uses it.
struct Model {
  RatingPredictor predict;
  Index rank = 0;
  double epsilon_spent = 0.0;
  std::string notes;  // privacy report lines
};

std::string format_line(const char* format, double a, double b = 0.0, double c = 0.0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

// ‖U Vᵀ‖_nuc: the singular values of U Vᵀ are those of R_U R_Vᵀ (U = Q_U R_U, V = Q_V R_V; r × r).
double nuclear_norm(const SyntheticRatings& truth) {
  const Eigen::MatrixXd ru = linalg::HouseholderQr(truth.user_factors).r();
  const Eigen::MatrixXd rv = linalg::HouseholderQr(truth.item_factors).r();
  return linalg::singular_values(ru * rv.transpose()).sum();
}

Model train_frank_wolfe(const Settings& s, const RatingsMatrix& train, privacy::PrivacyAccountant& accountant,
                        const std::optional<SyntheticRatings>& truth) {
  FrankWolfeOptions o;
  o.iterations = s.iterations > 0 ? s.iterations : 10;
  // k must be public: a constant matrix of typical rating c has nuclear norm c·√(mn); c = B_r/4 (the
  // centred ratings sit well inside the bound; on the MovieLens-shaped set B_r/4 beat B_r/2 and B_r/8 non-privately).
  if (s.oracle_k && (!truth || center_of(s) != 0.0))
    throw UsageError("--oracle-k needs a generated set without centring (seed001 or seed004)");
  o.nuclear_norm_bound = s.oracle_k ? nuclear_norm(*truth) : s.nuclear_norm ? *s.nuclear_norm
                                        : rating_bound_of(s) / 4 * std::sqrt(static_cast<double>(train.users()) *
                                                                         static_cast<double>(train.items()));
  o.row_norm_bound = s.row_norm_bound ? *s.row_norm_bound
                                      : rating_bound_of(s) * std::sqrt(static_cast<double>(effective_cap(s) > 0 ? effective_cap(s) : 80));
  o.target = privacy::EpsDelta(s.epsilon, s.delta);
  o.calibration = s.mode == "faithful" ? privacy::Calibration::paper : privacy::Calibration::tight;
  o.step = s.step == "paper" ? FrankWolfeStep::paper : FrankWolfeStep::standard;
  o.bias_multiplier = s.bias;
  o.eigensolver = s.eigensolver == "oja" ? FrankWolfeEigensolver::oja : FrankWolfeEigensolver::exact;
  o.nonprivate = s.mechanism == "none";
  o.seed = s.seed;
  FrankWolfeResult result;
  try {
    PrivateFrankWolfe fw(o);
    result = fw.train(train, o.nonprivate ? nullptr : &accountant);
  } catch (const InvalidParameter& e) {
    throw UsageError(e.what());  // e.g. the paper's σ refuses ε > 2 ln(1/δ)
  }
  Model m;
  m.rank = static_cast<Index>(result.broadcasts.size());
  m.epsilon_spent = o.nonprivate ? INFINITY : accountant.spent().epsilon;
  m.notes = format_line("frank-wolfe: T = %.0f, k = %.4g, L = %.4g", o.iterations, o.nuclear_norm_bound, o.row_norm_bound) +
            format_line(", sigma = %.4g over %.0f releases, eigenvalue bias %.4g", result.sigma,
                        static_cast<double>(result.releases_calibrated), result.bias) +
            format_line("; %.0f users clipped to L\n", static_cast<double>(result.users_clipped));
  auto shared = std::make_shared<FrankWolfeResult>(std::move(result));
  m.predict = [shared](Index user, Index item) { return shared->predict(user, item); };
  return m;
}

Model train_als(const Settings& s, const RatingsMatrix& train, privacy::PrivacyAccountant& accountant) {
  AlsOptions o;
  o.rank = s.rank;
  o.regularization = s.lambda ? *s.lambda : (!s.input.empty() || s.synthetic == "movielens" ? 10.0 : 0.5);
  o.iterations = s.iterations > 0 ? s.iterations : 20;
  o.irls_iterations = s.method == "irls" ? s.irls_iterations : 0;
  o.huber_alpha = s.huber_alpha;
  o.seed = s.seed;
  try {
    o.mechanism = parse_als_mechanism(s.mechanism);
    o.mode = o.mechanism == AlsMechanism::none ? AlsMode::faithful : parse_als_mode(s.mode);
    if (o.mode == AlsMode::faithful && o.mechanism != AlsMechanism::none) {
      // --epsilon is the paper's per-draw ε (Table 1, Δf = 5): the noise it maps to, unless given.
      o.report_delta = s.delta;
      if (o.mechanism == AlsMechanism::huber && !s.noise_variance)
        o.huber_noise_alpha = s.epsilon / o.paper_sensitivity;
      else
        o.noise_variance = s.noise_variance ? *s.noise_variance
                                            : faithful_noise_variance_for_epsilon(o.mechanism, s.epsilon,
                                                                                  o.paper_sensitivity, s.delta);
    } else if (o.mode == AlsMode::rigorous) {
      o.target = privacy::EpsDelta(s.epsilon, s.delta);
      o.rating_bound = rating_bound_of(s);
      o.max_per_user = effective_cap(s);
      o.user_factor_bound = s.factor_bound;
    }
  } catch (const InvalidParameter& e) {
    throw UsageError(e.what());
  }
  AlsResult result;
  try {
    PrivateAls als(o);
    result = als.train(train, o.mode == AlsMode::rigorous ? &accountant : nullptr);
  } catch (const InvalidParameter& e) {
    throw UsageError(e.what());
  }
  const AlsPrivacyReport& r = result.privacy;
  Model m;
  m.rank = o.rank;
  m.epsilon_spent = o.mechanism == AlsMechanism::none ? INFINITY
                    : o.mode == AlsMode::rigorous      ? accountant.spent().epsilon
                                                       : r.epsilon_spent;
  if (o.mechanism != AlsMechanism::none) {
    m.notes = format_line("noise: %.0f releases, %.0f draws, variance %.4g per coordinate", static_cast<double>(r.releases),
                          static_cast<double>(r.draws), r.noise_variance) +
              format_line("; per-draw epsilon %.4g (as printed %.4g)", r.per_draw_epsilon, r.per_draw_epsilon_as_printed) +
              format_line("; composed: basic %.4g, zCDP %.4g", r.composed_epsilon_basic, r.composed_epsilon_zcdp) +
              (r.proven ? std::string(" (proven)\n") : std::string(" (faithful: conditional on the paper's sensitivity, NOT a guarantee)\n"));
    if (o.mode == AlsMode::rigorous)
      m.notes += format_line("clipped: %.0f ratings, %.0f user-factor solves; %.0f noisy Grams floored\n",
                             static_cast<double>(result.ratings_clipped), static_cast<double>(result.user_factors_clipped),
                             static_cast<double>(result.gram_projections));
  }
  auto shared = std::make_shared<AlsResult>(std::move(result));
  m.predict = [shared](Index user, Index item) { return shared->predict(user, item); };
  return m;
}

Model train_model(const Settings& s, const RatingsMatrix& train, privacy::PrivacyAccountant& accountant,
                  const std::optional<SyntheticRatings>& truth) {
  return s.method == "fw" ? train_frank_wolfe(s, train, accountant, truth) : train_als(s, train, accountant);
}

// JSON has no infinity: a non-private run's ε spent is null.
std::string json_number(double value) { return std::isfinite(value) ? privacy::format_value(value) : "null"; }

int run(const Settings& s) {
  const auto start = Clock::now();
  if (!std::isfinite(s.epsilon) || s.epsilon <= 0)
    throw UsageError("--epsilon must be finite and > 0, got " + privacy::format_value(s.epsilon));
  if (!(s.delta > 0 && s.delta < 1)) throw UsageError("--delta must be in (0, 1), got " + privacy::format_value(s.delta));
  if (s.rank < 1) throw UsageError("--rank must be >= 1, got " + std::to_string(s.rank));
  if (!(s.test_fraction > 0 && s.test_fraction < 1))
    throw UsageError("--test-fraction must be in (0, 1), got " + privacy::format_value(s.test_fraction));
  if (s.method == "fw" && s.mechanism != "gaussian" && s.mechanism != "none")
    throw UsageError("--method fw adds Gaussian noise: --mechanism must be gaussian or none, got " + s.mechanism);

  const Prepared data = prepare(s);
  const Index users = data.table.users(), items = data.table.items();
  const RatingsMatrix train(users, items, data.train);
  std::printf("input: %s; ratings centred at %s, |centred rating| bound %s\n", data.description.c_str(),
              privacy::format_value(center_of(s)).c_str(), privacy::format_value(rating_bound_of(s)).c_str());
  std::printf("ratings: %zu read (%llu malformed lines skipped), %lld users x %lld items; train %zu, test %zu",
              data.table.ratings.size(), (unsigned long long)data.table.skipped, (long long)users, (long long)items,
              data.train.size(), data.test.size());
  if (effective_cap(s) > 0)
    std::printf("; cap %lld per user dropped %llu training ratings of %lld users", (long long)effective_cap(s),
                (unsigned long long)data.dropped_by_cap, (long long)data.users_capped);
  std::printf("\n");
  if (data.test.empty()) throw UsageError("the test split is empty: raise --test-fraction");

  privacy::PrivacyAccountant accountant(privacy::EpsDelta(s.epsilon, s.delta));
  const auto m0 = Clock::now();
  Model model;
  if (s.refresh_every > 0) {
    // Users arrive in dense-index order (first appearance in the file); every B a refresh.
    StreamingCompletionOptions o;
    o.items = items;
    o.refresh_every = s.refresh_every;
    o.planned_refreshes = s.planned_refreshes > 0 ? s.planned_refreshes : (users + s.refresh_every - 1) / s.refresh_every;
    o.budget = privacy::EpsDelta(s.epsilon, s.delta);
    Settings per_refresh = s;
    StreamingCompletion stream(o, [&](const RatingsMatrix& pool, const RefreshBudget& budget,
                                      privacy::PrivacyAccountant& stream_accountant) {
      // Each refresh calibrates to its share: Gaussian methods to the zCDP share, pure ones to ε/R.
      const bool pure = s.mechanism == "laplace" || s.mechanism == "huber";
      per_refresh.epsilon = pure ? budget.pure_share_epsilon : budget.gaussian_share.epsilon();
      per_refresh.delta = pure ? s.delta : budget.gaussian_share.delta();
      Model refreshed = train_model(per_refresh, pool, stream_accountant, data.truth);
      std::printf("refresh %ld: %lld users, test RMSE of the users so far %.4f\n", budget.refresh,
                  (long long)pool.users(), [&] {
                    std::vector<Rating> seen;
                    for (const Rating& r : data.test)
                      if (r.user < pool.users()) seen.push_back(r);
                    return seen.empty() ? std::nan("") : rmse(refreshed.predict, seen);
                  }());
      model.rank = refreshed.rank;
      model.notes = refreshed.notes;
      return refreshed.predict;
    });
    const auto& by_user = train.by_user();
    for (Index i = 0; i < users; ++i) {
      std::vector<std::pair<Index, double>> row;
      for (RatingsMatrix::ByUser::InnerIterator it(by_user, i); it; ++it) row.emplace_back(it.col(), it.value());
      stream.add_user(row);
    }
    if (stream.pending_users() > 0) stream.refresh();
    model.predict = stream.model();
    model.epsilon_spent = stream.accountant().spent().epsilon;
  } else {
    model = train_model(s, train, accountant, data.truth);
  }
  const double train_seconds = std::chrono::duration<double>(Clock::now() - m0).count();

  const MeanBaselines baselines = fit_mean_baselines(train);
  const double test_rmse = rmse(model.predict, data.test);
  const double item_rmse = rmse([&](Index u, Index i) { return baselines.predict_item(u, i); }, data.test);
  const double global_rmse = rmse([&](Index u, Index i) { return baselines.predict_global(u, i); }, data.test);
  std::optional<double> all_entries_rmse;
  if (data.truth && static_cast<double>(users) * static_cast<double>(items) <= 1e7)
    all_entries_rmse = full_rmse(model.predict, [&](Index u, Index i) { return data.truth->truth(u, i) - center_of(s); },
                                 users, items);

  std::printf("method: %s, mechanism %s, mode %s, (ε, δ) = (%s, %s), rank %lld%s\n", s.method.c_str(),
              s.mechanism.c_str(), s.mode.c_str(), privacy::format_value(s.epsilon).c_str(),
              privacy::format_value(s.delta).c_str(), (long long)model.rank,
              s.seed ? ", seeded noise (reproducible, NOT secure)" : ", secure noise");
  std::printf("%s", model.notes.c_str());
  std::printf("test RMSE %.4f (item mean %.4f, global mean %.4f)", test_rmse, item_rmse, global_rmse);
  if (all_entries_rmse) std::printf("; RMSE over all entries of the truth %.4f", *all_entries_rmse);
  std::printf("\nprivacy spent: ε = %.4g at δ = %s; training %.2f s\n", model.epsilon_spent,
              privacy::format_value(s.delta).c_str(), train_seconds);

  if (!s.recommend.empty()) {
    std::stringstream ids(s.recommend);
    std::string id_text;
    while (std::getline(ids, id_text, ',')) {
      std::int64_t id = 0;
      try {
        std::size_t used = 0;
        id = std::stoll(id_text, &used);
        if (used != id_text.size()) throw std::invalid_argument(id_text);
      } catch (const std::logic_error&) {
        throw UsageError("--recommend: '" + id_text + "' is not a user id");
      }
      const std::optional<Index> user = data.truth ? (id >= 0 && id < users ? std::optional<Index>(id) : std::nullopt)
                                                   : data.table.user_index(id);
      if (!user) throw UsageError("--recommend: user " + id_text + " is not in the input");
      std::vector<bool> rated(static_cast<std::size_t>(items), false);
      for (RatingsMatrix::ByUser::InnerIterator it(train.by_user(), *user); it; ++it)
        rated[static_cast<std::size_t>(it.col())] = true;
      std::vector<std::pair<double, Index>> scored;
      for (Index j = 0; j < items; ++j)
        if (!rated[static_cast<std::size_t>(j)]) scored.emplace_back(model.predict(*user, j), j);
      const auto shown = std::min<std::size_t>(static_cast<std::size_t>(s.top), scored.size());
      std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(shown), scored.end(),
                        [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
      std::printf("top %zu for user %s:", shown, id_text.c_str());
      for (std::size_t k = 0; k < shown; ++k)
        std::printf(" %lld (%.2f)", (long long)data.table.item_ids[static_cast<std::size_t>(scored[k].second)],
                    scored[k].first + center_of(s));
      std::printf("\n");
    }
  }

  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::string j = "{\"method\":" + tools::json_string(s.method);
  j += ",\"mechanism\":" + tools::json_string(s.mechanism);
  j += ",\"mode\":" + tools::json_string(s.mode);
  j += ",\"epsilon\":" + privacy::format_value(s.epsilon);
  j += ",\"delta\":" + privacy::format_value(s.delta);
  j += ",\"rank\":" + std::to_string(model.rank);
  j += ",\"rmse\":" + privacy::format_value(test_rmse);
  j += ",\"rmse_item_mean\":" + privacy::format_value(item_rmse);
  j += ",\"rmse_global_mean\":" + privacy::format_value(global_rmse);
  j += ",\"epsilon_spent\":" + json_number(model.epsilon_spent);
  j += ",\"seconds\":" + privacy::format_value(std::round(seconds * 1000) / 1000);
  if (all_entries_rmse) j += ",\"rmse_all_entries\":" + privacy::format_value(*all_entries_rmse);
  j += ",\"train_seconds\":" + privacy::format_value(std::round(train_seconds * 1000) / 1000);
  j += ",\"users\":" + std::to_string(users);
  j += ",\"items\":" + std::to_string(items);
  j += ",\"train\":" + std::to_string(data.train.size());
  j += ",\"test\":" + std::to_string(data.test.size());
  j += ",\"input\":" + tools::json_string(data.description);
  j += "}";
  std::printf("%s\n", j.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "dpstream-recommend: private matrix completion (Frank-Wolfe with joint DP; ALS / IRLS with Gaussian,\n"
      "Laplace or Huber noise), scored on a held-out split next to the item-mean and global-mean baselines.");
  Settings s;
  app.add_option("--input", s.input, "ratings: user,item,rating[,ts] as CSV, TSV (u.data), '::' (ratings.dat) or a row log");
  app.add_option("--format", s.format, "auto | csv | tsv | colons | pb")
      ->check(CLI::IsMember({"auto", "csv", "tsv", "colons", "pb"}))->capture_default_str();
  app.add_flag("--skip-malformed", s.skip_malformed, "count and skip malformed lines instead of stopping");
  app.add_option("--synthetic", s.synthetic,
                 "without --input: seed001 (rank one, U[-1,1]), seed004 (U[0,1] factors) or movielens (MovieLens-100K-shaped)")
      ->check(CLI::IsMember({"seed001", "seed004", "movielens"}))->capture_default_str();
  app.add_option("--synthetic-users", s.synthetic_users, "generated set: users (default seed001 100000, seed004 200, movielens 943)");
  app.add_option("--synthetic-items", s.synthetic_items, "generated set: items (default seed001 100, seed004 200, movielens 1682)");
  app.add_option("--synthetic-rank", s.synthetic_rank, "generated seed004 / movielens set: rank")->capture_default_str();
  app.add_option("--per-user", s.per_user, "generated seed001 set: ratings per user")->capture_default_str();
  app.add_option("--observed", s.observed, "generated seed004 set: observed fraction")->capture_default_str();
  app.add_option("--test-fraction", s.test_fraction, "held-out share of the ratings, in (0, 1)")->capture_default_str();
  app.add_option("--top-items", s.top_items, "keep only the N most-rated items (0: all; reads counts without noise)");
  app.add_option("--max-per-user", s.max_per_user, "cap xi training ratings per user, chosen at random (default: rigorous als/irls 100, fw 80, else none)");
  app.add_option("--split-seed", s.split_seed, "seed of the split, the cap and a generated set")->capture_default_str();
  app.add_option("--method", s.method, "fw | als | irls")->check(CLI::IsMember({"fw", "als", "irls"}))->capture_default_str();
  app.add_option("--mechanism", s.mechanism, "gaussian | laplace | huber | none")
      ->check(CLI::IsMember({"gaussian", "laplace", "huber", "none"}))->capture_default_str();
  app.add_option("--mode", s.mode, "rigorous (a proof; fw: tight calibration) | faithful (as printed; fw: the paper's sigma)")
      ->check(CLI::IsMember({"faithful", "rigorous"}))->capture_default_str();
  app.add_option("--epsilon", s.epsilon, "privacy: epsilon (faithful als/irls: the paper's per-draw epsilon)")->capture_default_str();
  app.add_option("--delta", s.delta, "privacy: delta, in (0, 1)")->capture_default_str();
  app.add_option("--rank", s.rank, "als/irls: factor rank")->capture_default_str();
  app.add_option("--iters", s.iterations, "fw: T rounds (default 10); als/irls: alternations (default 20)");
  app.add_option("--irls-iters", s.irls_iterations, "irls: inner R-IRLS steps K")->capture_default_str();
  app.add_option("--lambda", s.lambda, "als/irls: ridge regularisation (default: 10 for files and movielens, 0.5 as seed 004 for generated sets)");
  app.add_option("--huber-alpha", s.huber_alpha, "irls: Huber transition of the weights")->capture_default_str();
  app.add_option("--noise-variance", s.noise_variance, "faithful als/irls: the noise variance (instead of deriving it from epsilon)");
  app.add_option("--center", s.center, "public constant subtracted from every rating (default: 3 for files and movielens, else 0)");
  app.add_option("--rating-bound", s.rating_bound,
                 "bound on |centred rating|: rigorous als/irls clip to it (counted); fw's L = bound x sqrt(xi) (default: 2 for files and movielens, seed001 1, seed004 the rank)");
  app.add_option("--factor-bound", s.factor_bound, "rigorous als/irls: user-factor norm bound")->capture_default_str();
  app.add_option("--nuclear-norm", s.nuclear_norm, "fw: nuclear-norm bound k (default: rating bound x sqrt(users x items) / 4)");
  app.add_flag("--oracle-k", s.oracle_k, "fw on a generated set: k = the truth's nuclear norm (the digest's oracle choice)");
  app.add_option("--row-norm-bound", s.row_norm_bound, "fw: per-user ratings norm bound L (default: rating bound x sqrt(max per user))");
  app.add_option("--step", s.step, "fw: paper (1/T) | standard (2/(t+1))")->check(CLI::IsMember({"paper", "standard"}))->capture_default_str();
  app.add_option("--bias", s.bias, "fw: multiplier in [0, 1] of the eigenvalue bias (1: as printed)")->capture_default_str();
  app.add_option("--eigensolver", s.eigensolver, "fw: exact | oja")->check(CLI::IsMember({"exact", "oja"}))->capture_default_str();
  app.add_option("--seed", s.seed, "seed the noise: reproducible, NOT secure (default: the secure source)");
  app.add_option("--recommend", s.recommend, "print the top items for these user ids (comma-separated)");
  app.add_option("--top", s.top, "how many items --recommend prints")->capture_default_str();
  app.add_option("--refresh-every", s.refresh_every, "streaming: users arrive one by one; retrain every B users (0: train once)");
  app.add_option("--planned-refreshes", s.planned_refreshes, "streaming: refreshes the budget is split over (default: users / B)");
  if (const auto status = tools::parse_command_line(app, argc, argv, "dpstream-recommend")) return *status;
  return tools::run_reporting_errors("dpstream-recommend", [&] { return run(s); });
}
