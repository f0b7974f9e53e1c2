#!/usr/bin/env bash
# The library's layers, bottom to top: base, linalg, privacy, stream, pca, then eval and io (one
# level), then completion and the online-PCA session (the tools and the Python package sit above all
# of them, and nothing outside tools/ includes a tools/ header). A header or source
# file of a layer includes only its own layer's files and those of the layers below: this test lists
# every #include that runs back up, and fails if there is one.
# Usage: test_layers.sh SOURCE_ROOT
set -euo pipefail
root=${1:?usage: test_layers.sh SOURCE_ROOT}
layers=(base linalg privacy stream pca "eval io" "completion session")
status=0
for ((i = 0; i < ${#layers[@]}; ++i)); do
  for lower in ${layers[i]}; do
    for ((j = i + 1; j < ${#layers[@]}; ++j)); do
      for higher in ${layers[j]}; do
        dirs=()
        for d in "$root/include/dpstream/$lower" "$root/lib/$lower"; do [[ -d $d ]] && dirs+=("$d"); done
        ((${#dirs[@]})) || continue
        if hits=$(grep -rnE "^#include \"(dpstream/)?$higher/" "${dirs[@]}"); then
          echo "$lower/ includes $higher/ (a higher layer):"
          echo "$hits"
          status=1
        fi
      done
    done
  done
done
# tools/ headers (common/, replay/, pca/, recommend/, convert/, privacy_demo/ on the tools' include
# path) are the tools' own: the Python package and the benchmarks bind the library instead.
if hits=$(grep -rnE '^#include "(common|replay|pca|recommend|convert|privacy_demo)/' "$root/python/src" "$root/bench"); then
  echo "a tools/ header included outside tools/:"
  echo "$hits"
  status=1
fi
# CLI11 (header-only, seconds of compile in each translation unit that includes it) is included only
# by the tools' sources that build or parse a CLI::App; headers forward-declare it
# (tools/common/cli_fwd.hpp), so that a source or test reading a tools/ header does not compile it.
if hits=$(grep -rnE '^#include <CLI/' "$root" --include='*.hpp' --include='*.h' --include='*.hpp.in' \
            --exclude-dir=.git --exclude-dir='build*'); then
  echo "a header includes CLI11 (forward-declare it: common/cli_fwd.hpp):"
  echo "$hits"
  status=1
fi
if hits=$(grep -rnE '^#include <CLI/' "$root" --include='*.cpp' --exclude-dir=.git --exclude-dir='build*' \
            --exclude-dir=tools); then
  echo "CLI11 included outside tools/:"
  echo "$hits"
  status=1
fi
# ...and those sources are listed together (tools_cli_sources), so that a unity build compiles CLI11
# in as few chunks as it can.
cli_listed=$(sed -n '/^tools_cli_sources = files(/,/^)/p' "$root/tools/meson.build")
for f in $(grep -rlE '^#include <CLI/' "$root/tools" --include='*.cpp'); do
  if ! grep -qF "'${f#"$root/tools/"}'" <<<"$cli_listed"; then
    echo "${f#"$root/"} includes CLI11 but is not in tools_cli_sources (tools/meson.build)"
    status=1
  fi
done
((status == 0)) && echo "no include runs from a lower layer to a higher one, no tools/ header is included outside tools/," \
  "and CLI11 only in tools/ sources"
exit $status
