"""Python OnlinePCA on Fashion-MNIST reproduces dpstream-replay's regret (same seed and settings).

Three runs of one stream -- the first 6,400 training images (50 blocks of 128; the CI budget),
pixels scaled by 1/255 and rows to unit norm (the CLI's defaults), BLT with GOE noise, seed 1:
  * the dpstream-replay executable (its JSON line),
  * dpstream.replay(...), which runs the tool's own code in-process,
  * dpstream.OnlinePCA.partial_fit over numpy blocks read here.
"""
import gzip
import json
import os
import subprocess

import numpy as np
import pytest

import dpstream

FASHION = os.environ.get("DPSTREAM_FASHION_MNIST", "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")
ROWS, BLOCK, K = 6400, 128, 10
SETTINGS = dict(k=K, epsilon=1.0, delta=1e-6, mechanism="blt", block=BLOCK, noise_shape="goe", seed=1, limit=ROWS)

pytestmark = pytest.mark.skipif(not os.path.exists(FASHION), reason=f"{FASHION} not installed (dataset-fashion-mnist)")


def fashion_rows(n):
    """The IDX file's first n images as rows, pixels * (1/255) as the C++ reader computes them."""
    with gzip.open(FASHION, "rb") as f:
        header = np.frombuffer(f.read(16), dtype=">u4")
        assert header[0] == 0x803, "not an IDX file of unsigned bytes, 3 dimensions"
        d = int(header[2] * header[3])
        pixels = np.frombuffer(f.read(n * d), dtype=np.uint8).reshape(n, d)
    return pixels.astype(np.float64) * (1.0 / 255.0)


@pytest.fixture(scope="module")
def cli():
    exe = os.environ["DPSTREAM_REPLAY"]
    args = [exe, "--input", FASHION] + [a for k, v in SETTINGS.items() for a in (f"--{k.replace('_', '-')}", str(v))]
    out = subprocess.run(args + ["--out", os.environ.get("TMPDIR", "/tmp") + f"/dpstream-pytest-replay-{os.getpid()}"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_python_online_pca_reproduces_the_cli_regret(cli):
    x = fashion_rows(ROWS)
    pca = dpstream.OnlinePCA(K, 1.0, 1e-6, block=BLOCK, mechanism="blt", horizon=ROWS // BLOCK, noise_shape="goe",
                             seed=1, normalize="unit", baseline=True)
    for i in range(0, ROWS, 4 * BLOCK):  # chunks of whole blocks
        pca.partial_fit(x[i : i + 4 * BLOCK])
    pca.finish()
    r = pca.regret_
    assert cli["rows"] == r["rows"] == ROWS
    # Bit for bit: the same rows (pixels * (1/255), unit-normalised by RowGuard in a VectorXd each),
    # the same blocks of 128 rows given to the same rank-k updates, the same seeded noise, the same
    # refreshes and the same meter, in the same order; the JSON line's numbers round-trip (base::format_value).
    # (Chunks that cut blocks change only how a block's Gram update is split: test_api checks that
    # within 1e-9.)
    for key in ("opt", "gain", "regret", "regret_over_opt", "nonprivate_regret_over_opt"):
        assert r[key] == cli[key], key


def test_dpstream_replay_is_the_cli_run(cli):
    # The tool's own code with the same settings: every figure of the JSON line except the timings.
    ours = dpstream.replay(FASHION, **SETTINGS)
    for key, value in cli.items():
        if "seconds" in key or key in ("rows_per_second", "out", "csv", "svg") or isinstance(value, dict):
            continue
        assert ours[key] == value, key
