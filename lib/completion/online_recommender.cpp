#include "dpstream/completion/online_recommender.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/completion/private_als.hpp"  // statistics_stride
#include "dpstream/completion/private_baseline.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/stream/block_aggregate.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::completion {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

constexpr double kRoundOff = 1e-12;                              // L' = L(1 + kRoundOff) (header)
constexpr std::uint64_t kInitSeedOffset = 0x5eed'0a11'1e00ULL;  // the init draw's stream, apart from the noise's

const RecommenderOptions& validated(const RecommenderOptions& o) {
  if (o.items < 1) throw InvalidParameter("Recommender: items must be >= 1, got " + std::to_string(o.items));
  if (o.release_every < 1) throw InvalidParameter("Recommender: release_every must be >= 1, got 0");
  if (o.strategy != stream::NoiseStrategy::plain_tree && o.strategy != stream::NoiseStrategy::blt)
    throw InvalidParameter(std::string("Recommender: strategy must be plain or blt, got ") + stream::to_string(o.strategy));
  if (o.strategy == stream::NoiseStrategy::blt && o.horizon == 0)
    throw InvalidParameter("Recommender: the blt strategy needs a horizon (releases) >= 1");
  DpamAlsOptions als = o.als;
  als.iterations = 1;
  als.seed = 0;  // validation only: no secure source is opened for it
  DpamAls{als};  // InvalidParameter naming the field
  return o;
}

ItemModel prior_model(const RecommenderOptions& o) {
  ItemModel m;
  m.scale = o.als.baseline.scale;
  m.global_mean = m.scale.center();
  m.item_bias = VectorXd::Zero(o.items);
  m.item_weight = VectorXd::Zero(o.items);
  m.item_factors = MatrixXd::Zero(o.items, o.als.rank);
  return m;
}

void require_distinct_items(UserRatings ratings, Index items) {
  std::vector<Index> seen;
  seen.reserve(ratings.size());
  for (const auto& [item, value] : ratings) {
    if (item < 0 || item >= items)
      throw InvalidParameter("Recommender: item " + std::to_string(item) + " is outside [0, " + std::to_string(items) + ")");
    if (!std::isfinite(value)) throw InvalidParameter("Recommender: the rating of item " + std::to_string(item) + " is not finite");
    seen.push_back(item);
  }
  std::sort(seen.begin(), seen.end());
  const auto repeated = std::adjacent_find(seen.begin(), seen.end());
  if (repeated != seen.end())
    throw InvalidParameter("Recommender: item " + std::to_string(*repeated) + " is rated twice by one user");
}

}  // namespace

// One user's row, sparse: the entries she touches (positions ascending within each block).
struct Recommender::Sparse {
  std::vector<Index> index;
  std::vector<double> value;
  std::uint64_t ratings_clipped = 0, residuals_clipped = 0;
  bool factor_clipped = false;
  double norm() const {
    double s = 0.0;
    for (double v : value) s += v * v;
    return std::sqrt(s);
  }
};

Recommender::Recommender(const RecommenderOptions& options, const privacy::Budget& budget)
    : options_(validated(options)) {
  const RecommenderOptions& o = options_;
  const Index stride = statistics_stride(o.als.rank);
  dimension_ = 2 + o.items * (2 + stride);
  DpamAlsOptions als = o.als;
  als.seed = 0;
  const double delta_a = DpamAls(als).release_sensitivity();
  const double rest = 1.0 - o.als.global_share - o.als.baseline_share;
  global_scale_ = delta_a * std::sqrt(o.als.global_share / (2.0 * rest));
  baseline_scale_ = delta_a * std::sqrt(o.als.baseline_share / (2.0 * rest));
  row_bound_ = std::sqrt(2.0 * global_scale_ * global_scale_ + 2.0 * baseline_scale_ * baseline_scale_ + delta_a * delta_a);

  stream::ContinualSumOptions so;
  so.horizon = o.horizon;
  so.block_rows = o.release_every;
  so.strategy = o.strategy;
  so.privacy.target = o.als.target;
  so.privacy.row_norm_bound = row_bound_ * (1.0 + kRoundOff);
  so.privacy.noise.seed = o.als.seed;
  stream_ = std::make_unique<stream::ContinualVectorSum>(dimension_, so, budget);  // charges once
  stream_->subscribe([this](const stream::ContinualVectorSum::Release& r) { on_release(r.noisy_prefix, r.noise_variance); });

  std::unique_ptr<privacy::NoiseSource> init_source =
      o.als.seed ? std::unique_ptr<privacy::NoiseSource>(std::make_unique<privacy::SeededNoiseSource>(*o.als.seed + kInitSeedOffset))
                 : privacy::make_secure_noise_source();
  init_factors_.resize(o.items, o.als.rank);
  for (Index j = 0; j < o.items; ++j)
    for (Index c = 0; c < o.als.rank; ++c) init_factors_(j, c) = o.als.init_sd * init_source->gaussian();
  serving_ = std::make_unique<ItemModel>(prior_model(o));
  training_ = std::make_unique<ItemModel>(*serving_);
  training_->item_factors = init_factors_;
  block_sum_ = VectorXd::Zero(dimension_);
  scratch_ = VectorXd::Zero(dimension_);
}

