#include "dpstream/base/message_seal.hpp"

#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "dpstream/base/errors.hpp"

namespace dpstream::base {

namespace {

// Field 99, wire type 5 (fixed32): the tag (99 << 3) | 5 = 797 as a varint is 0x9D 0x06.
constexpr std::array<unsigned char, 2> kSealTag = {0x9D, 0x06};
constexpr std::size_t kSealBytes = kSealTag.size() + 4;

std::uint32_t crc_of(const std::string& bytes, std::size_t length) {
  // zlib's crc32 takes a uInt length: feed the data in pieces of at most 1 GiB.
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  for (std::size_t done = 0; done < length;) {
    const std::size_t piece = std::min<std::size_t>(length - done, std::size_t{1} << 30);
    crc = crc32(crc, data + done, static_cast<uInt>(piece));
    done += piece;
  }
  return static_cast<std::uint32_t>(crc);
}

}  // namespace

std::string seal_message(std::string message_bytes) {
  const std::uint32_t crc = crc_of(message_bytes, message_bytes.size());
  message_bytes.append(reinterpret_cast<const char*>(kSealTag.data()), kSealTag.size());
  for (int shift = 0; shift < 32; shift += 8) message_bytes.push_back(static_cast<char>((crc >> shift) & 0xFF));
  return message_bytes;
}

void check_message_seal(const std::string& bytes, const std::string& what) {
  const std::size_t n = bytes.size();
  if (n < kSealBytes || static_cast<unsigned char>(bytes[n - 6]) != kSealTag[0] ||
      static_cast<unsigned char>(bytes[n - 5]) != kSealTag[1])
    throw CorruptInput(what + ": " + std::to_string(n) +
                       " bytes without the CRC-32 trailer (truncated, or not written by this library)");
  std::uint32_t stored = 0;
  for (int i = 0; i < 4; ++i)
    stored |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[n - 4 + i])) << (8 * i);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  const std::uint32_t computed = crc_of(bytes, n - kSealBytes);
  if (computed != stored) {
    std::ostringstream msg;
    msg << what << ": CRC-32 mismatch over " << n << " bytes (stored 0x" << std::hex << stored << ", computed 0x"
        << computed << "): the bytes were damaged";
    throw CorruptInput(msg.str());
  }
#else
  (void)stored;
#endif
}

void refuse_format_version(const std::string& what, std::uint32_t version, std::uint32_t reads) {
  throw CorruptInput(what + ": format_version " + std::to_string(version) + ", this build reads " +
                     std::to_string(reads));
}

void refuse_unparsed(const std::string& what, std::size_t bytes, const std::string& type_name) {
  const std::size_t dot = type_name.rfind('.');
  throw CorruptInput(what + ": " + std::to_string(bytes) + " bytes do not parse: not a " +
                     (dot == std::string::npos ? type_name : type_name.substr(dot + 1)) +
                     " message (truncated, or another file)");
}

std::string read_saved_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorruptInput("checkpoint " + path + ": cannot open: " + std::strerror(errno));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace dpstream::base
