#include "dpstream/completion/ratings_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <string_view>
#include <system_error>
#include <utility>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/text.hpp"
#include "dpstream/io/line_reader.hpp"
#include "dpstream/base/memory_limit.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/io/row_log.hpp"
#include "sampling.hpp"

namespace dpstream::completion {

using Eigen::Index;
using IdMap = std::unordered_map<std::int64_t, Index>;

const char* to_string(RatingsFormat format) noexcept {
  switch (format) {
    case RatingsFormat::csv: return "csv";
    case RatingsFormat::tsv: return "tsv";
    case RatingsFormat::double_colon: return "colons";
    case RatingsFormat::row_log: return "pb";
    case RatingsFormat::automatic: break;
  }
  return "auto";
}

RatingsFormat parse_ratings_format(const std::string& text) {
  for (const RatingsFormat format : {RatingsFormat::automatic, RatingsFormat::csv, RatingsFormat::tsv,
                                     RatingsFormat::double_colon, RatingsFormat::row_log})
    if (text == to_string(format)) return format;
  throw InvalidParameter("ratings format \"" + text + "\" is not one of auto, csv, tsv, colons, pb");
}

namespace {

std::optional<Index> look_up(const IdMap& index_of, const std::vector<std::int64_t>& ids, std::int64_t id) {
  if (index_of.size() == ids.size()) {
    const auto found = index_of.find(id);
    if (found == index_of.end()) return std::nullopt;
    return found->second;
  }
  const auto found = std::find(ids.begin(), ids.end(), id);  // a table filled by hand: no map
  if (found == ids.end()) return std::nullopt;
  return static_cast<Index>(found - ids.begin());
}

IdMap index_of(const std::vector<std::int64_t>& ids) {
  IdMap map;
  map.reserve(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) map.emplace(ids[k], static_cast<Index>(k));
  return map;
}

}  // namespace

std::optional<Index> RatingsTable::user_index(std::int64_t id) const { return look_up(user_index_of, user_ids, id); }
std::optional<Index> RatingsTable::item_index(std::int64_t id) const { return look_up(item_index_of, item_ids, id); }

// ---------------------------------------------------------------------------------------------------
// Reading

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Which kept rating holds a (user, item) pair: open addressing with linear probing over 8-byte slots
// (a hash tag and the rating's index; the pair itself is read back from the ratings to confirm), so a
// look-up costs one cache miss and no allocation: with the positions, 24 bytes a rating at load ≤ ½,
// where an unordered_map spends ~40 in nodes and buckets for no gain in speed.
class PairIndex {
 public:
  // Room for `expected` pairs without rebuilding (load ≤ ½).
  void reserve(const std::vector<Rating>& ratings, std::size_t expected) {
    const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(2 * expected, 16));
    if (capacity > slots_.size()) rebuild(ratings, capacity);
  }

  // The index of the rating in `ratings` with this pair; else nullopt, and the pair is recorded as
  // the rating the caller appends next (index ratings.size()).
  std::optional<std::size_t> find_or_add(const std::vector<Rating>& ratings, Index user, Index item) {
    if (2 * (ratings.size() + 1) > slots_.size()) rebuild(ratings, std::max<std::size_t>(2 * slots_.size(), 16));
    const std::uint64_t hash = mix(user, item);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
      const std::uint64_t slot = slots_[at];
      if (slot == 0) {
        slots_[at] = tag(hash) | (ratings.size() + 1);
        return std::nullopt;
      }
      const std::size_t index = (slot & kIndexBits) - 1;
      if ((slot & ~kIndexBits) == tag(hash) && ratings[index].user == user && ratings[index].item == item) return index;
    }
  }

  static constexpr std::uint64_t kIndexBits = 0xFFFFFFFF;  // index + 1 in the low half; 0 = empty slot

 private:
  // MurmurHash3's finalizer over the packed pair: every bit depends on both halves. (A single
  // Fibonacci multiply does not: its low word is ≈ 2^31, so users two apart would collide.)
  static std::uint64_t mix(Index user, Index item) {
    std::uint64_t h = static_cast<std::uint64_t>(user) << 32 ^ static_cast<std::uint64_t>(item);
    h = (h ^ (h >> 33)) * 0xFF51AFD7ED558CCDULL;
    h = (h ^ (h >> 33)) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 33);
  }
  static std::uint64_t tag(std::uint64_t hash) { return hash & ~kIndexBits; }

  void rebuild(const std::vector<Rating>& ratings, std::size_t capacity) {
    slots_.assign(capacity, 0);
    const std::size_t mask = capacity - 1;
    for (std::size_t k = 0; k < ratings.size(); ++k) {
      const std::uint64_t hash = mix(ratings[k].user, ratings[k].item);
      std::size_t at = hash & mask;
      while (slots_[at] != 0) at = (at + 1) & mask;
      slots_[at] = tag(hash) | (k + 1);
    }
  }

  std::vector<std::uint64_t> slots_;
};

