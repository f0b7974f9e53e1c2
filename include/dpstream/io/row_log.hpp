// Protobuf row logs: the library's own stream file (lib/proto/row_log.proto, format_version 1).
//
// A file is a length-delimited RowLogHeader, then one length-delimited Row per row, each dense (all
// `dimension` values) or sparse (strictly increasing indices and their values), with an optional id
// and timestamp. The framing is protobuf's delimited format (varint length, then the message), so any
// protobuf runtime can write or read it; scripts/rowlog_interop.py does so from Python.
//
// RowLogWriter streams rows to a file, RowLogReader streams them back; neither holds more than one
// row. Both keep values bit for bit (NaN payloads and -0.0 included). The writer streams into a
// base::StagedFile (dpstream/base/staged_file.hpp): nothing appears at the path, and a file there is
// not touched, until close() succeeds; the file has mode 0600: a log of raw rows is as sensitive as
// the data it holds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "dpstream/base/staged_file.hpp"
#include "dpstream/io/row_source.hpp"

namespace dpstream::io {

inline constexpr const char* kRowLogMagic = "dpstream-rowlog";
inline constexpr std::uint32_t kRowLogFormatVersion = 1;

struct RowLogHeader {
  Eigen::Index dimension = 0;  // > 0
  std::uint64_t count = 0;     // rows that will follow; 0 = unknown
  std::string provenance;      // where the rows came from
  std::string created_by;      // the tool that wrote the file
};

class RowLogWriter {
 public:
  // Starts the file (a temporary beside `path`) and writes the header. InvalidParameter for
  // dimension ≤ 0; std::runtime_error naming the path if it cannot be created there (or exists and
  // `existing` is refuse).
  RowLogWriter(const std::string& path, const RowLogHeader& header,
               base::ExistingFile existing = base::ExistingFile::replace);
  // Without a successful close(), nothing is written at the path (the temporary is removed).
  ~RowLogWriter();
  RowLogWriter(const RowLogWriter&) = delete;
  RowLogWriter& operator=(const RowLogWriter&) = delete;

  // InvalidParameter naming the row if its length is not the dimension.
  void write_dense(const Eigen::Ref<const Eigen::VectorXd>& row, std::optional<std::uint64_t> id = std::nullopt,
                   std::optional<std::int64_t> timestamp = std::nullopt);
  // InvalidParameter naming the row if indices and values differ in length, or an index is out of
  // [0, dimension) or not strictly increasing.
  void write_sparse(const Eigen::Ref<const Eigen::VectorXi>& indices, const Eigen::Ref<const Eigen::VectorXd>& values,
                    std::optional<std::uint64_t> id = std::nullopt,
                    std::optional<std::int64_t> timestamp = std::nullopt);
  // Writes a row as it was read: sparse if `record.sparse`, else dense; id, timestamp and unit kept.
  void write(const RowRecord& record);

  // Flushes and puts the file in place. std::runtime_error naming the path on an I/O error,
  // InvalidParameter if the header declared a count and another number of rows was written; in both
  // cases nothing is written at the path.
  void close();

  std::uint64_t rows_written() const noexcept { return rows_; }
  std::uint64_t bytes_written() const;
  const RowLogHeader& header() const noexcept { return header_; }

 private:
  struct Impl;
  void emit();
  RowLogHeader header_;
  std::string path_;
  std::uint64_t rows_ = 0;
  const std::string* unit_ = nullptr;  // write(record): the unit of the row being written
  std::unique_ptr<Impl> impl_;
};

// How RowLogReader hands out a row stored sparse. `densify` also fills RowRecord::dense, as every
// RowSource consumer expects; `keep_sparse` leaves `dense` empty and gives (indices, values) only —
// for sparse consumers (ratings) of logs whose dimension is too large to densify.
enum class SparseRows { densify, keep_sparse };

// The largest header dimension in which a sparse row is densified: 2^24 values, 128 MiB a row.
// Beyond it a few-byte sparse row would cost gigabytes (a fuzzing finding: a 29-byte file asked for
// 16 GiB), so the densifying reader refuses the row instead.
inline constexpr Eigen::Index kMaxDensifiedDimension = Eigen::Index{1} << 24;

class RowLogReader final : public RowSource {
 public:
  // Opens `path` and reads the header. CorruptInput naming the path if the file cannot be opened, is
  // empty, or its first message is not a format_version 1 header with dimension > 0.
  explicit RowLogReader(const std::string& path, bool skip_malformed = false,
                        SparseRows sparse_rows = SparseRows::densify);
  ~RowLogReader() override;

  Eigen::Index dimension() const override { return header_.dimension; }
  // CorruptInput naming the row index and byte offset for: a truncated varint or message, a row that
  // does not parse, a dense row of the wrong length, a sparse row with bad indices, more or fewer rows
  // than a declared count, a sparse row to densify in a dimension over kMaxDensifiedDimension. Only
  // unparsable rows and bad lengths/indices can be skipped.
  bool next(RowRecord& out) override;
  std::optional<std::uint64_t> declared_rows() const override;
  RowFormat format() const override { return RowFormat::pb; }

  const RowLogHeader& header() const noexcept { return header_; }
  // Byte offset of the next message in the file.
  std::uint64_t byte_offset() const;

 private:
  struct Impl;
  RowLogHeader header_;
  SparseRows sparse_rows_;
  std::uint64_t row_index_ = 0;  // rows consumed, skipped ones included
  std::unique_ptr<Impl> impl_;
};

}  // namespace dpstream::io
