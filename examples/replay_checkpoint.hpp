// dpstream-replay's checkpoint file: the protobuf message of replay_checkpoint.proto in an envelope
// with a checksum, and the conversions between the library's plain state values
// (SubspaceTracker::State, FplOnlinePca::State, RegretMeter::State) and that message.
//
// Why the seal: protobuf happily parses a message cut at a field boundary (the missing fields read
// as empty), so a truncated file could otherwise pass for a checkpoint of an earlier point. The
// envelope ends in the library's CRC-32 seal (dpstream/io/message_seal.hpp); the file is only ever
// replaced atomically (dpstream/io/atomic_file.hpp), so a mismatch means damage after the fact.
//
// Every reading function throws CorruptInput naming the field that does not fit.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dpstream/errors.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/io/message_seal.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/stream/stationary_estimate.hpp"
#include "replay_checkpoint.pb.h"

namespace dpstream::tools {

// A 64-bit fingerprint of a sequence of 64-bit words (doubles by their bits, bytes 8 at a time):
// an integrity check against accidents — a changed input file, a damaged checkpoint — not against
// an adversary (not cryptographic). Each word is xor-ed in and diffused by an odd multiply and a
// shift, so every bit of every word, and the words' order, affect the result.
class Fingerprint {
 public:
  void add(std::uint64_t word) {
    h_ ^= word;
    h_ *= 0x9E3779B97F4A7C15ull;
    h_ ^= h_ >> 29;
  }
  void add(const double* values, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t w;
      std::memcpy(&w, values + i, sizeof w);
      add(w);
    }
  }
  void add(const std::string& bytes) {
    std::size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, bytes.data() + i, sizeof w);
      add(w);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
    add(tail);
    add(static_cast<std::uint64_t>(bytes.size()));  // "ab" + zero padding ≠ "ab\0"
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0x6A09E667F3BCC908ull;
};

namespace checkpoint {

constexpr const char* kMagic = "dpstream-replay checkpoint";
constexpr std::uint32_t kFormatVersion = 1;

// ---- the file ----

inline std::string envelope(const replay::ReplayCheckpoint& msg) {
  replay::ReplayCheckpointFile file;
  file.set_magic(kMagic);
  file.set_checkpoint(msg.SerializeAsString());
  return io::seal_message(file.SerializeAsString());
}

// The checkpoint in `path`. CorruptInput: cannot be read, not a checkpoint, truncated or damaged,
// another format version.
inline replay::ReplayCheckpoint read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorruptInput("cannot open " + path + ": " + std::strerror(errno));
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  io::check_message_seal(bytes, path);  // truncated or damaged
  replay::ReplayCheckpointFile file;
  if (!file.ParseFromString(bytes) || file.magic() != kMagic)
    throw CorruptInput(path + ": " + std::to_string(bytes.size()) +
                       " bytes are not a dpstream-replay checkpoint (another file?)");
  replay::ReplayCheckpoint msg;
  if (!msg.ParseFromString(file.checkpoint()))
    throw CorruptInput(path + ": the checkpoint inside does not parse");
  if (msg.format_version() != kFormatVersion)
    throw CorruptInput(path + ": format_version " + std::to_string(msg.format_version()) + ", this build reads " +
                       std::to_string(kFormatVersion));
  return msg;
}

// ---- settings ----

using SettingList = std::vector<std::pair<std::string, std::string>>;

inline void put(const SettingList& settings, replay::ReplayCheckpoint& msg) {
  for (const auto& [name, value] : settings) {
    auto* s = msg.add_settings();
    s->set_name(name);
    s->set_value(value);
  }
}

// Empty if `msg` was made with `settings`, else what differs, naming the setting.
inline std::string mismatch(const replay::ReplayCheckpoint& msg, const SettingList& settings) {
  for (const auto& [name, value] : settings) {
    const replay::Setting* found = nullptr;
    for (const auto& s : msg.settings())
      if (s.name() == name) found = &s;
    if (!found) return name + ": the checkpoint does not record it (made by another version?)";
    if (found->value() != value)
      return name + ": the checkpoint was made with " + found->value() + ", this run has " + value;
  }
  return {};
}

// ---- matrices and vectors ----

inline void put(const Eigen::MatrixXd& m, replay::Matrix& out) {
  out.set_rows(m.rows());
  out.set_cols(m.cols());
  out.mutable_values()->Add(m.data(), m.data() + m.size());
}

inline Eigen::MatrixXd get(const replay::Matrix& m, const std::string& field) {
  if (m.rows() < 0 || m.cols() < 0 || m.values_size() != m.rows() * m.cols())
    throw CorruptInput(field + ": " + std::to_string(m.values_size()) + " values for a " + std::to_string(m.rows()) +
                       " x " + std::to_string(m.cols()) + " matrix");
  return Eigen::Map<const Eigen::MatrixXd>(m.values().data(), m.rows(), m.cols());
}

inline Eigen::VectorXd get(const google::protobuf::RepeatedField<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size());
}

// ---- library states ----

