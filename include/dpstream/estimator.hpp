// The estimator contract: what every private estimator of the library is, stated once. There are
// two kinds.
//
//  * A one-shot estimator takes rows and a budget and returns a release:
//        Release release(rows, budget)
//    Built from its options, which it checks (InvalidParameter) before any row is read or noise
//    drawn; release() charges the budget (a const privacy::Budget&: an accountant, or a stated reason
//    why nothing is charged) for everything it draws, before drawing it, and the release is all that
//    leaves it. Its header states the
//    neighbouring relation, the privacy unit, the sensitivity and the (ε, δ) of that release.
//
//  * A streaming estimator is fed rows and publishes releases as it goes:
//        update_block(rows)     rows in, in order (a release when a step completes)
//        subscribe(subscriber)  called with each release as it is published
//        serialize()            save: its whole state as bytes (raw data: as sensitive as the rows)
//        deserialize(bytes, …)  load: the same state back, from its options (static; the budget's
//                               accountant takes the saved ledger and is never lowered)
//    Its header states the same privacy facts for the sequence of releases, and what a restored
//    estimator may publish again (the release journal, stream/continual_sum.hpp).
//
// The concepts below check the shapes; the headers' comments carry the rest. Which estimator is which:
//  * one-shot, as is: pca::PrivatePcaMethod (pca/private_pca_method.hpp), which is also the adapter
//    over every one-shot PCA method (GaussianPca, NoisyPowerMethod, PrivateOja, StreamingPrivateOja
//    over one pass, PrivateFindAndProject, InputPerturbation), whose own call shapes (release, run,
//    run_components, release with a noise source; each takes a Budget) stay as they are: their
//    call sites are many, and the adapter is what front ends use;
//  * streaming, as is: stream::ContinualSum (continual covariance and sums), pca::StreamingPrivateOja;
//  * streaming, through an adapter: the online-PCA protocol (FplOnlinePca following a continual
//    covariance, the row-fed learners, follow-the-leader, the regret meter) is
//    session::OnlinePcaSession (session/online_pca_session.hpp): blocks in (next_slot/publish, or
//    run()), its learners' subspaces out, save()/load as a list of parts (session/session_parts.hpp),
//    one part per stateful object, each that object's own save;
//  * not yet fitted: pca::StreamingPrivatePca (update + subscribe, no save/load), the completion
//    estimators (train / refresh / add_user): they keep their call shapes until they get adapters.
#pragma once

#include <concepts>
#include <string>

#include <Eigen/Core>

#include "dpstream/privacy/budget.hpp"

namespace dpstream {

// A one-shot estimator (the header comment): release(rows, budget), budget a const privacy::Budget&
// (an estimator that takes only a PrivacyAccountant& does not fit: it cannot be run unaccounted).
template <class E>
concept OneShotEstimator = requires(const E& e, const Eigen::MatrixXd& rows, const privacy::Budget& budget) {
  e.release(rows, budget);
};

// A streaming estimator (the header comment): update_block, subscribe, serialize, deserialize.
template <class E>
concept StreamingEstimator = requires(E& e, const E& saved, const Eigen::MatrixXd& rows, typename E::Subscriber s) {
  e.update_block(rows);
  e.subscribe(s);
  { saved.serialize() } -> std::convertible_to<std::string>;
  &E::deserialize;
};

}  // namespace dpstream
