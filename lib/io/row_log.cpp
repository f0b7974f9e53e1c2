#include "dpstream/io/row_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/staged_file.hpp"
#include "row_log.pb.h"

namespace dpstream::io {

namespace {

constexpr int kBlockSize = 1 << 16;
// A length prefix above this is corrupt rather than a row: protobuf's own limit for one message.
constexpr std::uint64_t kMaxMessageBytes = INT_MAX;

std::string log_name(const std::string& path) { return "row log " + path; }

void check_sparse(const Eigen::Ref<const Eigen::VectorXi>& indices, Eigen::Index values, Eigen::Index dimension,
                  const std::string& where) {
  if (indices.size() != values)
    throw InvalidParameter(where + ": sparse row has " + std::to_string(indices.size()) + " indices but " +
                           std::to_string(values) + " values");
  for (Eigen::Index i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= dimension)
      throw InvalidParameter(where + ": sparse index " + std::to_string(indices[i]) + " at position " +
                             std::to_string(i) + " is outside [0, " + std::to_string(dimension) + ")");
    if (i > 0 && indices[i] <= indices[i - 1])
      throw InvalidParameter(where + ": sparse indices must be strictly increasing; position " + std::to_string(i) +
                             " has " + std::to_string(indices[i]) + " after " + std::to_string(indices[i - 1]));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Writer

struct RowLogWriter::Impl {
  explicit Impl(const std::string& path, base::ExistingFile existing) : file(path, existing) {}
  base::StagedFile file;  // nothing appears at the path until close() commits it
  std::unique_ptr<google::protobuf::io::FileOutputStream> out;
  proto::Row row;  // reused: its repeated fields keep their capacity between rows
  bool closed = false;
};

RowLogWriter::RowLogWriter(const std::string& path, const RowLogHeader& header, base::ExistingFile existing)
    : header_(header), path_(path) {
  if (header.dimension <= 0)
    throw InvalidParameter(log_name(path) + ": dimension must be > 0, got " + std::to_string(header.dimension));
  if (header.dimension > INT_MAX)
    throw InvalidParameter(log_name(path) + ": dimension " + std::to_string(header.dimension) +
                           " is over the limit " + std::to_string(INT_MAX) + " (sparse indices are 32-bit)");
  try {
    impl_ = std::make_unique<Impl>(path, existing);
  } catch (const std::runtime_error& e) {
    rethrow_with_message(log_name(path) + ": cannot create: " + e.what());
  }
  // The descriptor is the StagedFile's: the stream only flushes into it (no close-on-delete).
  impl_->out = std::make_unique<google::protobuf::io::FileOutputStream>(impl_->file.fd(), kBlockSize);

  proto::RowLogHeader msg;
  msg.set_magic(kRowLogMagic);
  msg.set_format_version(kRowLogFormatVersion);
  msg.set_dimension(static_cast<std::uint64_t>(header.dimension));
  msg.set_count(header.count);
  msg.set_provenance(header.provenance);
  msg.set_created_by(header.created_by);
  if (!google::protobuf::util::SerializeDelimitedToZeroCopyStream(msg, impl_->out.get()))
    throw std::runtime_error(log_name(path) + ": cannot write the header: " + std::strerror(impl_->out->GetErrno()));
}

RowLogWriter::~RowLogWriter() = default;

void RowLogWriter::emit() {
  if (impl_->closed) throw InvalidParameter(log_name(path_) + ": write after close()");
  if (!google::protobuf::util::SerializeDelimitedToZeroCopyStream(impl_->row, impl_->out.get()))
    throw std::runtime_error(log_name(path_) + ": cannot write row " + std::to_string(rows_) + ": " +
                             std::strerror(impl_->out->GetErrno()));
  ++rows_;
}

void RowLogWriter::write_dense(const Eigen::Ref<const Eigen::VectorXd>& row, std::optional<std::uint64_t> id,
                               std::optional<std::int64_t> timestamp) {
  if (row.size() != header_.dimension)
    throw InvalidParameter(log_name(path_) + ": row " + std::to_string(rows_) + " has dimension " +
                           std::to_string(row.size()) + ", expected " + std::to_string(header_.dimension));
  proto::Row& msg = impl_->row;
  msg.Clear();
  msg.mutable_values()->Resize(static_cast<int>(row.size()), 0.0);
  Eigen::Map<Eigen::VectorXd>(msg.mutable_values()->mutable_data(), row.size()) = row;
  if (id) msg.set_id(*id);
  if (timestamp) msg.set_timestamp(*timestamp);
  if (unit_ != nullptr) msg.set_unit(*unit_);
  emit();
}

void RowLogWriter::write_sparse(const Eigen::Ref<const Eigen::VectorXi>& indices,
                                const Eigen::Ref<const Eigen::VectorXd>& values, std::optional<std::uint64_t> id,
                                std::optional<std::int64_t> timestamp) {
  check_sparse(indices, values.size(), header_.dimension, log_name(path_) + ": row " + std::to_string(rows_));
  proto::Row& msg = impl_->row;
  msg.Clear();
  msg.set_sparse(true);
  const int n = static_cast<int>(indices.size());
  msg.mutable_values()->Resize(n, 0.0);
  Eigen::Map<Eigen::VectorXd>(msg.mutable_values()->mutable_data(), n) = values;
  msg.mutable_indices()->Resize(n, 0);
  std::uint32_t* out = msg.mutable_indices()->mutable_data();
  for (int i = 0; i < n; ++i) out[i] = static_cast<std::uint32_t>(indices[i]);
  if (id) msg.set_id(*id);
  if (timestamp) msg.set_timestamp(*timestamp);
  if (unit_ != nullptr) msg.set_unit(*unit_);
  emit();
}

void RowLogWriter::write(const RowRecord& record) {
  // The unit goes with the row written now only (write_dense/write_sparse alone write none).
  unit_ = record.has_unit ? &record.unit : nullptr;
  try {
    if (record.sparse) write_sparse(record.indices, record.values, record.id, record.timestamp);
    else write_dense(record.dense, record.id, record.timestamp);
  } catch (...) {
    unit_ = nullptr;
    throw;
  }
  unit_ = nullptr;
}

std::uint64_t RowLogWriter::bytes_written() const {
  return impl_->out ? static_cast<std::uint64_t>(impl_->out->ByteCount()) : 0;
}

void RowLogWriter::close() {
  if (impl_->closed) return;
  impl_->closed = true;
  if (!impl_->out->Flush())
    throw std::runtime_error(log_name(path_) + ": cannot write: " + std::strerror(impl_->out->GetErrno()));
  if (header_.count != 0 && header_.count != rows_)  // a header that lies is not put in place
    throw InvalidParameter(log_name(path_) + ": the header declares " + std::to_string(header_.count) +
                           " rows but " + std::to_string(rows_) + " were written; nothing was written at the path");
  try {
    impl_->file.commit();
  } catch (const std::runtime_error& e) {
    rethrow_with_message(log_name(path_) + ": " + e.what());
  }
}

// ---------------------------------------------------------------------------------------------------
// Reader

namespace {
enum class Frame { message, end };
}  // namespace

struct RowLogReader::Impl {
  // Reads one length-delimited message into `buffer`: row `row`, or the header when `row` is
  // nullopt (for messages). Truncation throws: what follows a cut message cannot be found.
  Frame read_frame(const std::string& path, std::optional<std::uint64_t> row);

  int fd = -1;
  std::unique_ptr<google::protobuf::io::FileInputStream> in;
  std::optional<std::uint64_t> file_size;  // regular files only: lets truncation be told up front
  std::string buffer;                      // the current message's bytes
  std::uint64_t message_offset = 0;        // byte offset of the current message's length prefix
  proto::Row row;
};

Frame RowLogReader::Impl::read_frame(const std::string& path, std::optional<std::uint64_t> row) {
  namespace pio = google::protobuf::io;
  message_offset = static_cast<std::uint64_t>(in->ByteCount());
  // Built only on an error: this runs once a row.
  auto where = [&] {
    return log_name(path) + ": " + (row ? "row " + std::to_string(*row) : std::string("the header")) +
           " at byte offset " + std::to_string(message_offset);
  };
  // One CodedInputStream per message: its byte limit (INT_MAX) then bounds a message, not the file.
  pio::CodedInputStream coded(in.get());
  std::uint64_t length = 0;
  int prefix_bytes = 0;
  for (;;) {
    std::uint8_t byte = 0;
    if (!coded.ReadRaw(&byte, 1)) {
      if (in->GetErrno() != 0)
        throw CorruptInput(where() + ": read error: " + std::strerror(in->GetErrno()));
      if (prefix_bytes == 0) return Frame::end;
      throw CorruptInput(where() + ": truncated varint length prefix (the file ends after " +
                         std::to_string(prefix_bytes) + " of its bytes)");
    }
    if (prefix_bytes == 10) throw CorruptInput(where() + ": malformed varint length prefix (over 10 bytes)");
    length |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * prefix_bytes);
    ++prefix_bytes;
    if ((byte & 0x80) == 0) break;
  }
  if (length > kMaxMessageBytes)
    throw CorruptInput(where() + ": length prefix " + std::to_string(length) + " is over the " +
                       std::to_string(kMaxMessageBytes) + "-byte limit of a message (corrupt prefix)");
  if (file_size) {
    // Told from the size, so a corrupt prefix costs no allocation of its length. The size is taken
    // again before concluding: a log still being appended to has grown since the last look.
    const std::uint64_t start = message_offset + static_cast<std::uint64_t>(prefix_bytes);
    auto remaining = [&] { return *file_size > start ? *file_size - start : 0; };
    struct stat st {};
    if (length > remaining() && ::fstat(fd, &st) == 0) file_size = static_cast<std::uint64_t>(st.st_size);
    if (length > remaining())
      throw CorruptInput(where() + ": truncated message: its prefix says " + std::to_string(length) +
                         " bytes, the file has " + std::to_string(remaining()) + " left");
  }
  if (!coded.ReadString(&buffer, static_cast<int>(length))) {
    if (in->GetErrno() != 0)
      throw CorruptInput(where() + ": read error: " + std::strerror(in->GetErrno()));
    throw CorruptInput(where() + ": truncated message: its prefix says " + std::to_string(length) +
                       " bytes, the file ends before");
  }
  return Frame::message;
}

RowLogReader::RowLogReader(const std::string& path, bool skip_malformed, SparseRows sparse_rows)
    : RowSource(path, skip_malformed), sparse_rows_(sparse_rows), impl_(std::make_unique<Impl>()) {
  impl_->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl_->fd < 0) throw CorruptInput(log_name(path) + ": cannot open: " + std::strerror(errno));
  impl_->in = std::make_unique<google::protobuf::io::FileInputStream>(impl_->fd, kBlockSize);
  impl_->in->SetCloseOnDelete(true);
  struct stat st {};
  if (::fstat(impl_->fd, &st) == 0 && S_ISREG(st.st_mode)) {
    impl_->file_size = static_cast<std::uint64_t>(st.st_size);
    if (st.st_size == 0) throw CorruptInput(log_name(path) + ": empty file (0 bytes), expected a row log header");
  }

