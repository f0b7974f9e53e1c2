"""replay(): a stream of rows replayed through private online PCA by the library's session, as
dpstream-replay runs it; returns the figures of the tool's JSON line as a dict."""
import tempfile

from . import _core

# The keywords and their defaults: dpstream-replay's flags and defaults (None: the flag's default).
_DEFAULTS = {"k": 10, "epsilon": 1.0, "delta": 1e-6, "mechanism": "blt", "block": 128, "noise_shape": "goe",
             "blt_error": "max", "seed": None, "limit": 0, "normalize": "unit", "clip_norm": None,
             "calibration": "tight", "shuffle": None, "format": "auto", "nonnegative": False, "nonprivate": False,
             "learner": "fpl", "minibatch": 1000}


def replay(input=None, *, out=None, **settings):
    """Replays a stream of rows through private online PCA (the library's online-PCA session, as
    dpstream-replay drives it) and returns what dpstream-replay's JSON line holds, key for key and
    value for value (rows, dim, k, epsilon, delta, mechanism, block, opt, gain, regret,
    regret_over_opt, nonprivate_regret_over_opt, rows_clipped, rows_rejected, seconds, ...,
    neighbours, not_private, budget, epsilon_spent, learners).

    input: a file (row log, CSV, IDX, gzipped IDX); None: dpstream-replay's default, Fashion-MNIST's
    training images if installed (Debian's dataset-fashion-mnist), else a generated stream.
    settings: dpstream-replay's flags as keywords (k=10, epsilon=1.0, delta=1e-6, mechanism='blt',
    block=128, noise_shape='goe', blt_error='max', seed=None, limit=0, normalize='unit', clip_norm,
    calibration='tight', shuffle=None, format='auto', nonnegative=False, nonprivate=False,
    learner='fpl' (comma-separated, the library's learners: @LEARNERS@), minibatch=1000).
    out: the folder for regret.csv (None: a temporary folder, removed). Python writes regret.csv
    only, not the tool's regret.svg (a plot is presentation, the tool's): "svg" is None.

    Privacy: that of OnlinePCA with the same settings: the private learner's subspaces are
    (epsilon, delta)-DP for streams differing in one row zeroed with its slot kept (the dict's
    "neighbours"; a removal that shifts later rows is not covered). Every figure returned is
    evaluation on raw rows, NOT private: "not_private" lists those keys (the tool's labels,
    docs/privacy.md). seed= gives reproducible, NOT secure noise. The GIL is released for the run.
    """
    unknown = set(settings) - set(_DEFAULTS)
    if unknown:
        raise TypeError(f"replay() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    args = dict(_DEFAULTS)
    args.update({key: value for key, value in settings.items() if value is not None})
    args["learner"] = str(args["learner"])
    args["learners"] = args["learner"].split(",")
    args["input"] = "" if input is None else str(input)
    if out is not None:
        return _core.replay(dict(args, out=str(out)))
    with tempfile.TemporaryDirectory(prefix="dpstream-replay-") as folder:
        return _core.replay(dict(args, out=folder))


# The learners and what each is, from the library's table (a new learner is listed with nothing added here).
replay.__doc__ = replay.__doc__.replace("@LEARNERS@", _core.describe_learners())
