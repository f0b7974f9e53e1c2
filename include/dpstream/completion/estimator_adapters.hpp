// The completion estimators as the two kinds of the estimator contract (dpstream/estimator.hpp),
// through thin adapters that keep each estimator's own call shape (train; add_user / refresh;
// add / flush), which its tools, tests and audits call.
//
//  * One-shot: OneShot<T> for T = PrivateAls, DpamAls, PrivateFrankWolfe, PrivateBaseline:
//    release(ratings, budget) is T::train(ratings, budget) — the same charge before any rating is
//    read, the same draws, the same result, and T's privacy contract (its header: user-level, one
//    user's whole rating row, the (ε, δ) of the run).
//  * Streaming: UserStream<S> for S = StreamingCompletion (a release is a refresh, its model) and
//    Recommender (a release is the continual item sum's, with the item model solved from it):
//    update_block(users) adds the users in order, subscribe(subscriber) is called with every
//    release they complete, flush() releases the pending users. The privacy contract is S's (its
//    header): one user, single participation, the whole stream's (ε, δ). No save/load: neither
//    keeps a checkpoint (the contract's persistence half does not apply to them yet).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/online_recommender.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/completion/streaming_completion.hpp"
#include "dpstream/privacy/budget.hpp"

namespace dpstream::completion {

template <class Trainer>
class OneShot {
 public:
  // Built as the trainer is (its options checked, its noise calibrated: InvalidParameter).
  template <class... Args>
  explicit OneShot(Args&&... args) : trainer_(std::forward<Args>(args)...) {}

  decltype(auto) release(const RatingsMatrix& ratings, const privacy::Budget& budget) {
    return trainer_.train(ratings, budget);
  }
  const Trainer& trainer() const noexcept { return trainer_; }

 private:
  Trainer trainer_;
};

// Users in arrival order, each her (item, rating) pairs.
using UserRows = std::vector<std::vector<std::pair<Eigen::Index, double>>>;

// What a streaming completion estimator publishes, and how the adapter feeds it.
template <class Stream>
struct UserStreamTraits;

template <>
struct UserStreamTraits<StreamingCompletion> {
  struct Release {
    long step;                     // the refresh (1-based)
    const RatingPredictor& model;  // its model (post-processing of its private training)
  };
  static void add(StreamingCompletion& s, const std::vector<std::pair<Eigen::Index, double>>& user) { s.add_user(user); }
  static void flush(StreamingCompletion& s) { s.refresh(); }
  static long step(const StreamingCompletion& s) { return s.refreshes(); }
  static Release release(const StreamingCompletion& s) { return {s.refreshes(), s.model()}; }
};

template <>
struct UserStreamTraits<Recommender> {
  struct Release {
    std::uint64_t step;                // the release (1-based)
    const ItemModel& model;            // the serving model solved from it
    const Eigen::VectorXd& released;   // the noisy prefix itself
  };
  static void add(Recommender& s, const std::vector<std::pair<Eigen::Index, double>>& user) { s.add(user); }
  static void flush(Recommender& s) { s.flush(); }
  static std::uint64_t step(const Recommender& s) { return s.releases(); }
  static Release release(const Recommender& s) { return {s.releases(), s.model(), s.released()}; }
};

template <class Stream>
class UserStream {
 public:
  using Traits = UserStreamTraits<Stream>;
  using Release = typename Traits::Release;
  using Subscriber = std::function<void(const Release&)>;

  // Built as the stream is (StreamingCompletion: options and trainer; Recommender: options and the
  // budget it charges once, here).
  template <class... Args>
  explicit UserStream(Args&&... args) : stream_(std::forward<Args>(args)...) {}
  UserStream(const UserStream&) = delete;
  UserStream& operator=(const UserStream&) = delete;

  // Each user in order; a release she completes is published before the next is added. An error
  // is the stream's (a refused user or refresh: its header says what is kept); the users after
  // her are not added.
  void update_block(const UserRows& users) {
    for (const auto& user : users) {
      Traits::add(stream_, user);
      publish_new();
    }
  }
  void subscribe(Subscriber subscriber) { subscribers_.push_back(std::move(subscriber)); }
  // The pending users released now (StreamingCompletion: a refresh; Recommender: a shorter block).
  void flush() {
    Traits::flush(stream_);
    publish_new();
  }
  const Stream& stream() const noexcept { return stream_; }
  Stream& stream() noexcept { return stream_; }

 private:
  void publish_new() {
    if (Traits::step(stream_) == published_) return;
    published_ = Traits::step(stream_);
    const Release r = Traits::release(stream_);
    for (const Subscriber& s : subscribers_) s(r);
  }

  Stream stream_;
  decltype(Traits::step(std::declval<const Stream&>())) published_ = 0;
  std::vector<Subscriber> subscribers_;
};

}  // namespace dpstream::completion
