// The whole dpstream-convert command (common/commands.hpp says why it is not main.cpp).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "common/commands.hpp"
#include "convert/convert.hpp"

namespace dpstream::tools {

int convert_command(int argc, char** argv) {
  CLI::App app{"dpstream-convert: convert stored rows between IDX, CSV and protobuf row logs"};
  convert::ConvertSettings s;
  convert::add_convert_options(app, s);
  if (const auto status = parse_command_line(app, argc, argv, "dpstream-convert")) return *status;
  return run_tool("dpstream-convert", [&] {
    const convert::ConvertReport report = convert::convert(s);
    std::fputs(printable(convert::summary_text(report), true).c_str(), stdout);
    std::printf("%s\n", convert::json_line(report).c_str());
    flush_stdout();
    return 0;
  });
}

}  // namespace dpstream::tools
