#include "dpstream/io/idx_rows.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "dpstream/base/errors.hpp"

namespace dpstream::io {

namespace {

std::string idx_name(const std::string& path) { return "IDX " + path; }

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

std::uint32_t load_be32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return std::endian::native == std::endian::little ? __builtin_bswap32(v) : v;
}
std::uint64_t load_be64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
}

// Bytes per value of an IDX type code, 0 if the code is not one.
std::size_t value_size(std::uint8_t type) {
  switch (type) {
    case 0x08: case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C: case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
  }
}

const char* type_name(std::uint8_t type) {
  switch (type) {
    case 0x08: return "ubyte";
    case 0x09: return "sbyte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return "?";
  }
}

template <class Convert>
void decode(const unsigned char* in, Eigen::Index n, std::size_t size, double scale, double* out, Convert convert) {
  if (scale == 1.0) {  // no multiply: a float64 NaN keeps its payload
    for (Eigen::Index j = 0; j < n; ++j) out[j] = convert(in + static_cast<std::size_t>(j) * size);
  } else {
    for (Eigen::Index j = 0; j < n; ++j) out[j] = convert(in + static_cast<std::size_t>(j) * size) * scale;
  }
}

}  // namespace

struct IdxRowReader::Impl {
  gzFile file = nullptr;
  ~Impl() {
    if (file != nullptr) gzclose(file);
  }
};

IdxRowReader::IdxRowReader(const std::string& path, double scale)
    : RowSource(path, false), impl_(std::make_unique<Impl>()), scale_(scale) {
  if (!std::isfinite(scale) || scale <= 0) {
    std::ostringstream msg;
    msg << idx_name(path) << ": scale must be finite and > 0, got " << scale;
    throw InvalidParameter(msg.str());
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw CorruptInput(idx_name(path) + ": cannot open: " + std::strerror(errno));
  if (S_ISREG(st.st_mode) && st.st_size == 0) throw CorruptInput(idx_name(path) + ": empty file (0 bytes)");
  errno = 0;
  impl_->file = gzopen(path.c_str(), "rb");
  if (impl_->file == nullptr)
    throw CorruptInput(idx_name(path) + ": cannot open: " + (errno ? std::strerror(errno) : "out of memory"));
  gzbuffer(impl_->file, 1 << 17);
  gzipped_ = gzdirect(impl_->file) == 0;  // right after gzopen, zlib looks at the first bytes to tell

  read_exactly(4, "the header");
  const std::uint32_t magic = load_be32(buffer_.data());
  type_ = static_cast<std::uint8_t>((magic >> 8) & 0xff);
  const unsigned dims = magic & 0xff;
  value_bytes_ = value_size(type_);
  if ((magic >> 16) != 0 || value_bytes_ == 0 || dims == 0)
    throw CorruptInput(idx_name(path) + ": bad magic " + hex32(magic) +
                       ": an IDX file starts 0x0000TTNN, TT the type (08, 09, 0B, 0C, 0D, 0E) and NN >= 1 "
                       "dimensions (images are 0x00000803)");
  if (dims == 1)
    throw CorruptInput(idx_name(path) + ": magic " + hex32(magic) + " is a label file (1 dimension: one " +
                       type_name(type_) + " per item), not rows; pass the images file (0x00000803)");
  read_exactly(4 * static_cast<std::size_t>(dims), "the header");
  count_ = load_be32(buffer_.data());
  std::uint64_t dimension = 1;
  for (unsigned d = 1; d < dims; ++d) {
    shape_.push_back(load_be32(buffer_.data() + 4 * d));
    dimension *= shape_.back();
    if (dimension > INT_MAX / value_bytes_)
      throw CorruptInput(idx_name(path) + ": an item of more than " + std::to_string(INT_MAX / value_bytes_) +
                         " values is over this reader's limit (corrupt header?)");
  }
  if (dimension == 0) throw CorruptInput(idx_name(path) + ": the header gives items of 0 values (a size is 0)");
  dimension_ = static_cast<Eigen::Index>(dimension);
  header_bytes_ = 4 + 4 * static_cast<std::uint64_t>(dims);
  // count < 2^32 and an item < 2^31 bytes: the product fits in 64 bits.
  expected_bytes_ = header_bytes_ + count_ * dimension * value_bytes_;

  if (!gzipped_ && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) != expected_bytes_) {
    const auto actual = static_cast<std::uint64_t>(st.st_size);
    std::ostringstream msg;
    msg << idx_name(path) << ": " << (actual < expected_bytes_ ? "short file" : "trailing bytes") << ": " << actual
        << " bytes, expected " << expected_bytes_ << " (" << header_bytes_ << "-byte header + " << count_
        << " items × " << dimension_ << " values × " << value_bytes_ << " byte" << (value_bytes_ > 1 ? "s" : "")
        << ")";
    throw CorruptInput(msg.str());
  }
}

IdxRowReader::~IdxRowReader() = default;

std::string IdxRowReader::gzip_problem() const {
  int errnum = Z_OK;
  const char* text = gzerror(impl_->file, &errnum);
  if (errnum == Z_OK) return "";
  std::string message = text ? text : "";
  // zlib prefixes its messages with the path, which ours already name.
  const std::string prefix = path_ + ": ";
  if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  switch (errnum) {
    case Z_BUF_ERROR: return "gzip stream truncated (" + message + ")";
    case Z_DATA_ERROR: return "gzip data corrupt, CRC mismatch or bad compressed data (" + message + ")";
    case Z_ERRNO: return std::string("read error: ") + std::strerror(errno);
    default: return "gzip error (" + message + ")";
  }
}