Recommender::~Recommender() = default;

std::uint64_t Recommender::releases() const noexcept { return stream_->steps(); }
const VectorXd& Recommender::released() const { return stream_->noisy_prefix(); }
double Recommender::release_sigma() const { return std::sqrt(stream_->latest().noise_variance); }
double Recommender::mu() const { return stream_->mu(); }
bool Recommender::secure() const noexcept { return stream_->is_secure() && !options_.als.seed; }

UserModel Recommender::serve(UserRatings ratings) const { return fold_in_user(*serving_, options_.als.fold_in, ratings); }

std::vector<Recommendation> Recommender::top_n(const UserModel& user, UserRatings rated, Index n) const {
  if (n < 0) throw InvalidParameter("Recommender::top_n: n must be >= 0, got " + std::to_string(n));
  std::vector<char> excluded(static_cast<std::size_t>(options_.items), 0);
  for (const auto& [item, value] : rated)
    if (item >= 0 && item < options_.items) excluded[static_cast<std::size_t>(item)] = 1;
  std::vector<Recommendation> all;
  all.reserve(static_cast<std::size_t>(options_.items));
  for (Index j = 0; j < options_.items; ++j)
    if (!excluded[static_cast<std::size_t>(j)]) all.push_back({j, serving_->predict(user, j)});
  const auto better = [](const Recommendation& a, const Recommendation& b) {
    return a.prediction > b.prediction || (a.prediction == b.prediction && a.item < b.item);
  };
  const auto keep = std::min<std::size_t>(static_cast<std::size_t>(n), all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), better);
  all.resize(keep);
  return all;
}

// Her terms into `scratch_` (zero outside her entries), gathered into `out`, scratch_ re-zeroed.
void Recommender::sparse_row(UserRatings ratings, Sparse& out) const {
  require_distinct_items(ratings, options_.items);
  const Index items = options_.items, stride = statistics_stride(options_.als.rank);
  auto global = scratch_.segment(0, 2);
  auto baseline = scratch_.segment(2, 2 * items);
  auto v_step = scratch_.segment(2 + 2 * items, items * stride);
  out = Sparse{};
  // The fold-in first: it refuses a non-finite fit (InvalidParameter) before scratch_ is written.
  const UserModel user = fold_in_user(*training_, training_fold_in(options_.als.fold_in), ratings);  // as DpamAls
  try {
    out.ratings_clipped = add_user_baseline_terms(options_.als.baseline.scale, ratings, global, baseline);
    out.residuals_clipped = add_user_v_step_terms(options_.als, *training_, user, ratings, v_step);
  } catch (...) {
    scratch_.setZero();  // no stale terms for the next user
    throw;
  }
  out.factor_clipped = user.factor_clipped;
  std::vector<Index> mine;
  mine.reserve(ratings.size());
  for (const auto& [item, value] : ratings) mine.push_back(item);
  std::sort(mine.begin(), mine.end());
  const auto take = [&](Index position, double scale) {
    out.index.push_back(position);
    out.value.push_back(scale * scratch_[position]);
    scratch_[position] = 0.0;
  };
  for (Index k = 0; k < 2; ++k) take(k, global_scale_);
  for (Index j : mine)
    for (Index k = 0; k < 2; ++k) take(2 + 2 * j + k, baseline_scale_);
  for (Index j : mine)
    for (Index k = 0; k < stride; ++k) take(2 + 2 * items + j * stride + k, 1.0);
}

