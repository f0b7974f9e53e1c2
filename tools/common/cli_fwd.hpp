// CLI11's types as the tools' headers name them: by reference or pointer only. CLI11 is header-only
// and costs seconds of compile in every translation unit that includes it, so only the sources that
// build or parse an App include <CLI/CLI.hpp> (tools/meson.build lists them first, to share unity
// chunks).
#pragma once

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI
