// The release journal (why and the file's layout: dpstream/base/release_journal.hpp).
#include "dpstream/base/release_journal.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/staged_file.hpp"

namespace dpstream::base {

namespace {

constexpr char kMagic[8] = {'D', 'P', 'S', 'J', 'R', 'N', 'L', '1'};
constexpr std::size_t kHeader = 8 + 32, kRecord = 8 + 32;

std::runtime_error io_error(const std::string& path, const std::string& what, int err) {
  return std::runtime_error("release journal " + path + ": " + what + ": " + std::strerror(err));
}

void write_all(int fd, const unsigned char* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error(path, "write failed", errno);
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::uint64_t word_at(const std::string& bytes, std::size_t at) {
  std::uint64_t w = 0;
  for (int i = 7; i >= 0; --i) w = (w << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
  return w;
}

std::string read_all(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw CorruptInput("release journal " + path + ": cannot open: " + std::strerror(errno));
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw CorruptInput("release journal " + path + ": cannot read: " + std::strerror(err));
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return bytes;
}

}  // namespace

ReleaseJournal::ReleaseJournal(std::string path, int fd, std::uint64_t releases, std::uint64_t first_held,
                               std::vector<Digest> held)
    : path_(std::move(path)), fd_(fd), releases_(releases), first_held_(first_held), held_(std::move(held)) {}

ReleaseJournal::ReleaseJournal(ReleaseJournal&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), releases_(other.releases_),
      first_held_(other.first_held_), held_(std::move(other.held_)) {}

ReleaseJournal& ReleaseJournal::operator=(ReleaseJournal&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    releases_ = other.releases_;
    first_held_ = other.first_held_;
    held_ = std::move(other.held_);
  }
  return *this;
}

ReleaseJournal::~ReleaseJournal() {
  if (fd_ >= 0) ::close(fd_);
}

ReleaseJournal::Digest ReleaseJournal::new_id() {
  if (sodium_init() < 0) throw std::runtime_error("release journal: libsodium failed to initialize");
  Digest id;
  randombytes_buf(id.data(), id.size());
  return id;
}

ReleaseJournal ReleaseJournal::create(const std::string& path, const Digest& id) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0)
    throw InvalidParameter("release journal " + path +
                           " exists: it is the journal of a stream that published releases. Restore that stream from "
                           "its checkpoint with this journal, or remove the file to start a new stream (charged anew)");
  {  // the header, written whole or not at all; refused if the name appeared meanwhile
    StagedFile file(path, ExistingFile::refuse, 0600);
    file.write(kMagic, sizeof kMagic);
    file.write(reinterpret_cast<const char*>(id.data()), id.size());
    file.commit();
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw io_error(path, "cannot open for appending", errno);
  return ReleaseJournal(path, fd, 0, 1, {});
}

ReleaseJournal ReleaseJournal::open(const std::string& path, const Digest& id, std::uint64_t steps) {
  const std::string bytes = read_all(path);
  const std::string where = "release journal " + path + ": ";
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw CorruptInput(where + "not a release journal (" + std::to_string(bytes.size()) + " bytes)");
  if (std::memcmp(bytes.data() + 8, id.data(), id.size()) != 0)
    throw CorruptInput(where + "the journal of another stream than the checkpoint's");
  const std::uint64_t releases = (bytes.size() - kHeader) / kRecord;
  std::vector<Digest> held;
  for (std::uint64_t r = 0; r < releases; ++r) {
    const std::size_t at = kHeader + static_cast<std::size_t>(r) * kRecord;
    if (word_at(bytes, at) != r + 1)
      throw CorruptInput(where + "record " + std::to_string(r + 1) + " is of step " +
                         std::to_string(word_at(bytes, at)) + " (damaged)");
    if (r + 1 > steps) {
      held.emplace_back();
      std::memcpy(held.back().data(), bytes.data() + at + 8, 32);
    }
  }
  if (releases < steps)
    throw CorruptInput(where + "holds " + std::to_string(releases) + " releases, the checkpoint " +
                       std::to_string(steps) + " (an older copy, or the journal of another run)");
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw CorruptInput(where + "cannot open for appending: " + std::strerror(errno));
  const auto whole = static_cast<off_t>(kHeader + releases * kRecord);
  if (static_cast<off_t>(bytes.size()) != whole && (::ftruncate(fd, whole) != 0 || ::fdatasync(fd) != 0)) {
    const int err = errno;
    ::close(fd);
    throw CorruptInput(where + "cannot cut its partial last record: " + std::strerror(err));
  }
  return ReleaseJournal(path, fd, releases, steps + 1, std::move(held));
}

void ReleaseJournal::record(std::uint64_t step, const Digest& digest) {
  if (step >= first_held_ && step - first_held_ < held_.size()) {
    if (held_[step - first_held_] != digest)
      throw InvalidParameter("release " + std::to_string(step) + " differs from the one published before the restore (" +
                             path_ + " holds it): the rows fed again are not the rows it was made from, and the same "
                             "noise on other rows would reveal their difference. Nothing was published; restore "
                             "from the checkpoint again and feed the same rows");
    return;
  }
  if (step != releases_ + 1)
    throw InvalidParameter("release journal " + path_ + ": release " + std::to_string(step) + " after " +
                           std::to_string(releases_) + " recorded");
  unsigned char record[kRecord];
  for (int i = 0; i < 8; ++i) record[i] = static_cast<unsigned char>(step >> (8 * i));
  std::memcpy(record + 8, digest.data(), digest.size());
  write_all(fd_, record, sizeof record, path_);
  if (::fdatasync(fd_) != 0) throw io_error(path_, "fdatasync failed", errno);
  ++releases_;
}

static_assert(sizeof(crypto_generichash_state) <= 384, "ReleaseDigest::state_ is too small");

ReleaseDigest::ReleaseDigest() {
  if (sodium_init() < 0) throw std::runtime_error("release digest: libsodium failed to initialize");
  crypto_generichash_init(reinterpret_cast<crypto_generichash_state*>(state_), nullptr, 0, 32);
}

ReleaseDigest& ReleaseDigest::add(std::uint64_t word) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(word >> (8 * i));
  crypto_generichash_update(reinterpret_cast<crypto_generichash_state*>(state_), bytes, sizeof bytes);
  return *this;
}

