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
                    "centering_share", "accountant")

    def __init__(self, n_components=None, epsilon=1.0, delta=1e-6, *, block=128, mechanism="tree", horizon=None,
                 noise_shape="goe", seed=None, normalize="unit", clip_norm=1.0, calibration="tight",
                 nonnegative=False, track_regret=True, baseline=False, center=False, centering_share=0.25,
                 accountant=None):
        self.n_components, self.epsilon, self.delta = n_components, epsilon, delta
        self.block, self.mechanism, self.horizon, self.noise_shape = block, mechanism, horizon, noise_shape
        self.seed, self.normalize, self.clip_norm, self.calibration = seed, normalize, clip_norm, calibration
        self.nonnegative, self.track_regret, self.baseline = nonnegative, track_regret, baseline
        self.center, self.centering_share = center, centering_share
        self.accountant = accountant

    def _start(self, X):
        """The stream (its one charge) and, with centring, the mean of X (its charge), in that order
        after every setting was checked."""
        dim = X.shape[1]
        k = dim if self.n_components is None else self.n_components
        mean_target, (eps, delta) = centring_budget(self.epsilon, self.delta, self.center, self.centering_share,
                                                     self.normalize)
        accountant = self.accountant if self.accountant is not None else PrivacyAccountant(self.epsilon, self.delta)
        stream = {key: getattr(self, key) for key in _STREAM_KEYS}
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

    @property
    def neighbours(self):
        """The neighbouring relation the (epsilon, delta) holds for, in words."""
        return _core._describe_neighbours("replace" if self.center else "zero_out")

    @serialised
    def partial_fit(self, X, y=None):
        """Scores, then ingests, the rows of X (n, d); y is ignored. Returns self."""
        if self.__dict__.get("_core") is None and "_model" in self.__dict__:
            raise _core.InvalidParameter("partial_fit: this OnlinePCA was unpickled, which carries the fitted model "
                                         "but not its stream; fit() starts a new stream")
        core = self.__dict__.get("_core")
        X = check_rows(X, "OnlinePCA.partial_fit", None if core is None else self.n_features_in_,
                       finite=0 if core is None else core.guard_counts()["seen"])
        if core is None:
            self._start(X)
        self._core.partial_fit(X - self.mean_ if self._centred else X)
        return self

    @serialised
    def finish(self):
        """Closes a partial last block: it becomes the last release, which the learner follows."""
        if self.__dict__.get("_core") is not None:
            self._core.finish()
        return self

    @serialised
    def fit(self, X, y=None):
        """A fresh stream over the rows of X (n, d), then finish(). Returns self."""
        X = check_rows(X, "OnlinePCA.fit", finite=True)
        self._core = None
        self.__dict__.pop("_model", None)
        return self.partial_fit(X).finish()

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
        return state
