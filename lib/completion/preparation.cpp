#include "dpstream/completion/preparation.hpp"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <cstdio>
#include <memory>
#include <unordered_map>
#include <utility>

#include "dpstream/base/errors.hpp"
#include "dpstream/io/line_reader.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::completion {

using Eigen::Index;

namespace {

std::string trimmed(const std::string& line) {
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

// The first field: up to a comma, tab or space.
std::string first_field(const std::string& line) { return trimmed(line.substr(0, line.find_first_of(",\t "))); }

bool parse_id(const std::string& text, std::int64_t& id) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, id);
  return ec == std::errc() && ptr == end && !text.empty();
}

void put_le(unsigned char* out, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) out[k] = static_cast<unsigned char>(v >> (8 * k));
}

}  // namespace

std::vector<std::int64_t> read_item_catalogue(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rbe"), &std::fclose);
  if (!file) throw CorruptInput("catalogue " + path + ": cannot open: " + std::strerror(errno));
  io::LineReader lines(file.get(), "catalogue " + path);  // a line at most max_line_bytes() long
  std::vector<std::int64_t> ids;
  std::unordered_map<std::int64_t, std::uint64_t> line_of;
  std::string_view view;
  bool first_data_line = true;
  while (lines.next(view)) {
    const std::uint64_t number = lines.line_number();
    std::string line(view);
    const std::string text = trimmed(line);
    if (text.empty() || text[0] == '#') continue;
    const std::string field = first_field(text);
    std::int64_t id = 0;
    if (!parse_id(field, id)) {
      if (first_data_line) {  // a header ("movieId,title,genres")
        first_data_line = false;
        continue;
      }
      throw CorruptInput(path + ":" + std::to_string(number) + ": '" + base::printable(field) + "' is not an item id (an integer)");
    }
    first_data_line = false;
    const auto [it, fresh] = line_of.emplace(id, number);
    if (!fresh)
      throw CorruptInput(path + ":" + std::to_string(number) + ": item " + std::to_string(id) +
                         " is listed twice (first on line " + std::to_string(it->second) + ")");
    ids.push_back(id);
  }
  if (ids.empty()) throw CorruptInput("catalogue " + path + ": no item id in the file");
  return ids;
}

CataloguedRatings restrict_to_catalogue(const RatingsTable& table, const std::vector<std::int64_t>& catalogue) {
  CataloguedRatings out;
  RatingsTable& t = out.table;
  t.user_ids = table.user_ids;
  t.user_index_of = table.user_index_of;
  t.item_ids = catalogue;
  for (std::size_t j = 0; j < catalogue.size(); ++j)
    if (!t.item_index_of.emplace(catalogue[j], static_cast<Index>(j)).second)
      throw InvalidParameter("restrict_to_catalogue: item " + std::to_string(catalogue[j]) + " is listed twice");
  t.lines = table.lines;
  t.skipped = table.skipped;
  t.first_skip_reason = table.first_skip_reason;
  const bool timed = !table.timestamps.empty() && table.timestamps.size() == table.ratings.size();
  for (std::size_t k = 0; k < table.ratings.size(); ++k) {
    const Rating& r = table.ratings[k];
    if (r.item < 0 || r.item >= table.items())
      throw InvalidParameter("restrict_to_catalogue: rating " + std::to_string(k) + " has item index " +
                             std::to_string(r.item) + " outside the table's " + std::to_string(table.items()));
    const auto found = t.item_index_of.find(table.item_ids[static_cast<std::size_t>(r.item)]);
    if (found == t.item_index_of.end()) {
      ++out.dropped;
      continue;
    }
    t.ratings.push_back({r.user, found->second, r.value});
    if (timed) t.timestamps.push_back(table.timestamps[k]);
  }
  return out;
}

