# Sourced by demo.sh and test.sh: install missing Debian packages, configure and build.
# Only Debian's package archive is used; nothing else is fetched.

DPSTREAM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages the build needs (and why):
#   meson ninja-build pkg-config g++ — the build; protobuf-compiler + libprotobuf-dev — row logs,
#   ledgers, checkpoints; libeigen3-dev — all linear algebra; libsodium-dev — ChaCha20 keystream for
#   the secure noise source; libboost-dev — Boost.Circular_buffer; catch2 — the tests;
#   libcli11-dev — command lines of the tools; zlib1g-dev — gzipped IDX (MNIST) files, read
#   through zlib rather than a hand-written inflater; python3-protobuf — the test that Python's
#   protobuf and the C++ reader agree on the row log format (scripts/rowlog_interop.py);
#   liblbfgspp-dev — L-BFGS (header-only) for the BLT optimiser; liblapack-dev — dstemr (MRRR) for the
#   PSD projection of --nonnegative (linalg/psd_projection.hpp);
#   python3-dev + pybind11-dev — the Python package's C extension (python/), built against
#   /usr/bin/python3; python3-numpy — its arrays in and out; python3-pytest — its tests;
#   python3-dask + python3-distributed — dpstream.dask and its LocalCluster tests;
#   python3-sklearn — the estimators' scikit-learn contract tests (check_estimator, clone, pipelines);
#   python3-mesonpy + python3-venv — `pip install .` (pyproject.toml) and its clean-venv test.
# Not here: dataset-fashion-mnist (scripts/demo.sh installs it for the demo's data; the tests that
# read it run when it is installed and say they were skipped otherwise).
DPSTREAM_PACKAGES=(meson ninja-build pkg-config g++ libeigen3-dev catch2 libprotobuf-dev
                   protobuf-compiler libsodium-dev libboost-dev libcli11-dev zlib1g-dev python3-protobuf
                   liblbfgspp-dev liblapack-dev python3-dev pybind11-dev python3-numpy python3-pytest python3-dask
                   python3-distributed python3-sklearn python3-mesonpy python3-venv)

dpstream_install_packages() {
  local missing=()
  for p in "${DPSTREAM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing Debian packages: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
}

# The scripts' builds are unity builds: a target's sources are compiled 8 to a translation unit, so
# the headers and the Eigen and Catch2 templates they instantiate are compiled once per 8 files, not
# once per file (tests/meson.build builds one test executable per area for this). A build from scratch
# takes less time; an incremental rebuild by hand is quicker without (plain `meson setup build`).
DPSTREAM_UNITY=(-Dunity=on -Dunity_size=8)

# dpstream_build DIR [meson options...]: configure DIR once (reconfigure if options change), build it.
dpstream_build() {
  local dir="$1"; shift
  if [ ! -f "$DPSTREAM_ROOT/$dir/build.ninja" ]; then
    meson setup "$DPSTREAM_ROOT/$dir" "$DPSTREAM_ROOT" "$@"
  else
    meson configure "$DPSTREAM_ROOT/$dir" "$@" >/dev/null
  fi
  ninja -C "$DPSTREAM_ROOT/$dir"
}
