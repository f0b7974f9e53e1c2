"""OnlinePCA: private follow-the-perturbed-leader on a continual covariance."""
import numpy as np

from . import _core
from ._estimator import NotFittedError, check_rows, flip_signs, serialised
from ._pca import PcaTransformer, centring_budget
from ._privacy import PrivacyAccountant, charging

_STREAM_KEYS = ("block", "mechanism", "horizon", "noise_shape", "seed", "normalize", "clip_norm", "calibration",
                "nonnegative")


class OnlinePCA(PcaTransformer):
    """Private online PCA: follow-the-perturbed-leader on a continual-release covariance.

    rows --partial_fit--> RowGuard --> ContinualCovariance --release--> FplOnlinePca (components_)
                                  \\--> RegretMeter (evaluation only: it sees raw rows)

    The protocol is dpstream-replay's (Dwork, Talwar, Thakurta & Zhang, "Analyze Gauss", STOC 2014,
    section 4): each block of ``block`` rows is scored with the subspace of the releases before it,
    then ingested; at the block's end the stream releases and the learner refreshes to the top
    ``n_components`` of the release (of the stationary estimate under mechanism='separable'). On the
    same rows, seed and settings the regret is dpstream-replay's.

    Privacy contract (pca/fpl_online_pca.hpp, private_tree; stream/continual_sum.hpp):

    * Neighbouring relation (``neighbours``): streams of the same length differing in one row,
      zeroed with its slot kept -- NOT a removal that shifts the later rows into other blocks,
      which is not covered; every row ||a||_2 <= L (normalize='unit': rows scaled to unit norm,
      L = 1 -- dpstream-replay's default; 'clip' to clip_norm; 'none': rows over clip_norm
      refused). Privacy unit: one row.
    * Sensitivity of a block's covariance sum: L^2; the mechanism's noise (tree, honaker, blt,
      separable; blt and separable need ``horizon``, the number of releases).
    * The subspaces read nothing but the releases: the whole sequence components_ is
      post-processing, (epsilon, delta)-DP as a whole. The accountant (``accountant_``; one is made
      with budget (epsilon, delta) if none is given) is charged ONCE, at the first partial_fit,
      before any row is used; every setting and the first rows' shape are checked before that.
    * regret_, guard_counts_ and everything the meter reports use raw rows: evaluation output,
      NOT private.
    * Noise: secure by default; seed=N is reproducible and NOT secure.
    * Privacy unit (``max_rows_per_user=K``, optionally ``min_separation=B``): partial_fit then needs
      ``user_ids=`` (one str, bytes or int a row). At most K rows of each user are kept (her first K;
      with B >= 1, at most one a block, blocks at least B apart; stream/contribution_bound.hpp), the
      rest dropped and counted in ``user_counts_`` (NOT private). The stream is calibrated for all of
      one user's rows (stream/participation.hpp): B = 0 lets her rows share a block, K times one
      row's noise (as group privacy in Gaussian DP); B >= 1 costs less, by the strategy's exact
      factor or a proven bound (``sensitivity_factor_``). The relation (``neighbours``): all rows of
      one user, each zeroed with its slot kept. The bound's state is 96 bytes a user (more for ids
      over 15 bytes), within a quarter of the memory limit. Not with center=True.

    Centring (center=True, with normalize='clip' or 'none'): at the first partial_fit a private mean of THAT call's rows (one Gaussian
    mechanism on (sum, L * count), sensitivity sqrt(2) L, with ``centering_share`` of epsilon and of
    delta: give a first batch of at least a few blocks) is released; every row of the stream is then
    centred by it and guarded again (bound L). A zeroed row becomes -mean_ after centring, so the
    stream is built for one row REPLACED in its slot (sensitivity sqrt(2) L^2 instead of L^2), with
    the rest of the budget. Cost: the stream's noise grows by sqrt(2) / (1 - share) (1.9x at the
    default 0.25); the two charges compose to at most (epsilon, delta) (basic composition).

    Fitted attributes: components_ (n_components x d, orthonormal rows, each row's largest |entry|
    positive), leader_values_ / explained_variance_ (top eigenvalues of the last followed release,
    private), singular_values_, mean_ (zeros without centring), n_features_in_, n_components_,
    accountant_, regret_ (dict: rows, opt, gain, regret, regret_over_opt,
    nonprivate_regret_over_opt with baseline=True), guard_counts_. explained_variance_ratio_ is not
    given (see PcaTransformer). n_components=None: all d components.

    Thread-safe (one lock per object). A signal (Ctrl-C) stops partial_fit at a block boundary
    (KeyboardInterrupt; the rows before it ingested and counted). Pickle and deepcopy carry the
    fitted model (components_, eigenvalues, mean_, counts, regret figures) and the accountant's
    ledger, NOT the stream: its checkpoint holds the exact sums and the noise source's state (a
    secure source's key); an unpickled OnlinePCA transforms, and partial_fit on it raises
    InvalidParameter (fit() starts a new stream). Continue a stream from stream_bytes() instead.
    """
    _param_names = ("n_components", "epsilon", "delta", "block", "mechanism", "horizon", "noise_shape", "seed",
                    "normalize", "clip_norm", "calibration", "nonnegative", "track_regret", "baseline", "center",
                    "centering_share", "accountant", "max_rows_per_user", "min_separation")

    def __init__(self, n_components=None, epsilon=1.0, delta=1e-6, *, block=128, mechanism="tree", horizon=None,
                 noise_shape="goe", seed=None, normalize="unit", clip_norm=1.0, calibration="tight",
                 nonnegative=False, track_regret=True, baseline=False, center=False, centering_share=0.25,
                 accountant=None, max_rows_per_user=None, min_separation=0):
        self.n_components, self.epsilon, self.delta = n_components, epsilon, delta
        self.block, self.mechanism, self.horizon, self.noise_shape = block, mechanism, horizon, noise_shape
        self.seed, self.normalize, self.clip_norm, self.calibration = seed, normalize, clip_norm, calibration
        self.nonnegative, self.track_regret, self.baseline = nonnegative, track_regret, baseline
        self.center, self.centering_share = center, centering_share
        self.accountant = accountant
        self.max_rows_per_user, self.min_separation = max_rows_per_user, min_separation

    def _start(self, X):
        """The stream (its one charge) and, with centring, the mean of X (its charge), in that order
        after every setting was checked."""
        dim = X.shape[1]
        k = dim if self.n_components is None else self.n_components
        mean_target, (eps, delta) = centring_budget(self.epsilon, self.delta, self.center, self.centering_share,
                                                     self.normalize)
        accountant = self.accountant if self.accountant is not None else PrivacyAccountant(self.epsilon, self.delta)
        stream = {key: getattr(self, key) for key in _STREAM_KEYS}
        stream["max_rows_per_user"], stream["min_separation"] = self._unit()
        mean = np.zeros(dim)
        with charging(accountant):
            if mean_target is not None:
                _core.private_mean(X[:0], None, epsilon=mean_target[0], delta=mean_target[1], check_only=True,
                                   **stream)
                stream["relation"] = "replace"
            core = _core._OnlinePCA(k, self.track_regret, self.baseline, accountant._core, dim=dim, epsilon=eps,
                                    delta=delta, **stream)
            if mean_target is not None:
                mean = _core.private_mean(X, accountant._core, epsilon=mean_target[0], delta=mean_target[1],
                                          **stream)["mean"]
        self._core, self.accountant_, self.mean_, self.n_features_in_ = core, accountant, mean, dim
        self._centred = mean_target is not None
        self.__dict__.pop("_model", None)

    def _has_stream(self):
        return self.__dict__.get("_core") is not None or "_model" in self.__dict__

    def _unit(self):
        """(K, B) of the privacy unit; (0, 0) at row level. Checked before any charge."""
        k = self.max_rows_per_user
        if k is None or k == 0:
            if self.min_separation:
                raise ValueError("min_separation needs max_rows_per_user=K (the bound on each user's rows)")
            return 0, 0
        if isinstance(k, bool) or int(k) != k or not 1 <= k < 2**32:
            raise ValueError(f"max_rows_per_user must be an integer in [1, 2^32), got {k!r}")
        b = self.min_separation or 0
        if isinstance(b, bool) or int(b) != b or b < 0:
            raise ValueError(f"min_separation must be an integer >= 0, got {b!r}")
        if self.center:
            raise ValueError("max_rows_per_user with center=True: the private mean is not calibrated for a user")
        return int(k), int(b)

    @property
    def neighbours(self):
        """The neighbouring relation the (epsilon, delta) holds for, in words."""
        row = _core._describe_neighbours("replace" if self.center else "zero_out")
        k, b = self._unit()
        return row if k == 0 else _core._describe_unit(k, b, "user") + ", each: " + row

    @property
    def sensitivity_factor_(self):
        """The stream's sensitivity for one privacy unit over one row's ((factor, exact): exact False
        means a proven upper bound); (1.0, True) at row level."""
        return self._fitted().participation_bound()

    def _bounded(self, X, user_ids):
        """The rows of X the contribution bound keeps (a new bound at a stream's start)."""
        k, b = self._unit()
        if k == 0:
            if user_ids is not None:
                raise ValueError("user_ids= needs max_rows_per_user=K (the bound on each user's rows)")
            return X
        if user_ids is None:
            raise ValueError("max_rows_per_user is set: partial_fit needs user_ids=, one per row of X")
        ids = user_ids.tolist() if isinstance(user_ids, np.ndarray) else list(user_ids)
        if len(ids) != X.shape[0]:
            raise ValueError(f"user_ids has {len(ids)} entries for {X.shape[0]} rows of X")
        core = self.__dict__.get("_core")
        if core is None:
            self._bound, self._presented = _core._ContributionBound(k, b), 0
        # source -> bound -> guard -> stream; a kept row's block is its position in the stream.
        mask = self._bound.admit(ids, self._presented, 0 if core is None else core.rows(), self.block)
        self._presented += len(ids)
        return X[mask]

    @serialised
    def partial_fit(self, X, y=None, user_ids=None):
        """Scores, then ingests, the rows of X (n, d); y is ignored. With max_rows_per_user,
        user_ids (one a row) say whose each row is, and rows over a user's bound are dropped and
        counted (user_counts_). Returns self."""
        if self.__dict__.get("_core") is None and "_model" in self.__dict__:
            raise _core.InvalidParameter("partial_fit: this OnlinePCA was unpickled, which carries the fitted model "
                                         "but not its stream; fit() starts a new stream")
        core = self.__dict__.get("_core")
        X = check_rows(X, "OnlinePCA.partial_fit", None if core is None else self.n_features_in_,
                       finite=0 if core is None else core.guard_counts()["seen"])
        kept = self._bounded(X, user_ids)  # before the first charge: a bad id costs nothing
        if core is None:
            self._start(X)
        if kept.shape[0]:
            self._core.partial_fit(kept - self.mean_ if self._centred else kept)
        return self

    @property
    def budget_description_(self):
        """What the fit is charged to, in the library's words ("accounted against (epsilon=…,
        delta=…)"): accountant_'s budget (the one given, or the one made for (epsilon, delta))."""
        accountant = self.__dict__.get("accountant_")
        if accountant is None:
            raise NotFittedError("this OnlinePCA has seen no rows yet: call fit or partial_fit first")
        return _core._describe_budget(accountant._core)

    @property
    def user_counts_(self):
        """The contribution bound's counts (seen, kept, over_rows, too_close, users, state_bytes,
        max_state_bytes): they depend on the raw data and are NOT private."""
        bound = self.__dict__.get("_bound")
        if bound is None and "_bound_counts" in self.__dict__:
            return dict(self._bound_counts)
        if bound is None:
            raise AttributeError("user_counts_: this OnlinePCA has no max_rows_per_user, or has seen no rows")
        return bound.counts()

    @serialised
    def finish(self):
        """Closes a partial last block: it becomes the last release, which the learner follows."""
        if self.__dict__.get("_core") is not None:
            self._core.finish()
        return self

    @serialised
    def fit(self, X, y=None, user_ids=None):
        """A fresh stream over the rows of X (n, d), then finish(). Returns self."""
        X = check_rows(X, "OnlinePCA.fit", finite=True)
        self._core = None
        self.__dict__.pop("_model", None)
        return self.partial_fit(X, user_ids=user_ids).finish()

    def _fitted(self):
        if self.__dict__.get("_core") is None:
            raise NotFittedError("this OnlinePCA has seen no rows yet: call fit or partial_fit first")
        return self._core

    def _model_or(self, key, read):
        model = self.__dict__.get("_model")
        if model is not None:
            return model[key]
        with self._lock:
            return read(self._fitted())

    @property
    def components_(self):
        """The current subspace V^T (n_components x d): what the next row would be scored with."""
        return self._model_or("components_", lambda core: flip_signs(core.basis().T))

    @property
    def leader_values_(self):
        """Top eigenvalues of the last followed release (private)."""
        return self._model_or("leader_values_", lambda core: core.leader_values())

    explained_variance_ = leader_values_

    @property
    def regret_(self):
        """The regret meter's figures so far (evaluation: raw rows, NOT private)."""
        return self._model_or("regret_", lambda core: core.regret())

    @property
    def guard_counts_(self):
        return self._model_or("guard_counts_", lambda core: core.guard_counts())

    @property
    def n_releases_(self):
        return self._model_or("n_releases_", lambda core: core.steps())

    @property
    def is_secure(self):
        return self._model_or("is_secure", lambda core: core.is_secure())

    @serialised
    def stream_bytes(self):
        """The continual stream's checkpoint (ContinualSumCheckpoint, as the C++ side writes)."""
        return self._fitted().serialize_stream()

    def _fitted_state(self, state):
        core = state.pop("_core", None)
        if core is not None:
            state["_model"] = {"components_": self.components_, "leader_values_": self.leader_values_,
                               "regret_": core.regret() if self.track_regret else None,
                               "guard_counts_": core.guard_counts(), "n_releases_": core.steps(),
                               "is_secure": core.is_secure()}
        state["_core"] = None
        bound = state.pop("_bound", None)
        if bound is not None:  # the bound's state is the stream's, not carried; its counts are
            state["_bound_counts"] = bound.counts()
        return state