void IdxRowReader::read_exactly(std::size_t bytes, const char* what, std::uint64_t row) {
  // The buffer grows with the data actually read, not to `bytes` up front: a corrupt header can
  // declare a 2 GiB item in a file of a few bytes (gzipped files have no size to check against),
  // and allocating it first was a fuzzing finding. Doubling keeps the copies amortised O(bytes).
  constexpr std::size_t kFirstChunk = std::size_t{1} << 20;
  if (buffer_.size() < std::min(bytes, kFirstChunk)) buffer_.resize(std::min(bytes, kFirstChunk));
  std::size_t total = 0;
  const std::uint64_t start = offset_;
  auto where = [&] {
 return idx_name(path_) + ": " + (what ? std::string(what) : "row " + std::to_string(row)) + " at " + (gzipped_ ? "uncompressed " : "") + "byte offset " +
           std::to_string(start);
  };
  while (total < bytes) {
    if (total == buffer_.size()) buffer_.resize(std::min(bytes, 2 * buffer_.size()));
    const std::size_t room = std::min(bytes, buffer_.size()) - total;
    const int n = gzread(impl_->file, buffer_.data() + total, static_cast<unsigned>(room));
    if (n < 0) throw CorruptInput(where() + ": " + gzip_problem());
    if (n == 0) break;
    total += static_cast<std::size_t>(n);
  }
  offset_ += total;
  if (total == bytes) return;
  const std::string problem = gzip_problem();
  if (!problem.empty()) throw CorruptInput(where() + ": " + problem);
  std::ostringstream msg;
  msg << where() << ": short file: the " << (gzipped_ ? "uncompressed data ends" : "file ends") << " after " << offset_
      << " bytes, expected ";
  if (expected_bytes_ != 0)
    msg << expected_bytes_ << " (" << header_bytes_ << "-byte header + " << count_ << " items × " << dimension_
        << " values × " << value_bytes_ << " byte" << (value_bytes_ > 1 ? "s" : "") << ")";
  else
    msg << "at least " << start + bytes << " for the header";
  throw CorruptInput(msg.str());
}

void IdxRowReader::check_end() {
  // Reading on makes zlib check the gzip trailer (CRC, length) and shows trailing data.
  unsigned char extra = 0;
  const int n = gzread(impl_->file, &extra, 1);
  const std::string where = idx_name(path_) + ": after the last row (" + std::to_string(count_) + " items) at " +
                            (gzipped_ ? "uncompressed " : "") + "byte offset " + std::to_string(offset_);
  if (n > 0) throw CorruptInput(where + ": trailing data past the " + std::to_string(count_) + " items the header declares");
  const std::string problem = gzip_problem();
  if (n < 0 || !problem.empty()) throw CorruptInput(where + ": " + problem);
  finished_ = true;
}

void IdxRowReader::verify_rest() {
  if (!gzipped_ || finished_) return;
  const std::size_t row_bytes = static_cast<std::size_t>(dimension_) * value_bytes_;
  try {
    // Row by row, so that an error names the row it falls in, as next() would; the copy into buffer_
    // costs little beside the inflating.
    while (row_index_ < count_) {
      read_exactly(row_bytes, nullptr, row_index_);
      ++row_index_;
    }
    check_end();
  } catch (const CorruptInput& e) {
    throw CorruptInput(std::string(e.what()) + " (found verifying the rest of the input after " +
                       std::to_string(returned_) + " rows read)");
  }
}

bool IdxRowReader::next(RowRecord& out) {
  if (finished_) return false;
  if (row_index_ == count_) {
    check_end();
    return false;
  }
  const std::size_t row_bytes = static_cast<std::size_t>(dimension_) * value_bytes_;
  read_exactly(row_bytes, nullptr, row_index_);
  out.dense.resize(dimension_);
  const unsigned char* in = buffer_.data();
  double* values = out.dense.data();
  switch (type_) {
    case 0x08:
      decode(in, dimension_, 1, scale_, values, [](const unsigned char* p) { return double(*p); });
      break;
    case 0x09:
      decode(in, dimension_, 1, scale_, values, [](const unsigned char* p) { return double(std::int8_t(*p)); });
      break;
    case 0x0B:
      decode(in, dimension_, 2, scale_, values,
             [](const unsigned char* p) { return double(std::int16_t(std::uint16_t((p[0] << 8) | p[1]))); });
      break;
    case 0x0C:
      decode(in, dimension_, 4, scale_, values,
             [](const unsigned char* p) { return double(std::int32_t(load_be32(p))); });
      break;
    case 0x0D:
      decode(in, dimension_, 4, scale_, values,
             [](const unsigned char* p) { return double(std::bit_cast<float>(load_be32(p))); });
      break;
    default:  // 0x0E, the constructor admitted no other
      decode(in, dimension_, 8, scale_, values,
             [](const unsigned char* p) { return std::bit_cast<double>(load_be64(p)); });
      break;
  }
  out.set_dense_position(row_index_++, 0);
  ++returned_;
  return true;
}

}  // namespace dpstream::io
