#include "recommend/online.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <utility>

#include "common/cli.hpp"
#include "common/output_paths.hpp"
#include "common/progress.hpp"
#include "common/text.hpp"
#include "dpstream/base/atomic_file.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/budget.hpp"
#include "recommend/train.hpp"

namespace dpstream::tools::recommend {

using namespace completion;
using Row = std::vector<std::pair<Index, double>>;

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

std::string out_file(const RecommendSettings& s, const char* name) { return (std::filesystem::path(s.out) / name).string(); }

void check_out_folder(const RecommendSettings& s) {
  try {
    std::filesystem::create_directories(s.out);
  } catch (const std::exception& e) {
    throw UsageError("--out " + s.out + ": cannot create the folder: " + e.what());
  }
  if (::access(s.out.c_str(), W_OK | X_OK) != 0)
    throw UsageError("--out " + s.out + ": cannot write into the folder: " + std::strerror(errno));
  refuse_shared_paths({{"--input", s.input},
                       {"--catalogue", s.catalogue},
                       {"--out's online.csv", out_file(s, "online.csv")},
                       {"--out's online.svg", out_file(s, "online.svg")}});
  for (const char* name : {"online.csv", "online.svg"})  // --force replaces a regular file only
    refuse_non_regular_output(std::string("--out's ") + name, out_file(s, name));
  if (s.force) return;
  for (const char* name : {"online.csv", "online.svg"})
    if (std::filesystem::exists(std::filesystem::symlink_status(out_file(s, name))))
      throw UsageError(out_file(s, name) + " exists: give --force to replace it");
}

std::string csv_text(const std::vector<OnlinePoint>& curve) {
  std::string t = "arrival,user,timestamp,releases,test_ratings,rmse,rmse_private_baseline,rmse_global_mean\n";
  for (const OnlinePoint& p : curve)
    t += format("%lld,%lld,%lld,%llu,%zu,%.6f,%.6f,%.6f\n", (long long)p.arrival, (long long)p.user_id,
                (long long)p.timestamp, (unsigned long long)p.releases, p.scored, p.rmse, p.private_baseline_rmse,
                p.global_mean_rmse);
  return t;
}

// Users in arrival order (ties: the dense index), those without any rating left out.
std::vector<Index> arrival_order(const Prepared& data) {
  std::vector<Index> order;
  for (Index u = 0; u < data.users(); ++u)
    if (data.arrival[static_cast<std::size_t>(u)] != kNever) order.push_back(u);
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) {
    return data.arrival[static_cast<std::size_t>(a)] < data.arrival[static_cast<std::size_t>(b)];
  });
  return order;
}

std::vector<Row> rows_of(const std::vector<Rating>& ratings, Index users) {
  std::vector<Row> rows(static_cast<std::size_t>(users));
  for (const Rating& r : ratings) rows[static_cast<std::size_t>(r.user)].emplace_back(r.item, r.value);
  return rows;
}

// The running squared-error sums of the three predictors.
struct Running {
  double model = 0, baseline = 0, global = 0;
  std::uint64_t count = 0;
  double rmse(double sum) const { return count ? std::sqrt(sum / static_cast<double>(count)) : 0.0; }
};

// The release's baseline (no factors), rebuilt when a release arrives.
class BaselineOfRelease {
 public:
  const ItemModel& of(const Recommender& rec) {
    if (!model_ || releases_ != rec.releases()) {
      model_ = rec.model();
      model_->item_factors.resize(rec.model().items(), 0);
      releases_ = rec.releases();
    }
    return *model_;
  }

 private:
  std::optional<ItemModel> model_;
  std::uint64_t releases_ = 0;
};

}  // namespace

OnlineReplay::OnlineReplay(const RecommendSettings& s, const Prepared& data) : s_(s), data_(data) {
  if (data_.arrival.empty())
    throw UsageError("--online replays the ratings in time order: " + data_.description +
                     " has no timestamps (a 4th field on every line)");
  options_.items = data_.items();
  options_.als = dpam_options(s_);
  options_.release_every = static_cast<std::uint64_t>(s_.release_every);
  if (s_.online_noise == "blt") {  // the horizon is public (a flag): the log's count of users is not
    options_.strategy = stream::NoiseStrategy::blt;
    options_.horizon = static_cast<std::uint64_t>(s_.online_horizon);
    const auto users = static_cast<std::uint64_t>(arrival_order(data_).size());
    if (users > options_.horizon * options_.release_every)
      throw UsageError("--online-horizon " + std::to_string(s_.online_horizon) + " releases of --release-every " +
                       std::to_string(s_.release_every) + " users cannot take the log's users: raise --online-horizon");
  }
  try {
    // The options' checks and the stream's charge (its σ is calibrated there), on a throwaway
    // accountant as run() charges its own; draws only the data-independent init.
    privacy::PrivacyAccountant probe(s_.privacy.target());
    Recommender check(options_, probe);
  } catch (const InvalidParameter& e) {
    throw calibration_refused(s_.privacy, "--online, --release-every " + std::to_string(s_.release_every) +
                                              ", --online-noise " + s_.online_noise + ", --factor-bound",
                              e.what());
  }
  if (!s_.out.empty()) check_out_folder(s_);
}

OnlineReplay::~OnlineReplay() = default;

