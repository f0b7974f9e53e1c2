#!/usr/bin/env bash
# The main job. Installs what the build needs, builds (release), and runs it.
# Until private online PCA lands this is the privacy-core demo: a synthetic stream through RowGuard,
# a private covariance release under both calibrations, and the accountant refusing a release past
# its budget. Extra arguments go to the tool (see --help).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
dpstream_install_packages
dpstream_build build -Dbuildtype=release
exec "$DPSTREAM_ROOT/build/examples/dpstream-privacy-demo" "$@"
