// base::write_file_atomically (base/atomic_file.hpp): replacement, modes, planted symlinks never
// followed, only a regular file replaced, failures that leave the target as it was, and only the
// writer's own temporaries removed (a look-alike of the pattern is someone's and stays).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "dpstream/base/atomic_file.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/staged_file.hpp"
#include "dpstream/io/csv_rows.hpp"
#include "dpstream/io/row_log.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "temp_dir.hpp"
#include "unaccounted.hpp"

namespace test_atomic_file {

using dpstream::base::write_file_atomically;
using dpstream::testing::read_bytes;
using dpstream::testing::TempDir;
using dpstream::testing::write_bytes;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

unsigned mode_of(const std::string& path) {
  struct stat info {};
  REQUIRE(::lstat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

}  // namespace

TEST_CASE("write_file_atomically writes, replaces, sets the mode, and leaves no temporary") {
  TempDir dir;
  const std::string path = dir.file("state.bin");
  write_file_atomically(path, "first");
  CHECK(read_bytes(path) == "first");
  CHECK(mode_of(path) == 0600);
  const std::string big(8 << 20, 'x');  // several write() calls' worth
  write_file_atomically(path, big);
  CHECK(read_bytes(path) == big);
  write_file_atomically(path, "");
  CHECK(read_bytes(path).empty());
  write_file_atomically(path, "public", 0644);
  CHECK(read_bytes(path) == "public");
  CHECK(mode_of(path) == 0644);
  // Relative paths: the temporary goes beside the target in the current directory.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path);
  write_file_atomically("relative.bin", "here");
  fs::current_path(cwd);
  CHECK(read_bytes(dir.file("relative.bin")) == "here");
  CHECK(entries(dir.path) == std::set<std::string>{"state.bin", "relative.bin"});
}

TEST_CASE("write_file_atomically never follows a planted symlink, beside the target or at it") {
  TempDir dir;
  const std::string victim = dir.file("victim.txt");
  write_bytes(victim, "precious");
  const std::string path = dir.file("ckpt");
  // The old fixed temporary name, the template itself, and a few names of mkostemp's form.
  const std::set<std::string> planted = {"ckpt.tmp", "ckpt.tmp-XXXXXX", "ckpt.tmp-000000", "ckpt.tmp-aaaaaa",
                                         "ckpt.tmp-ZZZZZZ", "ckpt.tmp-a1B2c3"};
  for (const std::string& name : planted) fs::create_symlink(victim, dir.path / name);
  for (int i = 0; i < 20; ++i) write_file_atomically(path, "new state " + std::to_string(i));
  CHECK(read_bytes(victim) == "precious");
  CHECK(read_bytes(path) == "new state 19");
  for (const std::string& name : planted) CHECK(fs::is_symlink(dir.path / name));

  // A symlink at the final path is refused, never replaced nor followed; a FIFO too (a device or a
  // socket is refused by the same test: only a regular file is replaced).
  const std::string linked = dir.file("linked");
  fs::create_symlink(victim, linked);
  CHECK_THROWS_WITH(write_file_atomically(linked, "replaced"), Contains("cannot write " + linked) &&
                                                                    Contains("not a regular file"));
  CHECK(fs::is_symlink(linked));
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(write_file_atomically(fifo, "replaced"), Contains("not a regular file"));
  CHECK(fs::is_fifo(fifo));
  for (const auto& entry : fs::directory_iterator(dir.path))
    CHECK(entry.path().filename().string().find("linked.tmp-") == std::string::npos);
  CHECK(read_bytes(victim) == "precious");
}

TEST_CASE("a write that fails throws naming the path and leaves the target and the folder as they were") {
  TempDir dir;
  // Into a missing directory: nothing is created anywhere.
  const std::string missing = (dir.path / "no-such-dir" / "out.csv").string();
  CHECK_THROWS_AS(write_file_atomically(missing, "x"), std::runtime_error);
  CHECK_THROWS_WITH(write_file_atomically(missing, "x"), Contains("cannot write " + missing) &&
                                                             Contains("No such file or directory"));
  CHECK(entries(dir.path).empty());
  // The target is a directory: refused before a temporary is made, the directory kept.
  const fs::path target = dir.path / "occupied";
  fs::create_directory(target);
  write_bytes((target / "inside").string(), "kept");
  CHECK_THROWS_WITH(write_file_atomically(target.string(), "x"), Contains("cannot write " + target.string()) &&
                                                                     Contains("is a directory"));
  CHECK(entries(dir.path) == std::set<std::string>{"occupied"});
  CHECK(read_bytes((target / "inside").string()) == "kept");
}

TEST_CASE("base::save_file (a ContinualSum checkpoint) removes its own temporary and no look-alike of someone's") {
  TempDir dir;
  const std::string path = dir.file("stream.ckpt");
  // A user's files named like temporaries (regular, owned by us, 0644 and 0600): never ours to remove.
  write_bytes(dir.file("stream.ckpt.tmp-backup"), "my backup");
  write_bytes(dir.file("stream.ckpt.tmp-q1w2e3"), "mine too");
  fs::permissions(dir.path / "stream.ckpt.tmp-backup", fs::perms(0644));
  dpstream::stream::ContinualSumOptions options;
  options.horizon = 4;
  options.privacy.noise.seed = 1;
  dpstream::stream::ContinualVectorSum sum(2, options, test_budget::unaccounted());
  sum.update(Eigen::Vector2d(0.5, 0.5));
  dpstream::base::save_file(path, sum);
  dpstream::base::save_file(path, sum);
  CHECK(entries(dir.path) == std::set<std::string>{"stream.ckpt", "stream.ckpt.tmp-backup", "stream.ckpt.tmp-q1w2e3"});
  CHECK(read_bytes(dir.file("stream.ckpt.tmp-backup")) == "my backup");
  CHECK(mode_of(path) == 0600);
}

// Every file the library streams (row logs, CSV rows) goes through StagedFile: the same guarantees
// as write_file_atomically, for a file written a row at a time.
TEST_CASE("streamed writers put nothing at the path until close(), and never damage a file there") {
  using dpstream::io::CsvRowWriter;
  using dpstream::base::ExistingFile;
  using dpstream::io::RowLogHeader;
  using dpstream::io::RowLogWriter;
  using dpstream::base::StagedFile;
  TempDir dir;
  const std::string log = dir.file("rows.pb"), csv = dir.file("rows.csv");
  write_bytes(log, "old log");
  write_bytes(csv, "old csv");
  fs::create_symlink(dir.file("rows.csv"), dir.path / "rows.csv.tmp");  // the old fixed name, planted
  {  // Abandoned mid-way (an exception in the caller): both files as they were, no temporary left.
    RowLogWriter log_writer(log, RowLogHeader{2, 0, "", ""});
    CsvRowWriter csv_writer(csv, 2);
    log_writer.write_dense(Eigen::Vector2d(1, 2));
    csv_writer.write(Eigen::Vector2d(1, 2));
  }
  CHECK(read_bytes(log) == "old log");
  CHECK(read_bytes(csv) == "old csv");
  CHECK(entries(dir.path) == std::set<std::string>{"rows.pb", "rows.csv", "rows.csv.tmp"});
  {  // A header whose declared count is not met is not put in place.
    RowLogWriter log_writer(log, RowLogHeader{2, 3, "", ""});
    log_writer.write_dense(Eigen::Vector2d(1, 2));
    CHECK_THROWS_WITH(log_writer.close(), Contains("declares 3 rows but 1") && Contains("nothing was written"));
  }
  CHECK(read_bytes(log) == "old log");
  // refuse: an existing file is refused up front, and one that appears before close() is kept.
  CHECK_THROWS_WITH(CsvRowWriter(csv, 2, {}, ExistingFile::refuse), Contains(csv) && Contains("exists"));
  const std::string late = dir.file("late.csv");
  {
    CsvRowWriter csv_writer(late, 1, {}, ExistingFile::refuse);
    csv_writer.write(Eigen::VectorXd::Ones(1));
    write_bytes(late, "someone else's");
    CHECK_THROWS_WITH(csv_writer.close(), Contains(late) && Contains("File exists"));
  }
  CHECK(read_bytes(late) == "someone else's");
  // close() replaces the old file whole, with mode 0600; the planted link and its target untouched.
  {
    CsvRowWriter csv_writer(csv, 2);
    csv_writer.write(Eigen::Vector2d(0.5, -1));
    csv_writer.close();
  }
  CHECK(read_bytes(csv) == "0.5,-1\n");
  CHECK(mode_of(csv) == 0600);
  CHECK(fs::is_symlink(dir.path / "rows.csv.tmp"));
  CHECK(entries(dir.path) == std::set<std::string>{"rows.pb", "rows.csv", "rows.csv.tmp", "late.csv"});
  // StagedFile itself: a temporary of mode 0600 until commit, removed if never committed.
  std::string temporary;
  {
    StagedFile staged(dir.file("direct"));
    temporary = staged.temporary();
    CHECK(mode_of(temporary) == 0600);
    staged.write("abc", 3);
  }
  CHECK_FALSE(fs::exists(temporary));
  CHECK_FALSE(fs::exists(dir.file("direct")));
}

TEST_CASE("write_files_atomically replaces a set together, or leaves the old set whole") {
  using dpstream::base::write_files_atomically;
  TempDir dir;
  const std::string csv = dir.file("set.csv"), svg = dir.file("set.svg");
  write_files_atomically({{csv, "old csv"}, {svg, "old svg"}});
  CHECK(read_bytes(csv) == "old csv");
  CHECK(read_bytes(svg) == "old svg");
  // The second file cannot be written (a FIFO stands where it goes): the first is not replaced either.
  const std::string fifo = dir.file("set.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(write_files_atomically({{csv, "new csv"}, {fifo, "new"}}), Contains(fifo));
  CHECK(read_bytes(csv) == "old csv");
  CHECK(entries(dir.path) == std::set<std::string>{"set.csv", "set.svg", "set.fifo"});
  write_files_atomically({{csv, "new csv"}, {svg, "new svg"}});
  CHECK(read_bytes(csv) == "new csv");
  CHECK(read_bytes(svg) == "new svg");
  CHECK(mode_of(svg) == 0600);
}

}  // namespace test_atomic_file
