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
//        save()                 its whole state as sealed bytes (raw data: as sensitive as the rows)
//        load(bytes, …)         the same state back, from what it was built from (static; the
//                               accountant given takes the saved ledger and is never lowered)
//    save/load are the bytes of its save(message) / load(message, …) pair in the library's one
//    sealed envelope (base/message_seal.hpp says the pattern every stateful type follows).
//    Its header states the same privacy facts for the sequence of releases, and what a restored
//    estimator may publish again (the release journal, stream/continual_sum.hpp).
//
// The concepts below check the shapes; the headers' comments carry the rest. Which estimator is which:
//  * one-shot, as is: pca::PrivatePcaMethod (pca/private_pca_method.hpp), which is also the adapter
//    over every one-shot PCA method (GaussianPca, NoisyPowerMethod, PrivateOja, StreamingPrivateOja
//    over one pass, PrivateFindAndProject, InputPerturbation), whose own call shapes (release, run,
//    run_components, release with a noise source; each takes a Budget) stay as they are: their
//    call sites are many, and the adapter is what front ends use;
//  * streaming, as is: stream::ContinualSum (continual covariance and sums), pca::StreamingPrivateOja,
//    pca::StreamingPrivatePca;
//  * streaming, through an adapter: the online-PCA protocol (FplOnlinePca following a continual
//    covariance, the row-fed learners, follow-the-leader, the regret meter) is
//    session::OnlinePcaSession (session/online_pca_session.hpp): blocks in (next_slot/publish, or
//    run(); or rows in chunks of any size by ingest(), as Python's OnlinePCA feeds it), its learners'
//    subspaces out, save()/load as a list of parts (session/session_parts.hpp), one part per
//    stateful object, each that object's own save;
//  * one-shot, through an adapter: the completion trainers (PrivateAls, DpamAls, PrivateFrankWolfe,
//    PrivateBaseline) as completion::OneShot<T> (completion/estimator_adapters.hpp): release(ratings,
//    budget) is their train(); they keep train() for their many call sites;
//  * streaming without persistence (FedStream), through an adapter: StreamingCompletion and the
//    online Recommender as completion::UserStream<S> (same header): update_block(users), subscribe,
//    flush; neither keeps a checkpoint, so save/load do not apply yet;
#pragma once

#include <concepts>
#include <string>
#include <utility>

#include <Eigen/Core>

#include "dpstream/privacy/budget.hpp"

namespace dpstream {

// A one-shot estimator (the header comment): release(rows, budget), on rows of type Data (a ratings
// matrix for the completion estimators), budget a const privacy::Budget& (an estimator that takes
// only a PrivacyAccountant& does not fit: it cannot be run unaccounted). Not const: a release may
// advance the estimator's noise.
template <class E, class Data = Eigen::MatrixXd>
concept OneShotEstimator = requires(E& e, const Data& rows, const privacy::Budget& budget) {
  e.release(rows, budget);
};

// A streaming estimator (the header comment): update_block, subscribe, save, and load from the bytes
// and what it is built from (`BuiltFrom`: its dimension, options and, where it charges, a budget).
template <class E, class... BuiltFrom>
concept StreamingEstimator = requires(E& e, const E& saved, const Eigen::MatrixXd& rows, typename E::Subscriber s,
                                      const std::string& bytes, BuiltFrom&&... built_from) {
  e.update_block(rows);
  e.subscribe(s);
  { saved.save() } -> std::convertible_to<std::string>;
  { E::load(bytes, std::forward<BuiltFrom>(built_from)...) } -> std::same_as<E>;
};

// The feed of a streaming estimator alone (update_block and subscribe, on batches of type Batch):
// what the streaming estimators that keep no checkpoint yet fit (the completion streams).
template <class E, class Batch = Eigen::MatrixXd>
concept FedStream = requires(E& e, const Batch& batch, typename E::Subscriber s) {
  e.update_block(batch);
  e.subscribe(s);
};

}  // namespace dpstream
