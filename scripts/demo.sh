#!/usr/bin/env bash
# The main job: replays Fashion-MNIST train (Debian's dataset-fashion-mnist, installed if missing)
# through private online PCA and prints the regret summary, private FPL next to non-private
# follow-the-leader; the plot and CSV go to replay-out/. Without the data set package the replay
# falls back to a generated spiked-covariance stream. Extra arguments go to dpstream-replay (see
# --help), e.g. `scripts/demo.sh --shuffle 1 --seed 7`. The tool's last stdout line is its JSON;
# where the files went is printed on stderr.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
dpstream_install_packages
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  DPSTREAM_PACKAGES=(dataset-fashion-mnist)  # the demo's data only; the build does not need it
  dpstream_install_packages || echo "== dataset-fashion-mnist could not be installed: using the generated stream" >&2
fi
dpstream_build build -Dbuildtype=release -Dbench=true "${DPSTREAM_UNITY[@]}"  # as scripts/test.sh, and the benchmarks
out="$DPSTREAM_ROOT/replay-out"
"$DPSTREAM_ROOT/build/tools/dpstream-replay" --out "$out" "$@"
echo "plot: $out/regret.svg   data: $out/regret.csv" >&2
