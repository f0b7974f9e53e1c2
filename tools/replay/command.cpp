// The whole dpstream-replay command (common/commands.hpp says why it is not main.cpp).
#include <cstdio>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include "common/cli.hpp"
#include "common/commands.hpp"
#include "replay/report.hpp"
#include "replay/run.hpp"

namespace dpstream::tools {

namespace {

// glibc hands large freed blocks back to the kernel (mmap'd ones, and an arena's top past its trim
// threshold), and the next allocation of that size faults its pages in again. Under --nonnegative
// every PSD projection runs Eigen products whose packing buffers are allocated and freed per call:
// about a quarter of the run's page faults, which are dear on virtual machines. Blocks up to 32 MiB
// and 256 MiB of arena top are kept for reuse instead (figures: docs/performance.md, Page faults). The process then holds on to what it
// freed, up to about its peak. Other C libraries: nothing to do.
void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace

int replay_command(int argc, char** argv) {
  CLI::App app{
      "dpstream-replay: replay a logged stream through private online PCA (follow-the-perturbed-leader on a\n"
      "continual-release covariance) and measure its regret, next to non-private follow-the-leader."};
  replay::ReplaySettings s;
  const auto after_parse = replay::add_replay_options(app, s);
  if (const auto status = parse_command_line(app, argc, argv, "dpstream-replay")) return *status;
  after_parse();
  Eigen::initParallel();  // the session's threads call Eigen
  keep_freed_memory_for_reuse();
  return run_tool("dpstream-replay", [&] {
    replay::validate(s);
    replay::ReplayRun run(s, open_input(s.input));
    run.replay();
    const replay::ReportFiles files = replay::write_report_files(run);
    std::fputs(printable(replay::summary_text(run, files), true).c_str(), stdout);
    std::printf("%s\n", replay::json_line(run, files).c_str());
    std::fflush(stdout);
    run.remove_checkpoint();
    return 0;
  });
}

}  // namespace dpstream::tools
