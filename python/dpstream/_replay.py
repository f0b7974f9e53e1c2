"""replay(): dpstream-replay's run from Python (the tool's own code, tools/replay), its JSON line as a dict."""
import json
import tempfile

from . import _core

# keyword -> dpstream-replay flag
_FLAGS = {"k": "--k", "epsilon": "--epsilon", "delta": "--delta", "mechanism": "--mechanism", "block": "--block",
          "noise_shape": "--noise-shape", "blt_error": "--blt-error", "seed": "--seed", "limit": "--limit",
          "normalize": "--normalize", "clip_norm": "--clip-norm", "calibration": "--calibration",
          "shuffle": "--shuffle", "format": "--format"}
_SWITCHES = {"nonnegative": "--nonnegative", "nonprivate": "--nonprivate"}


def replay(input=None, *, out=None, **settings):
    """Replays a stream of rows through private online PCA and returns what dpstream-replay's JSON
    line holds (rows, dim, k, epsilon, delta, mechanism, block, opt, gain, regret, regret_over_opt,
    nonprivate_regret_over_opt, rows_clipped, rows_rejected, seconds, ...).

    input: a file (row log, CSV, IDX, gzipped IDX); None: dpstream-replay's default, Fashion-MNIST's
    training images if installed (Debian's dataset-fashion-mnist), else a generated stream.
    settings: dpstream-replay's flags as keywords (k=10, epsilon=1.0, delta=1e-6, mechanism='blt',
    block=128, noise_shape='goe', seed=None, limit=0, normalize='unit', clip_norm, calibration,
    shuffle, nonnegative=False, nonprivate=False). out: the folder for regret.csv and regret.svg
    (None: a temporary folder, removed).

    Privacy: that of OnlinePCA with the same settings: the private learner's subspaces are
    (epsilon, delta)-DP for streams differing in one row zeroed with its slot kept (the dict's
    "neighbours"; a removal that shifts later rows is not covered). Every figure returned is
    evaluation on raw rows, NOT private: "not_private" lists those keys (the tool's labels,
    docs/privacy.md). seed= gives reproducible, NOT secure noise. The GIL is released for the run.
    """
    args = [] if input is None else ["--input", str(input)]
    for key, value in settings.items():
        if key in _SWITCHES:
            if value:
                args.append(_SWITCHES[key])
        elif key in _FLAGS:
            if value is not None:
                args += [_FLAGS[key], str(value)]
        else:
            raise TypeError(f"replay() got an unexpected keyword argument {key!r}")
    if out is not None:
        return json.loads(_core.replay(args + ["--out", str(out)]))
    with tempfile.TemporaryDirectory(prefix="dpstream-replay-") as folder:
        return json.loads(_core.replay(args + ["--out", folder]))
