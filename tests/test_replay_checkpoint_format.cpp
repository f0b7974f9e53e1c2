// dpstream-replay's checkpoint file (tools/replay/checkpoint.hpp): format 2 holds the online-PCA
// session as a list of parts, one per stateful object; a format-1 checkpoint (the same states as
// typed fields, as builds before the parts wrote them) still resumes to the uninterrupted run's
// results bit for bit, and another version is refused naming it.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "common/input.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/io/synthetic_rows.hpp"
#include "learner_states.pb.h"
#include "replay/checkpoint.hpp"
#include "replay/run.hpp"
#include "temp_dir.hpp"

namespace test_replay_checkpoint_format {

using namespace dpstream;
using tools::replay::ReplayRun;
using tools::replay::ReplaySettings;

tools::OpenedInput generated() {
  io::SyntheticRowsOptions o;
  o.dimension = 10;
  o.rows = 600;
  o.seed = 4;
  tools::OpenedInput in;
  in.source = std::make_unique<io::SyntheticRowSource>(o);
  in.title = "generated";
  return in;
}

ReplaySettings settings(const testing::TempDir& dir) {
  ReplaySettings s;
  s.mechanism = "separable";
  s.k = 2;
  s.block = 32;
  s.privacy.seed = 3;
  s.out = dir.file("out");
  s.checkpoint = dir.file("run.ckpt");
  return s;
}

// The version-1 form of a version-2 message: each part back in its typed field.
tools::replay::pb::ReplayCheckpoint as_version_1(tools::replay::pb::ReplayCheckpoint m) {
  const session::SessionParts parts = tools::replay::session_parts(m);
  m.clear_parts();
  m.set_format_version(1);
  for (const session::SessionPart& p : parts.parts) {
    bool parsed = true;
    if (p.name == "continual_sum") m.set_continual_sum(p.bytes);
    else if (p.name == "private_learner") parsed = m.mutable_private_learner()->ParseFromString(p.bytes);
    else if (p.name == "stationary") parsed = m.mutable_stationary()->ParseFromString(p.bytes);
    else if (p.name == "nonnegative") parsed = m.mutable_nonnegative()->ParseFromString(p.bytes);
    else if (p.name == "ftl") parsed = m.mutable_ftl()->ParseFromString(p.bytes);
    else if (p.name == "meter") parsed = m.mutable_meter()->ParseFromString(p.bytes);
    else FAIL("unexpected part " << p.name);
    REQUIRE(parsed);
  }
  return m;
}

void write(const std::string& path, const tools::replay::pb::ReplayCheckpoint& m) {
  const std::string bytes = tools::replay::checkpoint_file_bytes(m);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<double> figures(const ReplayRun& run) {
  const eval::RegretMeter& m = run.session().meter();
  std::vector<double> out{m.opt()};
  for (std::size_t i = 0; i < m.learners().size(); ++i) out.push_back(m.gain(i));
  return out;
}

TEST_CASE("checkpoint format 2 is a list of parts; format 1 still resumes bit for bit; another is refused by name") {
  testing::TempDir dir;
  ReplaySettings whole = settings(dir);
  whole.checkpoint.clear();
  ReplayRun uninterrupted(whole, generated());
  uninterrupted.replay();

  ReplaySettings first = settings(dir);
  first.checkpoint_every = 5;
  {
    ReplayRun run(first, generated());
    run.replay();
  }
  const tools::replay::pb::ReplayCheckpoint saved = tools::replay::read_checkpoint(first.checkpoint);
  CHECK(saved.format_version() == 2);
  CHECK(saved.blocks() == 15);
  CHECK(saved.continual_sum().empty());  // the states are parts now
  std::set<std::string> names;
  for (const auto& p : saved.parts()) names.insert(p.name());
  CHECK(names == std::set<std::string>{"continual_sum", "private_learner", "stationary", "ftl", "meter"});

  ReplaySettings resumed = first;
  resumed.resume = true;
  tools::replay::pb::ReplayCheckpoint future = saved;
  future.set_format_version(3);
  write(first.checkpoint, future);
  CHECK_THROWS_WITH(ReplayRun(resumed, generated()), Catch::Contains("format_version 3"));

  write(first.checkpoint, as_version_1(saved));
  REQUIRE(tools::replay::read_checkpoint(first.checkpoint).format_version() == 1);
  ReplayRun run(resumed, generated());
  CHECK(run.figures().resumed_rows == 15 * 32);
  run.replay();
  CHECK(figures(run) == figures(uninterrupted));
  run.remove_checkpoint();
}

}  // namespace test_replay_checkpoint_format