VectorXd Recommender::packed_row(UserRatings ratings) const {
  Sparse row;
  sparse_row(ratings, row);
  VectorXd dense = VectorXd::Zero(dimension_);
  for (std::size_t k = 0; k < row.index.size(); ++k) dense[row.index[k]] = row.value[k];
  return dense;
}

void Recommender::add(UserRatings ratings) {
  if (options_.horizon > 0 && stream_->rows() + pending_ + 1 > options_.horizon * options_.release_every)
    throw BudgetExhausted("Recommender: the stream was calibrated for " + std::to_string(options_.horizon) +
                          " releases of " + std::to_string(options_.release_every) + " users; user " +
                          std::to_string(counts_.users) + " is past it");
  Sparse row;
  sparse_row(ratings, row);
  const double norm = row.norm();
  if (!std::isfinite(norm))  // it would poison the block's sum and every later release: refused, nothing added
    throw InvalidParameter("Recommender::add: user " + std::to_string(counts_.users) + "'s row has norm " +
                           base::format_value(norm) + ", not finite: refused, nothing added");
  double scale = 1.0;
  if (!(norm <= row_bound_ * (1.0 + kRoundOff))) {  // impossible by the derivation; scaled, counted
    scale = row_bound_ / norm;
    ++counts_.rows_clipped;
  }
  for (std::size_t k = 0; k < row.index.size(); ++k) block_sum_[row.index[k]] += scale * row.value[k];
  counts_.ratings_clipped += row.ratings_clipped;
  counts_.residuals_clipped += row.residuals_clipped;
  if (row.factor_clipped) ++counts_.user_factors_clipped;
  ++counts_.users;
  ++pending_;
  if (pending_ == options_.release_every) push_block();
}

void Recommender::push_block() {
  stream::BlockAggregate part;
  part.kind = stream::VectorAccumulator::kKind;
  part.dimension = dimension_;
  part.block_rows = options_.release_every;
  part.first_row = stream_->rows();
  part.rows = pending_;
  part.guard.dimension = dimension_;
  part.guard.norm_bound = stream_->options().privacy.row_norm_bound;
  part.counts.seen = part.counts.accepted = pending_;
  part.packed_sum = block_sum_;
  stream_->add_aggregate(part);  // releases (on_release) when the block completes
  pending_ = 0;
  block_sum_.setZero();
}

void Recommender::flush() {
  if (pending_ == 0) return;
  push_block();
  stream_->flush();
}

void Recommender::on_release(const VectorXd& prefix, double noise_variance) {
  const RecommenderOptions& o = options_;
  const Index items = o.items, stride = statistics_stride(o.als.rank);
  const double sigma = std::sqrt(noise_variance);
  const double item_sigma = sigma / baseline_scale_;
  const VectorXd global = prefix.segment(0, 2) / global_scale_;
  const VectorXd baseline = prefix.segment(2, 2 * items) / baseline_scale_;
  ItemModel model = baseline_model(global, baseline, o.als.baseline, item_sigma);
  model.item_factors = MatrixXd::Zero(items, o.als.rank);
  ItemModel training = model;
  training.item_factors = init_factors_;
  const double threshold = o.als.min_item_count_sds * item_sigma;
  const double* v_step = prefix.data() + 2 + 2 * items;
  items_left_out_ = 0;
  for (Index j = 0; j < items; ++j) {
    if (model.item_weight[j] >= threshold) {
      const VectorXd v = solve_item_factor(o.als, v_step + j * stride, sigma);
      model.item_factors.row(j) = v.transpose();
      training.item_factors.row(j) = v.transpose();
    } else {
      ++items_left_out_;
    }
  }
  *serving_ = std::move(model);
  *training_ = std::move(training);
}

}  // namespace dpstream::completion
