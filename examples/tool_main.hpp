// The command-line contract the tools share: a bad command line or unusable input is a UsageError
// (exit status 2), any other failure stops the run (exit status 1); each is one line on stderr,
// "TOOL: error: what".
#pragma once

#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>

namespace dpstream::tools {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses argv into `app`: nullopt to go on, or the exit status (0 after --help, 2 on an error).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const char* tool) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
    return 2;
  }
  return std::nullopt;
}

// Runs `run` (returning the exit status) and turns an escaping exception into its status and line.
template <class Run>
int run_reporting_errors(const char* tool, Run&& run) {
  try {
    return run();
  } catch (const UsageError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
    return 1;
  }
}

}  // namespace dpstream::tools