  Frame first = Frame::end;
  try {
    first = impl_->read_frame(path, std::nullopt);
  } catch (const CorruptInput& e) {
    throw CorruptInput(std::string(e.what()) + " (not a dpstream row log, or cut inside its header)");
  }
  if (first == Frame::end) throw CorruptInput(log_name(path) + ": empty file (0 bytes), expected a row log header");
  proto::RowLogHeader msg;
  if (!msg.ParseFromString(impl_->buffer) || msg.magic() != kRowLogMagic)
    throw CorruptInput(log_name(path) + ": not a dpstream row log: the first message (byte offset 0, " +
                       std::to_string(impl_->buffer.size()) + " bytes) is not a header with magic \"" +
                       kRowLogMagic + "\"");
  if (msg.format_version() != kRowLogFormatVersion)
    throw CorruptInput(log_name(path) + ": format_version " + std::to_string(msg.format_version()) +
                       ", this reader knows " + std::to_string(kRowLogFormatVersion));
  if (msg.dimension() == 0 || msg.dimension() > static_cast<std::uint64_t>(INT_MAX))
    throw CorruptInput(log_name(path) + ": header dimension " + std::to_string(msg.dimension()) +
                       " is outside [1, " + std::to_string(INT_MAX) + "]");
  header_.dimension = static_cast<Eigen::Index>(msg.dimension());
  header_.count = msg.count();
  header_.provenance = msg.provenance();
  header_.created_by = msg.created_by();
}

RowLogReader::~RowLogReader() = default;

std::optional<std::uint64_t> RowLogReader::declared_rows() const {
  if (header_.count == 0) return std::nullopt;
  return header_.count;
}

std::uint64_t RowLogReader::byte_offset() const { return static_cast<std::uint64_t>(impl_->in->ByteCount()); }

bool RowLogReader::next(RowRecord& out) {
  const Eigen::Index dim = header_.dimension;
  for (;;) {
    const std::uint64_t index = row_index_;
    if (impl_->read_frame(path_, index) == Frame::end) {
      if (header_.count != 0 && index < header_.count)
        throw CorruptInput(log_name(path_) + ": the file ends after " + std::to_string(index) + " rows (byte offset " +
                           std::to_string(impl_->message_offset) + ") but the header declares " +
                           std::to_string(header_.count));
      return false;
    }
    ++row_index_;
    auto where = [&] {
      return log_name(path_) + ": row " + std::to_string(index) + " at byte offset " +
             std::to_string(impl_->message_offset);
    };
    if (header_.count != 0 && index >= header_.count)
      throw CorruptInput(where() + ": the header declares " + std::to_string(header_.count) +
                         " rows, the file has more");

    proto::Row& row = impl_->row;
    if (!row.ParseFromString(impl_->buffer)) {
      malformed(where() + ": does not parse as a Row message (" +
                std::to_string(impl_->buffer.size()) + " bytes)");
      continue;
    }
    const int n = row.values_size();
    if (!row.sparse()) {
      if (row.indices_size() != 0 || n != dim) {
        malformed(where() + ": dense row has " + std::to_string(n) + " values" +
                  (row.indices_size() != 0 ? " and " + std::to_string(row.indices_size()) + " indices" : "") +
                  ", expected dimension " + std::to_string(dim));
        continue;
      }
      out.sparse = false;
      out.dense = Eigen::Map<const Eigen::VectorXd>(row.values().data(), dim);
      out.indices.resize(0);
      out.values.resize(0);
    } else {
      std::string problem;
      if (row.indices_size() != n) {
        problem = "sparse row has " + std::to_string(row.indices_size()) + " indices but " + std::to_string(n) +
                  " values";
      } else {
        for (int i = 0; i < n && problem.empty(); ++i) {
          const std::uint32_t k = row.indices(i);
          if (k >= static_cast<std::uint64_t>(dim))
            problem = "sparse index " + std::to_string(k) + " at position " + std::to_string(i) + " is outside [0, " +
                      std::to_string(dim) + ")";
          else if (i > 0 && k <= row.indices(i - 1))
            problem = "sparse indices must be strictly increasing; position " + std::to_string(i) + " has " +
                      std::to_string(k) + " after " + std::to_string(row.indices(i - 1));
        }
      }
      if (!problem.empty()) {
        malformed(where() + ": " + problem);
        continue;
      }
      const bool densify = sparse_rows_ == SparseRows::densify;
      if (densify && dim > kMaxDensifiedDimension)
        throw CorruptInput(where() + ": a sparse row in dimension " + std::to_string(dim) +
                           " is over the densifying reader's limit of " + std::to_string(kMaxDensifiedDimension) +
                           " values (corrupt header?); read it with SparseRows::keep_sparse");
      out.sparse = true;
      out.indices.resize(n);
      out.values.resize(n);
      if (densify) out.dense.setZero(dim);
      else out.dense.resize(0);
      for (int i = 0; i < n; ++i) {
        out.indices[i] = static_cast<int>(row.indices(i));
        out.values[i] = row.values(i);
        if (densify) out.dense[out.indices[i]] = row.values(i);
      }
    }
    out.id = row.has_id() ? std::optional<std::uint64_t>(row.id()) : std::nullopt;
    out.timestamp = row.has_timestamp() ? std::optional<std::int64_t>(row.timestamp()) : std::nullopt;
    out.has_unit = row.has_unit();
    if (out.has_unit) out.unit.assign(row.unit());
    out.row_index = index;
    out.line = 0;
    ++returned_;
    return true;
  }
}

}  // namespace dpstream::io