// Collects ratings from any format: dense indices in first-seen order, duplicate detection, and the
// malformed-input policy. Positions are 1-based lines ("PATH:LINE") or 0-based rows ("PATH: row N").
class TableBuilder {
 public:
  TableBuilder(const std::string& path, bool skip_malformed, bool by_row)
      : path_(path), skip_malformed_(skip_malformed), by_row_(by_row) {}

  void reserve(std::size_t expected_ratings) {
    // A rating, its timestamp, its position and its slot in the pair index: ~64 bytes, twice that
    // with the vectors' growth. Refused (ResourceLimit) before the file's estimated size is reserved.
    require_memory("the ratings of " + path_ + " (about " + std::to_string(expected_ratings) + " lines)",
                   128.0 * static_cast<double>(expected_ratings));
    table_.ratings.reserve(expected_ratings);
    table_.timestamps.reserve(expected_ratings);
    position_of_rating_.reserve(expected_ratings);
    pair_index_.reserve(table_.ratings, expected_ratings);
  }

  std::string where(std::uint64_t position) const {
    return by_row_ ? path_ + ": row " + std::to_string(position) : path_ + ":" + std::to_string(position);
  }

  // Throws CorruptInput "where: what", or counts it under skip_malformed.
  void malformed(std::uint64_t position, const std::string& what) {
    const std::string message = where(position) + ": " + what;
    if (!skip_malformed_) throw CorruptInput(message);
    count_skipped(message, 1);
  }

  // Skips someone else counted (the row log reader's), `reason` being the first of them.
  void count_skipped(const std::string& reason, std::uint64_t count) {
    if (table_.skipped == 0) table_.first_skip_reason = reason;
    table_.skipped += count;
    table_.lines += count;
  }

  void add(std::int64_t user_id, std::int64_t item_id, double value, std::uint64_t position,
           std::optional<std::int64_t> timestamp = std::nullopt) {
    const Index user = dense_index(table_.user_index_of, table_.user_ids, user_id);
    const Index item = dense_index(table_.item_index_of, table_.item_ids, item_id);
    if (const std::optional<std::size_t> earlier = pair_index_.find_or_add(table_.ratings, user, item)) {
      const char* unit = by_row_ ? "rows " : "lines ";
      malformed(position, "user " + std::to_string(user_id) + ", item " + std::to_string(item_id) + " rated twice: " +
                              unit + std::to_string(position_of_rating_[*earlier]) + " and " + std::to_string(position));
      return;
    }
    if (table_.ratings.size() >= PairIndex::kIndexBits - 1)
      throw CorruptInput(path_ + ": more than " + std::to_string(PairIndex::kIndexBits - 1) + " ratings");
    table_.ratings.push_back({user, item, value});
    if (timestamp) table_.timestamps.push_back(*timestamp);
    else untimed_ = true;
    position_of_rating_.push_back(position);
    ++table_.lines;
  }

  // The table; CorruptInput naming the path when it holds no rating (`nothing_read` says why not,
  // when nothing was skipped either).
  RatingsTable finish(const std::string& nothing_read) {
    if (table_.ratings.empty()) {
      if (table_.skipped > 0)
        throw CorruptInput(path_ + ": no rating: all " + std::to_string(table_.skipped) + " data " +
                           (by_row_ ? "entries or rows" : "lines") + " were malformed (first: " +
                           table_.first_skip_reason + ")");
      throw CorruptInput(path_ + ": no rating (" + nothing_read + ")");
    }
    if (untimed_) table_.timestamps.clear();  // kept only when every rating had one
    return std::move(table_);
  }

 private:
  static Index dense_index(IdMap& index_of, std::vector<std::int64_t>& ids, std::int64_t id) {
    const auto [found, inserted] = index_of.try_emplace(id, static_cast<Index>(ids.size()));
    if (inserted) ids.push_back(id);
    return found->second;
  }

