// Each tool's whole command: parse the command line, run under the exit contract (cli.hpp), print.
// They live in dpstream_tools, and each executable's main() only calls one: CLI11 is header-only, and
// its templates cost ~20 s of compilation a translation unit (~30 s under ASan + UBSan), so five
// mains that each included it compiled it five more times than the library's own units do.
#pragma once

namespace dpstream::tools {

int replay_command(int argc, char** argv);
int pca_command(int argc, char** argv);
int convert_command(int argc, char** argv);
int privacy_demo_command(int argc, char** argv);
int recommend_command(int argc, char** argv);

}  // namespace dpstream::tools
