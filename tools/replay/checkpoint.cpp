#include "replay/checkpoint.hpp"

#include <cerrno>
#include <chrono>
#include <fstream>
#include <iterator>
#include <utility>

#include "common/progress.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/staged_file.hpp"

namespace dpstream::tools::replay {

namespace {
constexpr const char* kMagic = "dpstream-replay checkpoint";
// The library's envelope (base/message_seal.hpp). The file message has no format_version of its
// own: the version is the checkpoint's inside, which read_checkpoint checks (1 and 2 are read).
constexpr base::SealedKind kFile{kMagic, kCheckpointFormatVersion};
}  // namespace

std::string checkpoint_file_bytes(const pb::ReplayCheckpoint& msg) {
  pb::ReplayCheckpointFile file;
  file.set_magic(kMagic);
  file.set_checkpoint(msg.SerializeAsString());
  return base::seal(std::move(file), kFile);
}

pb::ReplayCheckpoint read_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorruptInput("cannot open " + path + ": " + std::strerror(errno));
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const pb::ReplayCheckpointFile file = base::unseal<pb::ReplayCheckpointFile>(bytes, kFile, path);
  if (file.magic() != kMagic)
    throw CorruptInput(path + ": " + std::to_string(bytes.size()) +
                       " bytes are not a dpstream-replay checkpoint (another file?)");
  pb::ReplayCheckpoint msg;
  if (!msg.ParseFromString(file.checkpoint())) throw CorruptInput(path + ": the checkpoint inside does not parse");
  if (msg.format_version() != kCheckpointFormatVersion && msg.format_version() != 1)
    throw CorruptInput(path + ": format_version " + std::to_string(msg.format_version()) + ", this build reads 1 and " +
                       std::to_string(kCheckpointFormatVersion));
  return msg;
}

session::SessionParts session_parts(const pb::ReplayCheckpoint& msg) {
  session::SessionParts out;
  out.blocks = msg.blocks();
  if (msg.format_version() != 1) {
    for (const pb::Part& p : msg.parts()) out.parts.push_back({p.name(), p.state()});
    return out;
  }
  // Version 1: the same objects' states as typed fields, each present only where the run had it.
  if (!msg.continual_sum().empty()) out.parts.push_back({"continual_sum", msg.continual_sum()});
  if (msg.has_private_learner()) out.parts.push_back({"private_learner", msg.private_learner().SerializeAsString()});
  if (msg.has_stationary()) out.parts.push_back({"stationary", msg.stationary().SerializeAsString()});
  if (msg.has_nonnegative()) out.parts.push_back({"nonnegative", msg.nonnegative().SerializeAsString()});
  out.parts.push_back({"ftl", msg.ftl().SerializeAsString()});
  out.parts.push_back({"meter", msg.meter().SerializeAsString()});
  return out;
}

void put_session_parts(const session::SessionParts& parts, pb::ReplayCheckpoint& msg) {
  msg.set_blocks(parts.blocks);
  for (const session::SessionPart& p : parts.parts) {
    pb::Part* out = msg.add_parts();
    out->set_name(p.name);
    out->set_state(p.bytes);
  }
}

void put_settings(const SettingList& settings, pb::ReplayCheckpoint& msg) {
  for (const auto& [name, value] : settings) {
    auto* s = msg.add_settings();
    s->set_name(name);
    s->set_value(value);
  }
}

std::string settings_mismatch(const pb::ReplayCheckpoint& msg, const SettingList& settings) {
  for (const auto& [name, value] : settings) {
    const pb::Setting* found = nullptr;
    for (const auto& s : msg.settings())
      if (s.name() == name) found = &s;
    if (!found) return name + ": the checkpoint does not record it (made by another version?)";
    if (found->value() != value) return name + ": the checkpoint was made with " + found->value() + ", this run has " + value;
  }
  return {};
}

CheckpointWriter::~CheckpointWriter() {
  if (thread_.joinable()) thread_.join();
}

void CheckpointWriter::start(std::string path, pb::ReplayCheckpoint msg, Done done) {
  wait();
  thread_ = std::thread([this, path = std::move(path), msg = std::move(msg), done = std::move(done)] {
    try {
      const auto t0 = std::chrono::steady_clock::now();
      const std::string bytes = checkpoint_file_bytes(msg);
      base::StagedFile file(path);  // mode 0600: a checkpoint holds raw data
      if (lock_ != nullptr) lock_->note(file.temporary());  // a SIGKILL's leftover, for the next run
      file.write(bytes.data(), bytes.size());
      file.commit();
      if (lock_ != nullptr) lock_->note("");
      done(bytes.size(), seconds_since(t0));
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

void CheckpointWriter::wait() {
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace dpstream::tools::replay
