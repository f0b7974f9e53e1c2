// dpstream-recommend's training: the method (dpam | fw | als | irls) × mechanism × mode, once on the training
// matrix or, with --refresh-every B, streaming (the users arrive one by one in file order and the model
// is retrained every B users on all users so far: streaming_completion.hpp, the budget split over the
// planned refreshes).
//
// Privacy: the model is trained under the method's contract (dpam_als.hpp, private_frank_wolfe.hpp,
// private_als.hpp): user-level joint DP for dpam, fw and als/irls in rigorous mode; faithful als/irls
// reproduce seed 004 as printed and prove nothing (its per-draw ε is printed next to the ε its draws
// really compose to).
//
// A Training is built before any noise is drawn: its construction has the library check every option
// (InvalidParameter → UsageError, exit 2); run() then trains (an error there: exit 1).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "dpstream/completion/dpam_als.hpp"
#include "dpstream/completion/metrics.hpp"
#include "dpstream/completion/private_als.hpp"
#include "dpstream/completion/private_frank_wolfe.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/completion/synthetic_ratings.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "recommend/data.hpp"
#include "recommend/settings.hpp"

namespace dpstream::tools::recommend {

// A trained model as the tool uses it.
struct Model {
  completion::RatingPredictor predict;
  Index rank = 0;
  double epsilon_spent = 0.0;  // +inf without noise
  std::string budget;          // what training was charged to, in its own words (privacy::Budget::describe)
  std::string notes;           // privacy report lines
  // The private baseline's predictor: dpam's own (the release its ALS is centred by, part of the
  // model); for the other private methods a separate PrivateBaseline release at the same (ε, δ), shown
  // for comparison and not counted in epsilon_spent. Unset without noise.
  std::optional<completion::RatingPredictor> private_baseline;
  // dpam: its result — the public release (the item model every user is served from, the baseline's
  // noisy blocks, the model V-step 1 read) and the curator's counts.
  std::optional<completion::DpamAlsResult> dpam;
};

// dpam's options from the flags (the online Recommender shares them).
completion::DpamAlsOptions dpam_options(const RecommendSettings& s);

// One method with its options checked (UsageError), for one training matrix's shape.
class Trainer {
 public:
  Trainer(const RecommendSettings& s, const completion::RatingsMatrix& train,
          const std::optional<completion::SyntheticRatings>& truth);
  ~Trainer();
  Model train(const completion::RatingsMatrix& train, privacy::PrivacyAccountant& accountant);
  // The one charge train() makes before it reads a rating (fw; als and irls in rigorous mode), made
  // without training: a streaming run composes its planned refreshes' charges before the first.
  void charge_run(privacy::PrivacyAccountant& accountant, const std::string& label) const;
  // dpam: called with every V-step release as it is made (public values; the audits read them).
  completion::DpamAls::ReleaseObserver dpam_observer;

 private:
  Model train_frank_wolfe(const completion::RatingsMatrix& train, privacy::PrivacyAccountant& accountant);
  Model train_als(const completion::RatingsMatrix& train, privacy::PrivacyAccountant& accountant);
  Model train_dpam(const completion::RatingsMatrix& train, privacy::PrivacyAccountant& accountant);
  // The comparison baseline of a private fw/als/irls run (Model::private_baseline).
  completion::RatingPredictor comparison_baseline(const completion::RatingsMatrix& train) const;

  RecommendSettings settings_;
  completion::FrankWolfeOptions fw_options_;
  completion::AlsOptions als_options_;
  completion::DpamAlsOptions dpam_options_;
  std::unique_ptr<completion::DpamAls> dpam_;
  std::unique_ptr<completion::PrivateFrankWolfe> fw_;
  std::unique_ptr<completion::PrivateAls> als_;
};

class Training {
 public:
  // Checks every option (UsageError) before any noise is drawn. Keeps references to its arguments.
  Training(const RecommendSettings& s, const Prepared& data, const completion::RatingsMatrix& train);
  ~Training();
  // Trains; streaming prints one line per refresh.
  Model run();
  // dpam trained once: `observer` sees every V-step release (Trainer::dpam_observer).
  void observe_dpam_releases(completion::DpamAls::ReleaseObserver observer);

 private:
  Model run_streaming();

  const RecommendSettings& s_;
  const Prepared& data_;
  const completion::RatingsMatrix& train_;
  RecommendSettings per_refresh_;    // streaming: the settings each refresh trains with (its share)
  std::unique_ptr<Trainer> trainer_;  // training once
};

}  // namespace dpstream::tools::recommend
