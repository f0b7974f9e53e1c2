// IDX rows: the MNIST / Fashion-MNIST file format, plain or gzipped (read through zlib, which takes
// either transparently).
//
// An IDX file is a big-endian header — magic 0x0000TTNN (TT the value type, NN the number of
// dimensions), then NN 32-bit sizes — and the values, row-major, big-endian. The first size is the
// number of items; each item (the product of the other sizes: 28 × 28 = 784 for the images) is one
// row. Types: 0x08 unsigned byte, 0x09 signed byte, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E
// float64, all read as doubles and multiplied by `scale` (1/255 maps image bytes to [0, 1]; the
// product is value × scale, rounded once). A 1-dimensional file (0x00000801: the labels) holds one
// value per item, not rows, and is refused as a label file.
//
// The file's size is checked against the header: up front for a plain file, as the data is
// decompressed for a gzipped one (so a truncated .gz fails at the row where it ends, after the
// rows before it were delivered). Trailing bytes after the last item, a gzip CRC mismatch or a
// gzip stream cut short throw CorruptInput naming the row and the (uncompressed) byte offset.
// The CRC-32 is at the end of the stream: a read that stops early (a row limit) has not checked it,
// which integrity() reports and verify_rest() remedies.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/io/row_source.hpp"

namespace dpstream::io {

class IdxRowReader final : public RowSource {
 public:
  // Opens `path` and reads the header. CorruptInput naming the path for a file that cannot be
  // opened, is empty, has a bad magic, is a label file, or is shorter or longer than its header
  // says (plain files); InvalidParameter for a scale that is not finite and > 0.
  explicit IdxRowReader(const std::string& path, double scale = 1.0);
  ~IdxRowReader() override;

  Eigen::Index dimension() const override { return dimension_; }
  bool next(RowRecord& out) override;
  std::optional<std::uint64_t> declared_rows() const override { return count_; }
  RowFormat format() const override { return RowFormat::idx; }
  // Plain files: no_checksum (their size was checked when opened). Gzipped: unverified until the end
  // of the stream was read — by next() returning false, or by verify_rest() — then verified. zlib
  // inflates ahead of the reader, so a damaged stream can throw before its end (even when opened),
  // but no row read says the stream is intact until the CRC-32 at its end matched.
  Integrity integrity() const override {
    return !gzipped_ ? Integrity::no_checksum : finished_ ? Integrity::verified : Integrity::unverified;
  }
  // Gzipped: decompresses the rows not read (without decoding them) and the trailer; CorruptInput
  // naming the file, the row and the uncompressed byte offset for a CRC mismatch, corrupt or
  // truncated data, a stream shorter than the header declares or trailing data, as reading to the
  // end would. Then next() returns false. Plain files: does nothing.
  void verify_rest() override;

  std::uint8_t type_code() const noexcept { return type_; }
  // The sizes after the item count (28, 28 for the images).
  const std::vector<std::uint32_t>& item_shape() const noexcept { return shape_; }
  bool gzipped() const noexcept { return gzipped_; }
  double scale() const noexcept { return scale_; }

 private:
  // Reads exactly `bytes` into buffer_ or throws, naming `what` (the header), or else row `row`.
  void read_exactly(std::size_t bytes, const char* what, std::uint64_t row = 0);
  std::string gzip_problem() const;  // zlib's error, if any, as text ("" if none)
  // After the last row: reads on to check the gzip trailer and that no data follows; sets finished_.
  void check_end();

  struct Impl;
  std::unique_ptr<Impl> impl_;
  double scale_;
  std::uint8_t type_ = 0;
  std::size_t value_bytes_ = 0;
  std::vector<std::uint32_t> shape_;
  std::uint64_t count_ = 0;
  Eigen::Index dimension_ = 0;
  std::uint64_t header_bytes_ = 0;
  std::uint64_t expected_bytes_ = 0;  // header + count × dimension × value size
  std::uint64_t offset_ = 0;          // uncompressed bytes consumed
  std::uint64_t row_index_ = 0;
  bool gzipped_ = false;
  bool finished_ = false;
  std::vector<unsigned char> buffer_;
};

}  // namespace dpstream::io
