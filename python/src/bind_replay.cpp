// dpstream._core.replay: dpstream-replay's own run (tools/replay: the settings table, ReplayRun, the
// Pipeline and the JSON line), driven from Python. The binding links the dpstream_tools static
// library rather than re-implementing the protocol, so the figures are the CLI's by construction.
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bindings.hpp"
#include "common/cli.hpp"
#include "dpstream/base/errors.hpp"
#include "replay/report.hpp"
#include "replay/run.hpp"

namespace dpstream::python {

namespace {

// `args` are dpstream-replay's flags ("--epsilon", "1", ...); the JSON line it would print.
std::string replay(std::vector<std::string> args) {
  CLI::App app{"dpstream.replay"};
  tools::replay::ReplaySettings s;
  const auto after_parse = tools::replay::add_replay_options(app, s);
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector in reverse order
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw InvalidParameter(std::string("replay: ") + e.what());
  }
  after_parse();
  py::gil_scoped_release unlocked;
  Eigen::initParallel();  // the pipeline's threads call Eigen
  tools::replay::validate(s);
  tools::replay::ReplayRun run(s, tools::open_input(s.input));
  run.replay();
  const tools::replay::ReportFiles files = tools::replay::write_report_files(run);
  run.remove_checkpoint();
  return tools::replay::json_line(run, files);
}

}  // namespace

void bind_replay(py::module_& m) {
  m.def("replay", &replay, py::arg("args"),
        "dpstream-replay with these flags; returns its JSON line (the run's own code, tools/replay).");
}

}  // namespace dpstream::python