double rating_draw(RatingDraw domain, std::uint64_t seed, std::int64_t user_id, std::int64_t item_id) {
  static_assert(crypto_shorthash_KEYBYTES == 16 && crypto_shorthash_BYTES == 8);
  std::array<unsigned char, crypto_shorthash_KEYBYTES> key{};
  put_le(key.data(), seed);
  put_le(key.data() + 8, static_cast<std::uint64_t>(domain));
  std::array<unsigned char, 16> message{};
  put_le(message.data(), static_cast<std::uint64_t>(user_id));
  put_le(message.data() + 8, static_cast<std::uint64_t>(item_id));
  std::array<unsigned char, crypto_shorthash_BYTES> hash{};
  crypto_shorthash(hash.data(), message.data(), message.size(), key.data());
  std::uint64_t h = 0;
  for (int k = 7; k >= 0; --k) h = (h << 8) | hash[static_cast<std::size_t>(k)];
  return static_cast<double>(h >> 11) * 0x1p-53;
}

namespace {

std::pair<std::int64_t, std::int64_t> ids_of(const RatingsTable& table, const Rating& r, const char* what, std::size_t k) {
  if (r.user < 0 || r.user >= table.users() || r.item < 0 || r.item >= table.items())
    throw InvalidParameter(std::string(what) + ": rating " + std::to_string(k) + " has indices (" +
                           std::to_string(r.user) + ", " + std::to_string(r.item) + ") outside the table's " +
                           std::to_string(table.users()) + " users x " + std::to_string(table.items()) + " items");
  return {table.user_ids[static_cast<std::size_t>(r.user)], table.item_ids[static_cast<std::size_t>(r.item)]};
}

}  // namespace

RatingsSplit split_ratings_per_user(const RatingsTable& table, const std::vector<Rating>& ratings,
                                    double test_fraction, std::uint64_t seed) {
  if (!(test_fraction >= 0.0 && test_fraction < 1.0))
    throw InvalidParameter("split_ratings_per_user: test_fraction must be in [0, 1), got " +
                           base::format_value(test_fraction));
  RatingsSplit split;
  for (std::size_t k = 0; k < ratings.size(); ++k) {
    const auto [user, item] = ids_of(table, ratings[k], "split_ratings_per_user", k);
    (rating_draw(RatingDraw::split, seed, user, item) < test_fraction ? split.test : split.train).push_back(ratings[k]);
  }
  return split;
}

CappedRatings cap_ratings_per_user_locally(const RatingsTable& table, const std::vector<Rating>& ratings,
                                           Index max_per_user, std::uint64_t seed) {
  constexpr const char* what = "cap_ratings_per_user_locally";
  if (max_per_user < 1)
    throw InvalidParameter(std::string(what) + ": max_per_user must be >= 1, got " + std::to_string(max_per_user));
  // Each user's ratings as (draw, position), from her ids alone.
  std::vector<std::vector<std::pair<double, std::size_t>>> by_user(static_cast<std::size_t>(table.users()));
  for (std::size_t k = 0; k < ratings.size(); ++k) {
    const auto [user, item] = ids_of(table, ratings[k], what, k);
    by_user[static_cast<std::size_t>(ratings[k].user)].emplace_back(rating_draw(RatingDraw::cap, seed, user, item), k);
  }
  const auto cap = static_cast<std::size_t>(max_per_user);
  std::vector<bool> keep(ratings.size(), true);
  CappedRatings out;
  for (auto& own : by_user) {
    if (own.size() <= cap) continue;
    std::nth_element(own.begin(), own.begin() + static_cast<std::ptrdiff_t>(cap), own.end());
    for (std::size_t k = cap; k < own.size(); ++k) keep[own[k].second] = false;
    out.dropped += own.size() - cap;
    ++out.users_capped;
  }
  out.kept.reserve(ratings.size() - out.dropped);
  for (std::size_t k = 0; k < ratings.size(); ++k)
    if (keep[k]) out.kept.push_back(ratings[k]);
  return out;
}

}  // namespace dpstream::completion
