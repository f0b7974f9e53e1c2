// The whole dpstream-recommend command (common/commands.hpp says why it is not main.cpp).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "common/commands.hpp"
#include "recommend/data.hpp"
#include "recommend/run.hpp"
#include "recommend/settings.hpp"

namespace dpstream::tools {

int recommend_command(int argc, char** argv) {
  CLI::App app{
      "dpstream-recommend: private matrix completion (Frank-Wolfe with joint DP; ALS / IRLS with Gaussian,\n"
      "Laplace or Huber noise), scored on a held-out split next to the item-mean and global-mean baselines."};
  recommend::RecommendSettings s;
  recommend::add_recommend_options(app, s);
  if (const auto status = parse_command_line(app, argc, argv, "dpstream-recommend")) return *status;
  return run_tool("dpstream-recommend", [&] {
    recommend::RecommendRun run(s);
    std::fputs(printable(recommend::data_text(s, run.data()), true).c_str(), stdout);
    run.train();
    std::fputs(printable(run.summary_text(), true).c_str(), stdout);
    std::printf("%s\n", run.json_line().c_str());
    flush_stdout();
    return 0;
  });
}

}  // namespace dpstream::tools