  const std::string& path_;
  bool skip_malformed_;
  bool by_row_;
  RatingsTable table_;
  PairIndex pair_index_;
  std::vector<std::uint64_t> position_of_rating_;  // line or row of each kept rating, for duplicates
  bool untimed_ = false;                           // a kept rating without a timestamp
};

// A row log opens with a length-delimited header whose first field is the magic: protobuf writers
// emit fields in field-number order, so the bytes are varint length, 0x0A (field 1, bytes), the
// magic's length, the magic. An unreadable file is not one; the text reader then says why.
bool looks_like_row_log(const std::string& path) {
  std::array<char, 32> prefix{};
  std::size_t got = 0;
  if (std::FILE* file = std::fopen(path.c_str(), "rbe")) {
    got = std::fread(prefix.data(), 1, prefix.size(), file);
    std::fclose(file);
  }
  std::size_t varint_bytes = 0;
  while (varint_bytes < got && varint_bytes < 5 && (prefix[varint_bytes] & 0x80) != 0) ++varint_bytes;
  ++varint_bytes;
  const std::string_view magic = io::kRowLogMagic;
  const std::string expected = std::string{'\x0a', static_cast<char>(magic.size())} + std::string(magic);
  return got >= varint_bytes + expected.size() &&
         std::string_view(prefix.data() + varint_bytes, expected.size()) == expected;
}

RatingsTable read_row_log(const std::string& path, bool skip_malformed) {
  // Ratings are used sparse only: no dense copy, so a log of any item count reads in O(ratings).
  io::RowLogReader reader(path, skip_malformed, io::SparseRows::keep_sparse);
  TableBuilder builder(path, skip_malformed, /*by_row=*/true);
  io::RowRecord record;
  std::uint64_t reader_skips = 0;
  for (;;) {
    const bool more = reader.next(record);
    if (reader.skipped() != reader_skips) {
      builder.count_skipped(reader.first_skip_reason(), reader.skipped() - reader_skips);
      reader_skips = reader.skipped();
    }
    if (!more) break;
    const std::uint64_t row = record.row_index;
    if (!record.sparse)
      throw CorruptInput(builder.where(row) + ": a dense row (" + std::to_string(record.dense.size()) +
                         " values) is not a set of ratings; a ratings log holds sparse rows");
    if (record.id && *record.id > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      builder.malformed(row, "user id " + std::to_string(*record.id) + " is outside int64");
      continue;
    }
    const auto user = static_cast<std::int64_t>(record.id.value_or(row));
    for (Index k = 0; k < record.indices.size(); ++k) {
      if (!std::isfinite(record.values[k])) {
        builder.malformed(row, "item " + std::to_string(record.indices[k]) + ": rating " +
                                   base::format_value(record.values[k]) + " is not finite");
        continue;
      }
      builder.add(user, record.indices[k], record.values[k], row);
    }
  }
  return builder.finish(std::to_string(reader.rows_returned()) + " rows, none with entries");
}

// ---- Text formats

constexpr std::size_t kMaxFields = 4;  // user, item, rating, timestamp
constexpr const char* kFieldNames[kMaxFields] = {"user", "item", "rating", "timestamp"};

// The fields of one line; past the fourth they are only counted (for the error message).
struct Fields {
  std::array<std::string_view, kMaxFields> text;
  std::size_t count = 0;
  void push(std::string_view field) {
    if (count < kMaxFields) text[count] = field;
    ++count;
  }
};

// `line` is trimmed. tsv: fields are runs of non-blanks; csv / double_colon: split at the separator.
void split_fields(std::string_view line, RatingsFormat format, Fields& fields) {
  fields.count = 0;
  if (format == RatingsFormat::tsv) {
    for (std::size_t at = 0; at < line.size();) {
      const std::size_t start = at;
      while (at < line.size() && !is_blank(line[at])) ++at;
      fields.push(line.substr(start, at - start));
      while (at < line.size() && is_blank(line[at])) ++at;
    }
    return;
  }
  const std::string_view separator = format == RatingsFormat::csv ? "," : "::";
  for (;;) {
    const std::size_t at = line.find(separator);
    fields.push(trim(line.substr(0, at)));
    if (at == std::string_view::npos) return;
    line.remove_prefix(at + separator.size());
  }
}

bool parse_double(std::string_view text, double& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || stop != end) return false;
  // from_chars leaves the value alone out of range; strtod gives ±inf or the underflowed value.
  if (error == std::errc::result_out_of_range) value = std::strtod(std::string(text).c_str(), nullptr);
  return error == std::errc() || error == std::errc::result_out_of_range;
}