inline void put(const pca::SubspaceTracker::State& s, replay::SubspaceTracker& out) {
  put(s.block, *out.mutable_block());
  put(s.current.vectors, *out.mutable_current_vectors());
  out.mutable_current_values()->Add(s.current.values.data(), s.current.values.data() + s.current.values.size());
  auto& st = *out.mutable_stats();
  st.set_refreshes(s.stats.refreshes);
  st.set_iterations(s.stats.iterations);
  st.set_matvecs(s.stats.matvecs);
  st.set_restarts(s.stats.restarts);
  st.set_fallbacks(s.stats.fallbacks);
  st.set_full_solves(s.stats.full_solves);
  st.set_last_iterations(s.stats.last_iterations);
  st.set_last_residual(s.stats.last_residual);
}

inline pca::SubspaceTracker::State get(const replay::SubspaceTracker& m, const std::string& field) {
  pca::SubspaceTracker::State s;
  s.block = get(m.block(), field + ".block");
  s.current.vectors = get(m.current_vectors(), field + ".current_vectors");
  s.current.values = get(m.current_values());
  const auto& st = m.stats();
  s.stats.refreshes = st.refreshes();
  s.stats.iterations = st.iterations();
  s.stats.matvecs = st.matvecs();
  s.stats.restarts = st.restarts();
  s.stats.fallbacks = st.fallbacks();
  s.stats.full_solves = st.full_solves();
  s.stats.last_iterations = st.last_iterations();
  s.stats.last_residual = st.last_residual();
  return s;
}

// The replay's learners never draw perturbations (no perturbed_leader mode): a state with a
// perturbation source has no place in the message and is refused here.
inline void put(const stream::StationaryEstimate<Eigen::MatrixXd>::State& s, replay::StationaryEstimate& out) {
  out.set_steps(s.steps);
  put(s.weighted_increments, *out.mutable_weighted_increments());
  put(s.previous_release, *out.mutable_previous_release());
  put(s.numerator, *out.mutable_numerator());
  out.set_denominator(s.denominator);
}

inline stream::StationaryEstimate<Eigen::MatrixXd>::State get(const replay::StationaryEstimate& m) {
  stream::StationaryEstimate<Eigen::MatrixXd>::State s;
  s.steps = m.steps();
  s.weighted_increments = get(m.weighted_increments(), "stationary.weighted_increments");
  s.previous_release = get(m.previous_release(), "stationary.previous_release");
  s.numerator = get(m.numerator(), "stationary.numerator");
  s.denominator = m.denominator();
  return s;
}

inline void put(const pca::FplOnlinePca::State& s, replay::FplLearner& out) {
  if (s.perturbation_source) throw InvalidParameter("replay checkpoint: a perturbed_leader learner cannot be saved");
  out.set_mode(pca::to_string(s.mode));
  put(s.basis, *out.mutable_basis());
  out.mutable_leader_values()->Add(s.leader_values.data(), s.leader_values.data() + s.leader_values.size());
  out.set_refreshes(s.refreshes);
  put(s.tracker, *out.mutable_tracker());
  out.set_rows(s.rows);
  out.mutable_exact_sum()->Add(s.exact_sum.data(), s.exact_sum.data() + s.exact_sum.size());
}

inline pca::FplOnlinePca::State get(const replay::FplLearner& m, pca::FplMode mode, const std::string& field) {
  if (m.mode() != pca::to_string(mode))
    throw CorruptInput(field + ".mode is '" + m.mode() + "', expected " + pca::to_string(mode));
  pca::FplOnlinePca::State s;
  s.mode = mode;
  s.basis = get(m.basis(), field + ".basis");
  s.leader_values = get(m.leader_values());
  s.refreshes = m.refreshes();
  s.tracker = get(m.tracker(), field + ".tracker");
  s.rows = m.rows();
  s.exact_sum = get(m.exact_sum());
  return s;
}

inline void put(const eval::RegretMeter::State& s, replay::RegretMeter& out) {
  out.set_rows(s.rows);
  out.mutable_exact_sum()->Add(s.exact_sum.data(), s.exact_sum.data() + s.exact_sum.size());
  out.mutable_gains()->Add(s.gains.begin(), s.gains.end());
  out.mutable_scored()->Add(s.scored.begin(), s.scored.end());
  for (const eval::RegretSample& sample : s.curve) {
    auto* c = out.add_curve();
    c->set_rows(sample.rows);
    c->set_opt(sample.opt);
    c->mutable_gains()->Add(sample.gains.begin(), sample.gains.end());
  }
  put(s.opt_tracker, *out.mutable_opt_tracker());
}

inline eval::RegretMeter::State get(const replay::RegretMeter& m) {
  eval::RegretMeter::State s;
  s.rows = m.rows();
  s.exact_sum = get(m.exact_sum());
  s.gains.assign(m.gains().begin(), m.gains().end());
  s.scored.assign(m.scored().begin(), m.scored().end());
  for (const auto& c : m.curve()) s.curve.push_back({c.rows(), c.opt(), {c.gains().begin(), c.gains().end()}});
  s.opt_tracker = get(m.opt_tracker(), "meter.opt_tracker");
  return s;
}

}  // namespace checkpoint
}  // namespace dpstream::tools
