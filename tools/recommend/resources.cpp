#include "recommend/resources.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/memory.hpp"
#include "common/work.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"

namespace dpstream::tools::recommend {

namespace {

// A rating held as the table's, the split's and the cap's copies (24 bytes each) and in the training
// matrix's rows and columns (16 bytes each way): ~120 bytes with the vectors' slack.
constexpr double kBytesPerRating = 120;

double generated_ratings(const RecommendSettings& s, double users, double items) {
  if (s.synthetic == "seed001") return users * static_cast<double>(s.per_user);
  if (s.synthetic == "movielens") return users * (100000.0 / 943.0);
  if (s.synthetic == "seed004") return users * items * s.observed;
  return 0;  // ml-latest-small, ml-10m: their own fixed size
}

int iterations_of(const RecommendSettings& s) {
  if (s.iterations > 0) return s.iterations;
  return s.method == "fw" ? 10 : 20;
}

}  // namespace

void check_iteration_caps(const RecommendSettings& s) {
  // Each alternation or round is a release that splits the budget (noise ∝ √T) and a pass over the
  // ratings: the papers use T ≤ 40, K ≤ 20. 100 times that is past any use; more only runs for days.
  require_at_most("--iters", s.iterations, 1000, "alternations (als, irls, dpam) or rounds (fw), each a release "
                                                 "that splits the budget: the papers use at most 40");
  require_at_most("--irls-iters", s.irls_iterations, 1000, "R-IRLS steps per alternation, each a release: the paper uses 20");
}

void check_generated_set(const RecommendSettings& s) {
  if (!s.generated()) return;
  const bool rank_one = s.synthetic == "seed001", movielens = s.synthetic == "movielens";
  const double users = static_cast<double>(s.synthetic_users ? s.synthetic_users : (rank_one ? 100000 : movielens ? 943 : 200));
  const double items = static_cast<double>(s.synthetic_items ? s.synthetic_items : (rank_one ? 100 : movielens ? 1682 : 200));
  const double rank = rank_one ? 1.0 : static_cast<double>(s.synthetic_rank);
  const double bytes = kBytesPerRating * generated_ratings(s, users, items) + 8.0 * (users + items) * rank;
  require_memory("--synthetic " + s.synthetic + " with " + base::format_value(users) + " users x " + base::format_value(items) +
                     " items (--synthetic-users, --synthetic-items)",
                 bytes, memory_limit(s.max_memory));
}

void check_training(const RecommendSettings& s, Index users_, Index items_, std::uint64_t ratings_) {
  const double users = static_cast<double>(users_), items = static_cast<double>(items_);
  const double ratings = static_cast<double>(ratings_), rank = static_cast<double>(s.rank);
  const double rounds = iterations_of(s) * (s.method == "irls" ? std::max(1, s.irls_iterations) : 1);
  const std::string sizes = std::to_string(users_) + " users x " + std::to_string(items_) + " items";
  double bytes = 0, flops = 0;
  std::string what;
  if (s.method == "fw") {
    // Ŵ(t) dense items × items (lower triangle accumulated, the noise, the eigensolver's copy and its
    // Lanczos basis of up to items vectors); the users' coefficients. Lanczos with full
    // reorthogonalisation may take up to `items` steps on a noise-dominated Ŵ: ~4 items³ a round.
    bytes = 8.0 * (4 * items * items + users * rounds);
    flops = rounds * (4 * items * items * items + ratings * ratings / std::max(users, 1.0));
    what = "--method fw on " + sizes + ", " + std::to_string(iterations_of(s)) + " rounds (up to)";
  } else {
    // Factors of both sides (and the baseline's, the noise's and the previous iterate's copies); the
    // rank × rank Grams and their eigendecompositions, one a worker; per V-/U-step the ratings' outer
    // products (ratings · rank²) and a solve a row (~10 rank³).
    bytes = 8.0 * (4 * (users + items) * rank + 4 * rank * rank);
    flops = rounds * (2 * ratings * rank * rank + 10 * (users + items) * rank * rank * rank);
    what = "--method " + s.method + " on " + sizes + ", --rank " + std::to_string(s.rank) + ", " +
           std::to_string(static_cast<long>(rounds)) + " V-steps";
  }
  require_memory(what, bytes + kBytesPerRating * ratings, memory_limit(s.max_memory));
  if (s.refresh_every > 0) flops *= std::max(1.0, std::ceil(users / static_cast<double>(s.refresh_every)));
  announce_work("dpstream-recommend", what, flops);
}

}  // namespace dpstream::tools::recommend
