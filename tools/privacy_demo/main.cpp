// dpstream-privacy-demo: private covariance release on a synthetic stream, under each calibration and
// noise shape, then a release the accountant refuses. The work is in tools/privacy_demo/ (demo.hpp).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "privacy_demo/demo.hpp"

using namespace dpstream::tools;

int main(int argc, char** argv) {
  CLI::App app{"dpstream privacy-core demo: private covariance release on a synthetic stream"};
  privacy_demo::DemoSettings s;
  privacy_demo::add_demo_options(app, s);
  if (const auto status = parse_command_line(app, argc, argv, "dpstream-privacy-demo")) return *status;
  return run_tool("dpstream-privacy-demo", [&] {
    const privacy_demo::DemoReport report = privacy_demo::run_demo(s);
    std::fputs(privacy_demo::summary_text(s, report).c_str(), stdout);
    std::printf("%s\n", privacy_demo::json_line(s, report).c_str());
    flush_stdout();
    return 0;
  });
}