// "" when `text` is an int64, else what is wrong with it.
std::string parse_integer(std::string_view text, std::size_t field, std::int64_t& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (!text.empty() && stop == end && error == std::errc()) return {};
  const std::string problem = error == std::errc::result_out_of_range ? " is outside int64" : " is not an integer";
  return std::string(kFieldNames[field]) + " " + base::quote_input(text) + problem;
}

bool none_numeric(const Fields& fields) {
  double ignored = 0;
  for (std::size_t k = 0; k < std::min(fields.count, kMaxFields); ++k)
    if (parse_double(fields.text[k], ignored)) return false;
  return true;
}

// "" when the fields make a rating (stored in user, item, value), else what is wrong.
std::string parse_rating(const Fields& fields, RatingsFormat format, std::int64_t& user, std::int64_t& item,
                         double& value, std::optional<std::int64_t>& timestamp) {
  if (fields.count != 3 && fields.count != 4) {
    const char* separator = format == RatingsFormat::csv ? "','" : format == RatingsFormat::tsv ? "spaces/tabs" : "'::'";
    return "expected 3 or 4 fields (user, item, rating[, timestamp]) separated by " + std::string(separator) +
           ", got " + std::to_string(fields.count);
  }
  std::string problem = parse_integer(fields.text[0], 0, user);
  if (problem.empty()) problem = parse_integer(fields.text[1], 1, item);
  if (!problem.empty()) return problem;
  if (!parse_double(fields.text[2], value)) return "rating " + base::quote_input(fields.text[2]) + " is not a number";
  if (!std::isfinite(value))
    return "rating " + base::quote_input(fields.text[2]) + " is not finite (" + base::format_value(value) + ")";
  timestamp.reset();
  if (fields.count != 4) return std::string();
  std::int64_t seconds = 0;
  std::string bad = parse_integer(fields.text[3], 3, seconds);
  if (bad.empty()) timestamp = seconds;
  return bad;
}

// Streams the file through one reused buffer (a whole 10M-line file would cost its size in memory,
// and fresh pages are what reading spends most of its time on). Calls `on_start(lines)` once, with
// the line count estimated from the first chunk, then `on_line(line_number, trimmed line)` for every
// line that is neither blank nor a comment. Returns the number of lines.
template <class OnStart, class OnLine>
std::uint64_t for_each_data_line(const std::string& path, OnStart&& on_start, OnLine&& on_line) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw CorruptInput(path + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  const std::uint64_t file_size = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;

  // A small file fits whole (one byte over, so its end is seen without growing); a big one streams.
  constexpr std::uint64_t kChunk = std::uint64_t{4} << 20;
  std::vector<char> buffer(static_cast<std::size_t>(file_size ? std::min(file_size + 1, kChunk) : kChunk));
  std::size_t filled = 0;  // bytes in the buffer: the unfinished line carried over, then new ones
  const std::size_t max_line = io::max_line_bytes();  // a file without line breaks stops there
  std::uint64_t bytes_read = 0, line_number = 0;
  for (bool first_chunk = true;; first_chunk = false) {
    if (filled == buffer.size()) {  // a line longer than the buffer: grown up to the bound, no further
      if (buffer.size() > max_line) io::refuse_long_line(path, line_number + 1, max_line);
      buffer.resize(std::min<std::size_t>(2 * buffer.size(), max_line + 1));
    }
    ssize_t n = 0;
    do n = ::read(fd, buffer.data() + filled, buffer.size() - filled);
    while (n < 0 && errno == EINTR);
    if (n < 0) throw CorruptInput(path + ": cannot read: " + std::strerror(errno));
    const bool at_end = n == 0;
    filled += static_cast<std::size_t>(n);
    bytes_read += static_cast<std::uint64_t>(n);
    if (bytes_read == 0) throw CorruptInput(path + ": empty file (0 bytes)");
    if (first_chunk) {
      // A byte-order mark, by the line reader's rule (io::without_byte_order_mark).
      const std::string_view start(buffer.data(), filled);
      const std::size_t mark = start.size() - io::without_byte_order_mark(start, path).size();
      std::memmove(buffer.data(), buffer.data() + mark, filled - mark);
      filled -= mark;
      const auto newlines = static_cast<std::uint64_t>(std::count(buffer.data(), buffer.data() + filled, '\n'));
      on_start(static_cast<std::size_t>(std::max(file_size, bytes_read) * (newlines + 1) / bytes_read));
    }
    std::string_view rest(buffer.data(), filled);
    for (;;) {
      const std::size_t end = rest.find('\n');
      if (end == std::string_view::npos && !(at_end && !rest.empty())) break;
      const std::string_view line = trim(rest.substr(0, end));
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
      ++line_number;
      if (!line.empty() && line.front() != '#') on_line(line_number, line);
    }
    if (at_end) return line_number;
    std::memmove(buffer.data(), rest.data(), rest.size());
    filled = rest.size();
  }
}

