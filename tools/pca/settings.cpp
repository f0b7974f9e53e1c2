// dpstream-pca's flags and their checks (pca.hpp).
#include <string>

#include <CLI/CLI.hpp>

#include "common/memory.hpp"
#include "common/work.hpp"
#include "pca/pca.hpp"
#include "dpstream/base/format.hpp"

namespace dpstream::tools::pca_tool {

std::function<void()> add_pca_options(CLI::App& app, PcaSettings& s) {
  add_input_options(app, s.input);
  app.add_option("--method", s.method, "gauss | power | oja | streaming-oja | pfp | rr")
      ->check(CLI::IsMember({"gauss", "power", "oja", "streaming-oja", "pfp", "rr"}))
      ->capture_default_str();
  app.add_option("--k", s.k, "dimension of the subspace")->capture_default_str();
  add_privacy_options(app, s.privacy);
  CLI::Option* clip_norm = add_normalize_options(app, s.normalize);
  CLI::Option* iterations = app.add_option("--iterations", s.iterations, "power: rounds (default 5); oja: Γ (default 100)");
  app.add_option("--batch", s.batch, "streaming-oja: rows of the first minibatch, each next twice as many, ending at the row count (0: derived)")
      ->check(at_least(0));
  app.add_option("--learning-rate", s.learning_rate, "streaming-oja: the Oja step eta_t = alpha/(C_t (1 + t)), C_t the minibatch's clip, on fixed minibatches (--batch, else n/32) instead of the power step (0: power step)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--limit", s.limit, "use the first N valid rows (0: all; the generated stream: 20000)")
      ->check(at_least(0));
  add_memory_option(app, s.max_memory);
  add_unit_options(app, s.input, s.unit, false);
  return [&s, clip_norm, iterations] {
    s.normalize.clip_norm_given = clip_norm->count() > 0;
    s.iterations_given = iterations->count() > 0;
  };
}

void validate(const PcaSettings& s) {
  if (s.k < 1) throw UsageError("--k must be >= 1, got " + std::to_string(s.k));
  validate(s.privacy);
  validate(s.normalize);
  // Each iteration is a pass over the rows that adds noise, with the budget split over all of them
  // (σ grows as √T): 10⁴ passes already bury the signal under 100x a single pass's noise, and more
  // would only run longer (10⁸ ran for minutes on 200 rows, and would for days on 60,000): refused.
  constexpr int kMaxIterations = 10000;
  if (s.iterations < 1 || s.iterations > kMaxIterations)
    throw UsageError("--iterations must be in [1, " + std::to_string(kMaxIterations) + "], got " +
                     std::to_string(s.iterations) +
                     " (each is a pass over the rows, and the noise of each grows as the square root of the count)");
  // Oja's Γ: η = 1/(σ√(nΓ)) and σ grows as √Γ, so Γ past 10 times the paper's 100 only adds passes
  // (k Γ of them: 10⁴ ran for an hour on Fashion-MNIST) to a release no better: refused.
  constexpr int kMaxOjaIterations = 1000;
  if (s.method == "oja")
    require_at_most("--iterations", s.iterations, kMaxOjaIterations,
                    "oja's passes over the rows; its step shrinks and its noise grows as the square root of the count");
  // α sets η_t L² = α/(t₀ + t), the step against the row norm bound; steps of 10⁶ already swamp the
  // current estimate, and larger α only drive the iterate past the floating-point range (NaN after
  // the noise is drawn): refused.
  constexpr double kMaxLearningRate = 1e6;
  if (!(s.learning_rate <= kMaxLearningRate))
    throw UsageError("--learning-rate must be in [0, 1e6], got " + base::format_value(s.learning_rate) +
                     " (eta_t L^2 = alpha/(t0 + t): larger steps overflow the iterate)");
  memory_limit(s.max_memory);  // a bad --max-memory is refused here, before anything is read
  validate(s.unit, s.input);
  // Analyze Gauss and the power method: a unit's k rows move AᵀA by at most k·L² (gaussian_pca.hpp,
  // noisy_power_method.hpp).
  // The iterative methods' unit-level calibration is not implemented: refused rather than mislabelled.
  if (s.unit.max_rows_per_user != 0 && s.method != "gauss" && s.method != "power")
    throw UsageError("--max-rows-per-user is implemented for --method gauss and power, not " + s.method);
}

}  // namespace dpstream::tools::pca_tool
