#include "dpstream/session/full_projections.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "dpstream/pca/doubly_nonnegative.hpp"

namespace dpstream::session {

using pca::DoublyNonnegativeReader;

FullProjections::FullProjections(std::uint64_t releases_read, std::uint64_t last_full, double ratio,
                                 std::size_t buffers, ReleaseOf release)
    : ratio_(ratio), buffers_(std::max<std::size_t>(1, buffers)), release_(std::move(release)),
      buffer_(buffers_), last_scheduled_(last_full), next_candidate_(releases_read + 1) {}

std::uint64_t FullProjections::full_release_at(std::size_t index) {
  while (schedule_.size() <= index) {
    std::uint64_t t = std::max(next_candidate_, last_scheduled_ + 1);
    while (!DoublyNonnegativeReader::full_release(t, last_scheduled_, ratio_)) ++t;
    schedule_.push_back(t);
    done_.push_back(false);
    last_scheduled_ = t;
  }
  return schedule_[index];
}

bool FullProjections::claimable() {
  return claimed_ < given_back_ + buffers_ && full_release_at(claimed_) <= published_;
}

void FullProjections::project_claimed(std::unique_lock<std::mutex>& lock, linalg::PsdProjector& projector) {
  const std::size_t k = claimed_++;
  const std::uint64_t t = schedule_[k];
  Eigen::MatrixXd& out = buffer_[k % buffers_];
  lock.unlock();  // the release and this buffer are this thread's until done_[k]
  DoublyNonnegativeReader::full_projection(release_(t), out, projector);
  lock.lock();
  done_[k] = true;
  changed_.notify_all();
}

void FullProjections::published(std::uint64_t t) {
  std::lock_guard<std::mutex> lock(mutex_);
  published_ = std::max(published_, t);
  changed_.notify_all();
}

bool FullProjections::help() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return stopped_ || claimable(); });
  if (stopped_) return false;
  project_claimed(lock, helper_projector_);
  return true;
}

const Eigen::MatrixXd* FullProjections::take(std::uint64_t t) {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::size_t k = given_back_;
  if (full_release_at(k) != t)
    throw std::logic_error("FullProjections::take: release " + std::to_string(t) + " is not the next full release (" +
                           std::to_string(schedule_[k]) + ")");
  for (;;) {
    if (stopped_) return nullptr;
    if (done_[k]) return &buffer_[k % buffers_];
    if (claimable())
      project_claimed(lock, learner_projector_);  // t itself if nobody has claimed it, else the next one: both cores project
    else
      changed_.wait(lock);
  }
}

void FullProjections::give_back(std::uint64_t t) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (given_back_ >= schedule_.size() || schedule_[given_back_] != t || !done_[given_back_])
    throw std::logic_error("FullProjections::give_back: release " + std::to_string(t) + " was not taken");
  ++given_back_;
  changed_.notify_all();
}

void FullProjections::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
  changed_.notify_all();
}

}  // namespace dpstream::session
