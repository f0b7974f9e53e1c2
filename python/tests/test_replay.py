"""Python OnlinePCA on Fashion-MNIST reproduces dpstream-replay's regret (same seed and settings).

Three runs of one stream -- the first 6,400 training images (50 blocks of 128; the CI budget),
pixels scaled by 1/255 and rows to unit norm (the CLI's defaults), BLT with GOE noise, seed 1:
  * the dpstream-replay executable (its JSON line),
  * dpstream.replay(...), which drives the library's session as the tool does (no tool code),
  * dpstream.OnlinePCA.partial_fit over numpy blocks read here.
Then dpstream.replay against the executable on a generated CSV (every configuration the keywords
reach: mechanisms, shuffle, limit, nonnegative, clip, nonprivate, several learners): the whole dict,
nested learners included, and regret.csv byte for byte.
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

needs_fashion = pytest.mark.skipif(not os.path.exists(FASHION), reason=f"{FASHION} not installed (dataset-fashion-mnist)")


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


@needs_fashion
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


@needs_fashion
def test_dpstream_replay_is_the_cli_run(cli):
    # The library's session, driven as the tool drives it: every figure of the JSON line but the timings.
    ours = dpstream.replay(FASHION, **SETTINGS)
    for key, value in cli.items():
        if "seconds" in key or key in ("rows_per_second", "out", "csv", "svg"):
            continue
        assert ours[key] == value, key


# Settings the keywords reach, each run by the executable and by dpstream.replay on one CSV.
CONFIGURATIONS = [
    dict(mechanism="separable", k=3, block=32, seed=4),
    dict(mechanism="tree", k=2, block=25, seed=5, limit=300, shuffle=9),
    dict(mechanism="blt", k=3, block=40, seed=6, nonnegative=True, normalize="clip", clip_norm=2.5),
    dict(mechanism="honaker", k=2, block=30, seed=7, noise_shape="paper", calibration="paper", epsilon=0.5),
    dict(learner="fpl,oja,power,gauss", minibatch=60, k=2, block=30, seed=8),
    dict(nonprivate=True, k=3, block=50),
    dict(learner="fpl,gauss", k=1, block=10, seed=9, limit=60, zero_rows=True),  # OPT = 0: captured ratios null
]


@pytest.fixture(scope="module")
def rows_csv(tmp_path_factory):
    """A generated CSV (nonnegative entries, a spiked direction): 451 rows, 12 columns."""
    rng = np.random.default_rng(3)
    x = np.abs(rng.normal(size=(451, 12)) + 2.0 * rng.normal(size=(451, 1)) * np.linspace(1, 0, 12))
    path = tmp_path_factory.mktemp("replay") / "rows.csv"
    np.savetxt(path, x, delimiter=",", fmt="%.17g")
    return path


def run_cli(path, settings, out):
    args = [os.environ["DPSTREAM_REPLAY"], "--input", str(path), "--out", str(out)]
    for key, value in settings.items():
        flag = "--" + key.replace("_", "-")
        args += [flag] if value is True else [flag, str(value)]
    stdout = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("settings", CONFIGURATIONS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_replay_equals_the_executable_key_for_key(rows_csv, settings, tmp_path):
    settings = dict(settings)
    if settings.pop("zero_rows", False):
        rows_csv = tmp_path / "zeros.csv"
        np.savetxt(rows_csv, np.zeros((80, 5)), delimiter=",")
    cli = run_cli(rows_csv, settings, tmp_path / "cli")
    ours = dpstream.replay(rows_csv, out=tmp_path / "py", **settings)
    timings = {"seconds", "csv", "svg"}
    # The same keys in the same order, the same values (floats compared exactly: the JSON line's
    # numbers round-trip, base::format_value), nested learners included.
    assert list(ours) == list(cli)
    assert {k: v for k, v in ours.items() if k not in timings} == {k: v for k, v in cli.items() if k not in timings}
    assert (tmp_path / "py" / "regret.csv").read_bytes() == (tmp_path / "cli" / "regret.csv").read_bytes()
    # Python writes regret.csv only: the plot is the tool's.
    assert ours["svg"] is None and not (tmp_path / "py" / "regret.svg").exists()


def test_replay_refuses_an_output_it_would_destroy_before_any_row(rows_csv, tmp_path):
    # A folder where regret.csv goes, and the input itself as out's regret.csv: both refused before
    # the run, nothing replaced.
    (tmp_path / "dir" / "regret.csv").mkdir(parents=True)
    with pytest.raises(dpstream.InvalidParameter, match="not a regular file"):
        dpstream.replay(rows_csv, out=tmp_path / "dir", seed=1)
    assert (tmp_path / "dir" / "regret.csv").is_dir()
    (tmp_path / "in").mkdir()
    own = tmp_path / "in" / "regret.csv"
    own.write_bytes(rows_csv.read_bytes())
    with pytest.raises(dpstream.InvalidParameter, match="destroy the input"):
        dpstream.replay(own, out=tmp_path / "in", seed=1, format="csv")
    assert own.read_bytes() == rows_csv.read_bytes()


def test_replay_documents_every_learner_of_the_library_table():
    # The docstring's list is the library's table (a learner added there is listed with nothing
    # added to Python), as the tool's --learner help is.
    assert "@LEARNERS@" not in dpstream.replay.__doc__
    listed = dpstream._core.describe_learners()
    assert listed in dpstream.replay.__doc__
    help_text = " ".join(subprocess.run([os.environ["DPSTREAM_REPLAY"], "--help"], capture_output=True, text=True,
                                        check=True).stdout.split())
    assert listed in help_text
    for name in ("fpl", "oja", "power", "gauss"):
        assert name + " (" in listed