// The first data line decides.
RatingsFormat detect_text_format(std::string_view line) {
  if (line.find("::") != std::string_view::npos) return RatingsFormat::double_colon;
  if (line.find(',') != std::string_view::npos) return RatingsFormat::csv;
  return RatingsFormat::tsv;
}

RatingsTable read_text(const std::string& path, RatingsFormat format, bool skip_malformed) {
  TableBuilder builder(path, skip_malformed, /*by_row=*/false);
  Fields fields;
  bool first = true;
  std::int64_t user = 0, item = 0;
  double value = 0;
  std::optional<std::int64_t> timestamp;
  const std::uint64_t lines = for_each_data_line(
      path, [&](std::size_t expected_lines) { builder.reserve(expected_lines); },
      [&](std::uint64_t line_number, std::string_view line) {
        if (format == RatingsFormat::automatic) format = detect_text_format(line);
        split_fields(line, format, fields);
        if (std::exchange(first, false) && format == RatingsFormat::csv && none_numeric(fields)) return;  // header
        std::string problem = parse_rating(fields, format, user, item, value, timestamp);
        if (problem.empty()) return builder.add(user, item, value, line_number, timestamp);
        if ((fields.count == 3 || fields.count == 4) && none_numeric(fields))
          problem += format == RatingsFormat::csv ? " (a header is allowed only as the first non-comment line)"
                                                  : " (this format has no header line)";
        builder.malformed(line_number, problem);
      });
  return builder.finish(std::to_string(lines) + " lines, all blank, comments or a header");
}

}  // namespace

RatingsTable read_ratings(const std::string& path, const ReadRatingsOptions& options) {
  const bool row_log = options.format == RatingsFormat::row_log ||
                       (options.format == RatingsFormat::automatic && looks_like_row_log(path));
  return row_log ? read_row_log(path, options.skip_malformed) : read_text(path, options.format, options.skip_malformed);
}

// ---------------------------------------------------------------------------------------------------
// Preparation

namespace {

void require_item_indices(const RatingsTable& table, const char* what) {
  for (std::size_t k = 0; k < table.ratings.size(); ++k)
    if (table.ratings[k].item < 0 || table.ratings[k].item >= table.items())
      throw InvalidParameter(std::string(what) + ": rating " + std::to_string(k) + " has item index " +
                             std::to_string(table.ratings[k].item) + ", outside [0, " + std::to_string(table.items()) +
                             ")");
}

// The table restricted to `kept` (old dense item indices, in their new order); users untouched.
RatingsTable with_items(const RatingsTable& table, const std::vector<Index>& kept) {
  RatingsTable out;
  out.user_ids = table.user_ids;
  out.user_index_of = table.user_index_of;
  out.lines = table.lines;
  out.skipped = table.skipped;
  out.first_skip_reason = table.first_skip_reason;
  std::vector<Index> new_index(static_cast<std::size_t>(table.items()), -1);
  for (std::size_t k = 0; k < kept.size(); ++k) {
    new_index[static_cast<std::size_t>(kept[k])] = static_cast<Index>(k);
    out.item_ids.push_back(table.item_ids[static_cast<std::size_t>(kept[k])]);
  }
  out.item_index_of = index_of(out.item_ids);
  const bool timed = table.timestamps.size() == table.ratings.size();
  for (std::size_t k = 0; k < table.ratings.size(); ++k) {
    const Rating& r = table.ratings[k];
    const Index item = new_index[static_cast<std::size_t>(r.item)];
    if (item < 0) continue;
    out.ratings.push_back({r.user, item, r.value});
    if (timed) out.timestamps.push_back(table.timestamps[k]);
  }
  return out;
}

}  // namespace

