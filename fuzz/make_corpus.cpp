// Writes the seed corpora fuzz/corpus/<target>/ with the library's own writers (RowLogWriter,
// CsvRowWriter, PrivacyAccountant::save, ContinualSum::save, ContinualNoise::save) or,
// for the text and IDX formats, by hand. Every file is a VALID input, under 4 KB.
//
// Not built by scripts/fuzz.sh (the corpus is committed). To regenerate, after a fuzz build:
//   clang++ -std=c++20 -fsanitize=address,undefined -Iinclude -Ibuild-fuzz/lib/proto \
//     $(pkg-config --cflags eigen3 protobuf) fuzz/make_corpus.cpp -Lbuild-fuzz/lib -ldpstream \
//     -Wl,-rpath,$PWD/build-fuzz/lib $(pkg-config --libs protobuf zlib) -o build-fuzz/make_corpus
//   build-fuzz/make_corpus fuzz/corpus
#include <zlib.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "checkpoint_configs.hpp"
#include "continual_sum.pb.h"
#include "dpstream/io/csv_rows.hpp"
#include "dpstream/io/row_log.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace fs = std::filesystem;
using namespace dpstream;

namespace {

fs::path root;

void put(const std::string& target, const std::string& name, const std::string& bytes) {
  const fs::path dir = root / target;
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
  if (bytes.size() >= 4096) std::fprintf(stderr, "warning: %s/%s is %zu bytes\n", target.c_str(), name.c_str(), bytes.size());
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string gzip(const std::string& bytes) {
  const fs::path tmp = fs::temp_directory_path() / "dpstream-make-corpus.gz";
  gzFile f = gzopen(tmp.c_str(), "wb9");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
  std::string out = slurp(tmp);
  fs::remove(tmp);
  return out;
}

void be32(std::string& s, std::uint32_t v) {
  for (int k = 3; k >= 0; --k) s += static_cast<char>((v >> (8 * k)) & 0xff);
}
void be64(std::string& s, std::uint64_t v) {
  for (int k = 7; k >= 0; --k) s += static_cast<char>((v >> (8 * k)) & 0xff);
}

// ---- row logs ----------------------------------------------------------------------------------

std::string row_log(const std::function<void(io::RowLogWriter&)>& fill, Eigen::Index dimension, std::uint64_t count,
                    const std::string& provenance) {
  const fs::path tmp = fs::temp_directory_path() / "dpstream-make-corpus.rowlog";
  {
    io::RowLogHeader h;
    h.dimension = dimension;
    h.count = count;
    h.provenance = provenance;
    h.created_by = "make_corpus";
    io::RowLogWriter w(tmp.string(), h);
    fill(w);
    w.close();
  }
  std::string out = slurp(tmp);
  fs::remove(tmp);
  return out;
}

void row_logs() {
  put("fuzz_row_log", "dense_counted.rowlog", row_log([](io::RowLogWriter& w) {
        w.write_dense(Eigen::Vector3d(1.0, -2.5, 0.0), 7, 1700000000);
        w.write_dense(Eigen::Vector3d(0.5, 0.25, -0.0));
        w.write_dense(Eigen::Vector3d(1e300, -1e-300, 3.0), std::nullopt, -5);
      }, 3, 3, "dense"));
  put("fuzz_row_log", "sparse_uncounted.rowlog", row_log([](io::RowLogWriter& w) {
        w.write_sparse(Eigen::Vector2i(0, 4), Eigen::Vector2d(1.0, 2.0), 1);
        w.write_sparse(Eigen::VectorXi(0), Eigen::VectorXd(0));
        w.write_sparse(Eigen::Vector3i(1, 2, 3), Eigen::Vector3d(-1.0, 0.5, 0.125), 3, 42);
      }, 5, 0, "sparse"));
  put("fuzz_row_log", "mixed_special.rowlog", row_log([](io::RowLogWriter& w) {
        const double payload_nan = std::bit_cast<double>(std::uint64_t{0x7FF8DEADBEEF0001});
        w.write_dense(Eigen::Vector4d(payload_nan, -0.0, std::numeric_limits<double>::infinity(), 1.0));
        w.write_sparse(Eigen::Vector2i(1, 3), Eigen::Vector2d(-std::numeric_limits<double>::infinity(), 2.0), 9);
        w.write_dense(Eigen::Vector4d(1, 2, 3, 4), std::uint64_t{1} << 63, std::numeric_limits<std::int64_t>::min());
      }, 4, 3, "special values"));
  // One user per row, item = column: also a ratings log.
  const std::string ratings = row_log([](io::RowLogWriter& w) {
        w.write_sparse(Eigen::Vector3i(0, 3, 7), Eigen::Vector3d(4.0, 3.5, 1.0), 101);
        w.write_sparse(Eigen::Vector2i(3, 5), Eigen::Vector2d(5.0, 2.0), 102);
        w.write_sparse(Eigen::Vector2i(1, 7), Eigen::Vector2d(3.0, 4.5));
      }, 8, 3, "ratings");
  put("fuzz_row_log", "ratings.rowlog", ratings);
  put("fuzz_ratings", "ratings.rowlog", ratings);
}

// ---- CSV -------------------------------------------------------------------------------------------

void csvs() {
  put("fuzz_csv_rows", "three_lines.csv", "1,2,3\n4.5,-6,7e-3\n0,0,-0\n");
  put("fuzz_csv_rows", "header.csv", "x,y\n# a comment\n\n1.5, 2.5\n+3,-4\r\n");
  put("fuzz_csv_rows", "special.csv", "\"1\",b,c\nnan,inf,-Infinity\n1e400,1e-400,8E0\n 2 ,\t3\t,4\n");
  const fs::path tmp = fs::temp_directory_path() / "dpstream-make-corpus.csv";
  {
    io::CsvRowWriter w(tmp.string(), 3, {"a", "b", "2"});
    w.write(Eigen::Vector3d(0.1, -0.0, 1e-310));
    w.write(Eigen::Vector3d(1.0 / 3.0, 123456789.0, -2.5e-5));
    w.close();
  }
  put("fuzz_csv_rows", "written.csv", slurp(tmp));
  fs::remove(tmp);
}

// ---- IDX ---------------------------------------------------------------------------------------------

void idxs() {
  std::string images;  // 3 items of 2 × 2 unsigned bytes
  be32(images, 0x00000803);
  be32(images, 3);
  be32(images, 2);
  be32(images, 2);
  for (int k = 0; k < 12; ++k) images += static_cast<char>(k * 21);
  put("fuzz_idx_rows", "images_ubyte.idx", images);
  put("fuzz_idx_rows", "images_ubyte.idx.gz", gzip(images));

  std::string doubles;  // 2 items of 3 float64
  be32(doubles, 0x00000E02);
  be32(doubles, 2);
  be32(doubles, 3);
  for (double v : {1.0, -0.0, 0.5, 1e-300, -2.0, 3.25}) be64(doubles, std::bit_cast<std::uint64_t>(v));
  put("fuzz_idx_rows", "float64.idx", doubles);
  put("fuzz_idx_rows", "float64.idx.gz", gzip(doubles));

  std::string shorts;  // 2 items of 1 × 2 int16, one float32 file of 1 item of 2
  be32(shorts, 0x00000B03);
  be32(shorts, 2);
  be32(shorts, 1);
  be32(shorts, 2);
  for (std::uint16_t v : {0x0001, 0xFFFF, 0x8000, 0x7FFF}) {
    shorts += static_cast<char>(v >> 8);
    shorts += static_cast<char>(v & 0xff);
  }
  put("fuzz_idx_rows", "int16.idx", shorts);
  std::string floats;
  be32(floats, 0x00000D02);
  be32(floats, 1);
  be32(floats, 2);
  be32(floats, std::bit_cast<std::uint32_t>(1.5f));
  be32(floats, std::bit_cast<std::uint32_t>(-3.0f));
  put("fuzz_idx_rows", "float32.idx", floats);
  std::string ints;  // signed byte and int32
  be32(ints, 0x00000C02);
  be32(ints, 1);
  be32(ints, 1);
  be32(ints, 0x80000000u);
  put("fuzz_idx_rows", "int32.idx", ints);
}

// ---- ratings -------------------------------------------------------------------------------------------

void ratings() {
  put("fuzz_ratings", "u.data", "196\t242\t3\t881250949\n186\t302\t3\t891717742\n22\t377\t1\t878887116\n196\t377\t4 881250950\n");
  put("fuzz_ratings", "ratings.dat", "1::1193::5::978300760\n1::661::3::978302109\n2::1193::4.5::978298413\n");
  put("fuzz_ratings", "ratings_header.csv",
      "userId,movieId,rating,timestamp\n1,31,2.5,1260759144\n1,1029,3.0,1260759179\n# comment\n\n2,31,4,1260759185\r\n");
  put("fuzz_ratings", "no_timestamp.csv", "7,8,1.5\n-3,9223372036854775807,0.5\n");
}

// ---- accountant ------------------------------------------------------------------------------------------

void accountants() {
  privacy::PrivacyAccountant a(privacy::EpsDelta(5.0, 1e-5));
  a.charge_gaussian("covariance tree node", 1.0, 6.0, privacy::EpsDelta(1.0, 1e-6));
  a.charge_pure("laplace count", 0.5);
  a.charge_approx("approx release", privacy::EpsDelta(0.25, 1e-7));
  a.charge_zcdp("zcdp only", 0.01);
  a.charge_gaussian("gaussian, rho only", 2.0, 20.0);
  put("fuzz_accountant", "mixed.ledger", a.save());

  privacy::PrivacyAccountant s(privacy::EpsDelta(1.0, 1e-6), privacy::ZcdpConversion::standard);
  s.charge_zcdp("one", 0.001);
  s.charge_zcdp("two", 0.002);
  put("fuzz_accountant", "standard.ledger", s.save());

  put("fuzz_accountant", "empty.ledger", privacy::PrivacyAccountant(privacy::EpsDelta(0.5, 0.0)).save());
}

// ---- checkpoints ------------------------------------------------------------------------------------------

// At most 8 pending words of the seeded source: a checkpoint holds up to 512 (4 KB), still valid with fewer.
std::string trimmed(const std::string& bytes) {
  proto::ContinualSumCheckpoint msg;
  msg.ParseFromString(bytes);
  if (msg.has_source() && msg.source().pending_size() > 8) msg.mutable_source()->mutable_pending()->Truncate(8);
  return msg.SerializeAsString();
}

template <class Sum>
void sum_checkpoints(unsigned config) {
  const dpstream_fuzz::SumConfig c = dpstream_fuzz::sum_config(config);
  auto acc = dpstream_fuzz::fuzz_accountant();
  Sum sum(c.dimension, c.options, acc);
  const std::string prefix(1, static_cast<char>(config));
  const std::string name = "config" + std::to_string(config);
  put("fuzz_checkpoint", name + "_fresh.ckpt", prefix + trimmed(sum.save()));
  Eigen::VectorXd row(c.dimension);
  for (Eigen::Index j = 0; j < c.dimension; ++j) row[j] = 0.5 / static_cast<double>(j + 1) * (j % 2 ? -1 : 1);
  const std::uint64_t rows = 3 * c.options.block_rows + (c.options.block_rows > 1 ? 1 : 0);
  for (std::uint64_t i = 0; i < rows; ++i) sum.update(row * (1.0 - 0.1 * static_cast<double>(i % 5)));
  put("fuzz_checkpoint", name + "_progress.ckpt", prefix + trimmed(sum.save()));
  // Without an accountant: no ledger in the checkpoint.
  Sum plain(c.dimension, c.options, dpstream::privacy::Budget::unaccounted("a corpus checkpoint without a ledger"));
  plain.update(row);
  put("fuzz_checkpoint", name + "_noledger.ckpt", prefix + trimmed(plain.save()));
}

void noise_states() {
  for (unsigned config = dpstream_fuzz::kFirstNoiseConfig; config < dpstream_fuzz::kConfigs; ++config) {
    auto noise = dpstream_fuzz::noise_config(config);
    privacy::SeededNoiseSource source(3);
    Eigen::VectorXd release = Eigen::VectorXd::Zero(noise->size());
    const std::string prefix(1, static_cast<char>(config));
    for (int step : {0, 3, 5}) {
      while (noise->steps() < static_cast<std::uint64_t>(step)) noise->advance(source, release);
      proto::ContinualNoiseState state;
      noise->save(state);
      put("fuzz_checkpoint", "config" + std::to_string(config) + "_step" + std::to_string(step) + ".state",
          prefix + state.SerializeAsString());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  root = argc > 1 ? argv[1] : "fuzz/corpus";
  row_logs();
  csvs();
  idxs();
  ratings();
  accountants();
  for (unsigned config = 0; config < dpstream_fuzz::kFirstNoiseConfig; ++config) {
    if (dpstream_fuzz::sum_config(config).covariance) sum_checkpoints<stream::ContinualCovariance>(config);
    else sum_checkpoints<stream::ContinualVectorSum>(config);
  }
  noise_states();
  std::printf("corpus written under %s\n", root.c_str());
  return 0;
}
