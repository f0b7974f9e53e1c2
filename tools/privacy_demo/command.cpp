// The whole dpstream-privacy-demo command (common/commands.hpp says why it is not main.cpp).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "common/commands.hpp"
#include "privacy_demo/demo.hpp"

namespace dpstream::tools {

int privacy_demo_command(int argc, char** argv) {
  CLI::App app{"dpstream privacy-core demo: private covariance release on a synthetic stream"};
  privacy_demo::DemoSettings s;
  privacy_demo::add_demo_options(app, s);
  if (const auto status = parse_command_line(app, argc, argv, "dpstream-privacy-demo")) return *status;
  return run_tool("dpstream-privacy-demo", [&] {
    const privacy_demo::DemoReport report = privacy_demo::run_demo(s);
    std::fputs(printable(privacy_demo::summary_text(s, report), true).c_str(), stdout);
    std::printf("%s\n", privacy_demo::json_line(s, report).c_str());
    flush_stdout();
    return 0;
  });
}

}  // namespace dpstream::tools
