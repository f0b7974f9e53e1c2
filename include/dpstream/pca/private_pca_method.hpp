// The library's one-shot private PCA methods behind one call (estimator.hpp: a one-shot estimator —
// rows and a budget in, a release out), chosen by name: what dpstream-pca and the Python package's
// PrivatePCA run.
//
//   gauss          Analyze Gauss (gaussian_pca.hpp)                       add/remove one row
//   power          the noisy power method (noisy_power_method.hpp)        add/remove one row
//   oja            private Oja, k > 1 by deflation (private_oja.hpp)      add/remove one row
//   streaming-oja  streaming private Oja over minibatches, one pass       one row zeroed, slot kept
//   pfp / rr       private find-and-project / input perturbation (HR12)  add/remove one row
//
// Privacy: the release is (target) -DP for the relation named above (relation()), with rows of norm
// at most row_norm_bound (the caller's guard enforces it); every charge goes to the accountant given
// to release(). The options are checked when the method is built (InvalidParameter), before any row
// is read or noise drawn.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/pca/streaming_oja_plan.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/privacy_spec.hpp"

namespace dpstream::pca {

struct PrivatePcaMethodOptions {
  std::string method = "gauss";  // gauss | power | oja | streaming-oja | pfp | rr
  Eigen::Index k = 10;
  // power: iterations (5: the best of 2–20 on Fashion-MNIST, noisy_power_method.hpp); oja: Γ, 100
  // unless given.
  int iterations = 5;
  bool iterations_given = false;
  std::uint64_t batch = 0;     // streaming-oja: rows of the first minibatch (0: derived, streaming_oja_plan.hpp)
  double learning_rate = 0;    // streaming-oja: α of η_t = α/(C_t·(1 + t)), C_t the clip (0: the library's default)
  // Target, calibration, L and the noise's seed (set: reproducible, NOT secure). privacy.relation
  // must be the method's (private_pca_relation(method)), else InvalidParameter: the release's
  // guarantee is stated for that relation only.
  privacy::PrivacySpec privacy;
  // gauss and power: 0 row level; k ≥ 1 unit level, at most k rows of one unit (gaussian_pca.hpp,
  // noisy_power_method.hpp). The other methods refuse it (their unit-level calibration is not
  // implemented).
  std::uint32_t max_rows_per_unit = 0;
};

// The methods' names, for messages and front ends.
const char* private_pca_method_names();
// The neighbouring relation `method`'s release holds for (streaming-oja: one row zeroed, its slot
// kept; the others: one row added or removed).
privacy::Neighbours private_pca_relation(const std::string& method);

class PrivatePcaMethod {
 public:
  // InvalidParameter for an unknown method or options the method refuses.
  PrivatePcaMethod(const PrivatePcaMethodOptions& o, Eigen::Index dimension);
  // The release from `rows` (n × d, each ‖a‖ ≤ L); every charge goes to `budget`.
  PrivateSubspace release(const Eigen::MatrixXd& rows, const privacy::Budget& budget) const;
  // The neighbouring relation the release's (ε, δ) holds for.
  privacy::Neighbours relation() const { return relation_; }
  // streaming-oja: the smallest eigengaps (shares of L²) one pass over `rows` rows and Analyze Gauss
  // on the same rows resolve, from public numbers only (streaming_oja_plan.hpp), for a tool to say
  // before the pass; nullopt for the other methods.
  std::optional<ResolvableGap> one_pass_reach(std::uint64_t rows) const;

 private:
  std::function<PrivateSubspace(const Eigen::MatrixXd&, const privacy::Budget&)> release_;
  privacy::Neighbours relation_;
  PrivatePcaMethodOptions options_;
  Eigen::Index dimension_;
};

}  // namespace dpstream::pca
