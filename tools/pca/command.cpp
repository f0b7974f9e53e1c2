// The whole dpstream-pca command (common/commands.hpp says why it is not main.cpp).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "common/commands.hpp"
#include "common/input.hpp"
#include "pca/pca.hpp"

namespace dpstream::tools {

int pca_command(int argc, char** argv) {
  CLI::App app{
      "dpstream-pca: private PCA of a dataset (Analyze Gauss, noisy power method, private Oja, private\n"
      "find-and-project, randomized response), scored against the non-private top k of the same rows."};
  pca_tool::PcaSettings s;
  const auto after_parse = pca_tool::add_pca_options(app, s);
  if (const auto status = parse_command_line(app, argc, argv, "dpstream-pca")) return *status;
  after_parse();
  return run_tool("dpstream-pca", [&] {
    pca_tool::validate(s);
    const pca_tool::PcaReport report = pca_tool::run_pca(s, open_input(s.input));
    std::fputs(printable(pca_tool::summary_text(s, report), true).c_str(), stdout);
    std::printf("%s\n", pca_tool::json_line(s, report).c_str());
    flush_stdout();
    return 0;
  });
}

}  // namespace dpstream::tools