RatingsTable keep_top_items(const RatingsTable& table, Index count) {
  constexpr const char* what = "keep_top_items";
  if (count < 1) throw InvalidParameter(std::string(what) + ": count must be >= 1, got " + std::to_string(count));
  require_item_indices(table, what);
  std::vector<Index> ratings_of(static_cast<std::size_t>(table.items()), 0);
  for (const Rating& r : table.ratings) ++ratings_of[static_cast<std::size_t>(r.item)];
  std::vector<Index> order(static_cast<std::size_t>(table.items()));
  std::iota(order.begin(), order.end(), Index{0});
  // Stable: among equal counts the smaller dense index stays first.
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) {
    return ratings_of[static_cast<std::size_t>(a)] > ratings_of[static_cast<std::size_t>(b)];
  });
  order.resize(std::min(order.size(), static_cast<std::size_t>(count)));
  return with_items(table, order);
}

RatingsTable keep_items(const RatingsTable& table, const std::vector<std::int64_t>& item_ids) {
  constexpr const char* what = "keep_items";
  require_item_indices(table, what);
  std::vector<Index> kept;
  std::vector<bool> listed(static_cast<std::size_t>(table.items()), false);
  for (const std::int64_t id : item_ids) {
    const std::optional<Index> item = table.item_index(id);
    if (!item) throw InvalidParameter(std::string(what) + ": item id " + std::to_string(id) + " is not in the table");
    if (listed[static_cast<std::size_t>(*item)])
      throw InvalidParameter(std::string(what) + ": item id " + std::to_string(id) + " is listed twice");
    listed[static_cast<std::size_t>(*item)] = true;
    kept.push_back(*item);
  }
  return with_items(table, kept);
}

RatingsSplit split_ratings(const std::vector<Rating>& ratings, double test_fraction, std::uint64_t seed) {
  if (!(test_fraction >= 0.0 && test_fraction < 1.0))
    throw InvalidParameter("split_ratings: test_fraction must be in [0, 1), got " + base::format_value(test_fraction));
  const std::size_t n = ratings.size();
  const auto test_count = static_cast<std::size_t>(std::llround(test_fraction * static_cast<double>(n)));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  privacy::SeededNoiseSource source(seed);
  detail::shuffle(order, source);
  std::vector<bool> in_test(n, false);
  for (std::size_t k = 0; k < test_count; ++k) in_test[order[k]] = true;
  RatingsSplit split;
  split.test.reserve(test_count);
  split.train.reserve(n - test_count);
  for (std::size_t k = 0; k < n; ++k) (in_test[k] ? split.test : split.train).push_back(ratings[k]);
  return split;
}

CappedRatings cap_ratings_per_user(const std::vector<Rating>& ratings, Index max_per_user, std::uint64_t seed) {
  constexpr const char* what = "cap_ratings_per_user";
  if (max_per_user < 1)
    throw InvalidParameter(std::string(what) + ": max_per_user must be >= 1, got " + std::to_string(max_per_user));
  const std::size_t n = ratings.size();
  std::size_t users = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (ratings[k].user < 0)
      throw InvalidParameter(std::string(what) + ": rating " + std::to_string(k) + " has user index " +
                             std::to_string(ratings[k].user) + " < 0");
    users = std::max(users, static_cast<std::size_t>(ratings[k].user) + 1);
  }
  // Positions grouped by user (a counting sort: input order within each user).
  std::vector<std::size_t> start(users + 1, 0);
  for (const Rating& r : ratings) ++start[static_cast<std::size_t>(r.user) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::size_t> positions(n);
  std::vector<std::size_t> next = start;
  for (std::size_t k = 0; k < n; ++k) positions[next[static_cast<std::size_t>(ratings[k].user)]++] = k;

  const auto cap = static_cast<std::size_t>(max_per_user);
  privacy::SeededNoiseSource source(seed);
  std::vector<bool> keep(n, true);
  std::vector<std::size_t> own;
  CappedRatings out;
  for (std::size_t u = 0; u < users; ++u) {
    if (start[u + 1] - start[u] <= cap) continue;
    own.assign(positions.begin() + static_cast<std::ptrdiff_t>(start[u]),
               positions.begin() + static_cast<std::ptrdiff_t>(start[u + 1]));
    detail::shuffle(own, source);  // the first ξ of a uniform permutation: a uniform ξ-subset
    for (std::size_t k = cap; k < own.size(); ++k) keep[own[k]] = false;
    out.dropped += own.size() - cap;
    ++out.users_capped;
  }
  out.kept.reserve(n - out.dropped);
  for (std::size_t k = 0; k < n; ++k)
    if (keep[k]) out.kept.push_back(ratings[k]);
  return out;
}

}  // namespace dpstream::completion
