// The whole dpstream-replay command (common/commands.hpp says why it is not main.cpp).
#include <cstdio>

#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include "common/cli.hpp"
#include "common/commands.hpp"
#include "replay/report.hpp"
#include "replay/run.hpp"

namespace dpstream::tools {

int replay_command(int argc, char** argv) {
  CLI::App app{
      "dpstream-replay: replay a logged stream through private online PCA (follow-the-perturbed-leader on a\n"
      "continual-release covariance) and measure its regret, next to non-private follow-the-leader."};
  replay::ReplaySettings s;
  const auto after_parse = replay::add_replay_options(app, s);
  if (const auto status = parse_command_line(app, argc, argv, "dpstream-replay")) return *status;
  after_parse();
  Eigen::initParallel();  // the pipeline's threads call Eigen
  return run_tool("dpstream-replay", [&] {
    replay::validate(s);
    replay::ReplayRun run(s, open_input(s.input));
    run.replay();
    const replay::ReportFiles files = replay::write_report_files(run);
    std::fputs(replay::summary_text(run, files).c_str(), stdout);
    std::printf("%s\n", replay::json_line(run, files).c_str());
    std::fflush(stdout);
    run.remove_checkpoint();
    return 0;
  });
}

}  // namespace dpstream::tools