ReleaseDigest& ReleaseDigest::add(const double* values, std::size_t n) {
  crypto_generichash_update(reinterpret_cast<crypto_generichash_state*>(state_),
                            reinterpret_cast<const unsigned char*>(values), n * sizeof(double));
  return *this;
}

ReleaseJournal::Digest ReleaseDigest::finish() {
  ReleaseJournal::Digest out;
  crypto_generichash_final(reinterpret_cast<crypto_generichash_state*>(state_), out.data(), out.size());
  return out;
}

StreamJournal StreamJournal::create(const std::string& path) {
  StreamJournal j;
  if (path.empty()) return j;
  j.id_ = ReleaseJournal::new_id();
  j.journal_.emplace(ReleaseJournal::create(path, j.id_));
  return j;
}

StreamJournal StreamJournal::open(const std::string& path, const std::string& id, std::uint64_t steps,
                                  const std::string& checkpoint) {
  StreamJournal j;
  if (id.empty()) return j;
  if (id.size() != j.id_.size())
    throw CorruptInput(checkpoint + ": journal_id of " + std::to_string(id.size()) + " bytes, expected " +
                       std::to_string(j.id_.size()));
  std::memcpy(j.id_.data(), id.data(), j.id_.size());
  j.journal_.emplace(ReleaseJournal::open(path, j.id_, steps));
  return j;
}

std::string StreamJournal::id() const {
  return journal_ ? std::string(reinterpret_cast<const char*>(id_.data()), id_.size()) : std::string();
}

void StreamJournal::discard() noexcept {
  if (!journal_) return;
  const std::string path = journal_->path();
  journal_.reset();
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

void StreamJournal::require_usable(const std::string& stream) const {
  if (refused_)
    throw InvalidParameter(stream + ": a release was refused by the release journal " + journal_->path() +
                           "; nothing more is published (restore from the checkpoint)");
}

}  // namespace dpstream::base