OnlineResult OnlineReplay::run() {
  const auto start = std::chrono::steady_clock::now();
  privacy::PrivacyAccountant accountant(s_.privacy.target());
  Recommender rec(options_, accountant);  // the one charge, before any user
  OnlineResult out;
  out.epsilon_spent = accountant.spent().epsilon;
  out.budget = privacy::Budget(accountant).describe();
  out.mu = rec.mu();
  out.row_norm_bound = rec.row_norm_bound();
  const std::vector<Row> train = rows_of(data_.train, data_.users()), test = rows_of(data_.test, data_.users());
  BaselineOfRelease baseline;
  Running run;
  double train_sum = 0, train_count = 0;
  const double prior = options_.als.baseline.scale.center();
  for (const Index u : arrival_order(data_)) {
    const Row& mine = train[static_cast<std::size_t>(u)];
    const Row& held = test[static_cast<std::size_t>(u)];
    const UserModel served = rec.serve(mine);
    const ItemModel& base = baseline.of(rec);
    const UserModel base_user = fold_in_user(base, options_.als.fold_in, mine);
    const double global = train_count > 0 ? train_sum / train_count : prior;
    const auto top = rec.top_n(served, mine, s_.top);
    out.top_shown += top.size();
    for (const auto& [item, value] : held) {
      const double e = rec.predict(served, item) - value, b = base.predict(base_user, item) - value, g = global - value;
      run.model += e * e, run.baseline += b * b, run.global += g * g, ++run.count;
      out.top_hits += static_cast<std::uint64_t>(std::any_of(top.begin(), top.end(), [&](const Recommendation& r) { return r.item == item; }));
    }
    out.curve.push_back({static_cast<Index>(out.curve.size() + 1), data_.table.user_ids[static_cast<std::size_t>(u)],
                         data_.arrival[static_cast<std::size_t>(u)], rec.releases(), held.size(), run.rmse(run.model),
                         run.rmse(run.baseline), run.rmse(run.global)});
    rec.add(mine);
    for (const auto& [item, value] : mine) train_sum += value, ++train_count;
  }
  rec.flush();  // the last, shorter block: the final model holds every user
  out.releases = rec.releases();
  if (rec.releases() > 0) {
    out.released = rec.released();
    out.release_sigma = rec.release_sigma();
  }
  out.scored = run.count;
  out.counts = rec.counts();
  out.items_left_out = rec.items_left_out();
  if (rec.releases() > 0) out.item_sigma = rec.release_sigma() / rec.baseline_scale();
  out.seconds = seconds_since(start);
  if (!s_.out.empty()) {
    out.csv = out_file(s_, "online.csv");
    out.svg = out_file(s_, "online.svg");
    const std::string subtitle = format("%s; epsilon %s, delta %s, a release every %lld users, rank %lld",
                                        data_.description.c_str(), base::format_value(s_.privacy.epsilon).c_str(),
                                        base::format_value(s_.privacy.delta).c_str(), (long long)s_.release_every,
                                        (long long)s_.rank);
    // One set: both written and fsynced before either is put in place (a full disk leaves the old pair).
    base::write_files_atomically(
        {{*out.csv, csv_text(out.curve)},
         {*out.svg, online_svg(out.curve, "Online private recommender: running test RMSE", subtitle)}},
        s_.force ? base::ExistingFile::replace : base::ExistingFile::refuse);  // mode 0600
  }
  return out;
}

std::string online_text(const RecommendSettings& s, const OnlineResult& r) {
  const OnlinePoint last = r.curve.empty() ? OnlinePoint{} : r.curve.back();
  std::string t = format("online: %zu users in timestamp order, a release every %lld users (%llu releases, %s; the "
                         "counts of users and releases are exact, not private); GDP mu %.4g, row bound L %.4g, last "
                         "release's item-count sigma %.4g\n",
                         r.curve.size(), (long long)s.release_every, (unsigned long long)r.releases,
                         s.online_noise == "blt" ? "BLT" : "plain tree", r.mu, r.row_norm_bound, r.item_sigma);
  t += format("online privacy spent, once for the whole stream: epsilon = %.4g at delta = %s\n",
              r.epsilon_spent, base::format_value(s.privacy.delta).c_str());
  t += format("online running RMSE (not private: evaluation on the raw ratings) over %llu held-out ratings, each "
              "scored when its user was served: %.4f (private "
              "baseline %.4f, global mean of earlier users %.4f); top-%lld hits %llu of %llu shown\n",
              (unsigned long long)r.scored, last.rmse, last.private_baseline_rmse, last.global_mean_rmse, (long long)s.top,
              (unsigned long long)r.top_hits, (unsigned long long)r.top_shown);
  t += format("online clipped (exact counts, not private): %llu ratings, %llu residuals, %llu user factors, %llu rows; %lld items served by the "
              "baseline at the last release; %.2f s\n",
              (unsigned long long)r.counts.ratings_clipped, (unsigned long long)r.counts.residuals_clipped,
              (unsigned long long)r.counts.user_factors_clipped, (unsigned long long)r.counts.rows_clipped,
              (long long)r.items_left_out, r.seconds);
  if (r.csv) t += "wrote " + *r.csv + " and " + *r.svg + "\n";
  return t;
}

void add_online_json(JsonLine& j, const OnlineResult& r) {
  const OnlinePoint last = r.curve.empty() ? OnlinePoint{} : r.curve.back();
  j.add("online", true)
      .add("online_rmse", last.rmse)
      .add("online_rmse_private_baseline", last.private_baseline_rmse)
      .add("online_rmse_global_mean", last.global_mean_rmse)
      .add("online_epsilon_spent", r.epsilon_spent)
      .add("online_users", static_cast<std::uint64_t>(r.curve.size()))
      .add("online_scored", r.scored)
      .add("online_releases", r.releases)
      .add("online_top_hits", r.top_hits)
      .add("online_rows_clipped", r.counts.rows_clipped)
      .add("online_seconds", std::round(r.seconds * 1000) / 1000)
      .add("online_csv", r.csv)
      .add("online_svg", r.svg);
}

}  // namespace dpstream::tools::recommend
