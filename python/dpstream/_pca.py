"""OnlinePCA (private follow-the-perturbed-leader on a continual covariance) and PrivatePCA (one-shot)."""
import numpy as np

from . import _core
from ._privacy import PrivacyAccountant
from ._stream import _rows, _StreamParams


class OnlinePCA(_StreamParams):
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
      before any row is used.
    * regret_, guard_counts_ and everything the meter reports use raw rows: evaluation output,
      NOT private.
    * Noise: secure by default; seed=N is reproducible and NOT secure.
    * Unit level (``max_rows_per_user=K``, optionally ``min_separation=B``): partial_fit then needs
      ``user_ids=`` (one str, bytes or int a row). At most K rows of each user are kept (her first
      K; with B, at most one a block, blocks at least B apart; stream/contribution_bound.hpp), the
      rest dropped and counted in ``user_counts_`` (NOT private), and the stream is calibrated for
      all of one user's rows (K times one row's sensitivity, stream/participation.hpp): the
      neighbouring relation is all rows of one user, each zeroed with its slot kept. The bound's state
      is 96 bytes a user (more for ids over 15 bytes), within a quarter of the memory limit.

    Fitted attributes: components_ (n_components x d, orthonormal rows), n_features_in_,
    accountant_, regret_ (dict: rows, opt, gain, regret, regret_over_opt,
    nonprivate_regret_over_opt with baseline=True), guard_counts_.
    """
    _param_names = ("n_components", "epsilon", "delta", "block", "mechanism", "horizon", "noise_shape", "seed",
                    "normalize", "clip_norm", "calibration", "nonnegative", "track_regret", "baseline",
                    "max_rows_per_user", "min_separation")

    def __init__(self, n_components, epsilon, delta, *, block=128, mechanism="tree", horizon=None,
                 noise_shape="goe", seed=None, normalize="unit", clip_norm=1.0, calibration="tight",
                 nonnegative=False, track_regret=True, baseline=False, accountant=None, max_rows_per_user=None,
                 min_separation=0):
        self.n_components, self.epsilon, self.delta = n_components, epsilon, delta
        self.block, self.mechanism, self.horizon, self.noise_shape = block, mechanism, horizon, noise_shape
        self.seed, self.normalize, self.clip_norm, self.calibration = seed, normalize, clip_norm, calibration
        self.nonnegative, self.track_regret, self.baseline = nonnegative, track_regret, baseline
        self.accountant = accountant
        self.max_rows_per_user, self.min_separation = max_rows_per_user, min_separation
        self._core = None

    def _start(self, dim):
        self.accountant_ = self.accountant if self.accountant is not None else PrivacyAccountant(self.epsilon, self.delta)
        params = {k: v for k, v in self.get_params().items() if k not in ("n_components", "track_regret", "baseline")}
        self._core = _core._OnlinePCA(self.n_components, self.track_regret, self.baseline, self.accountant_._core,
                                      dim=dim, **params)
        self.n_features_in_ = dim
        self._bound, self._presented = None, 0
        if self.max_rows_per_user:
            self._bound = _core._ContributionBound(int(self.max_rows_per_user), int(self.min_separation or 0))

    @property
    def neighbours(self):
        """The neighbouring relation the (epsilon, delta) holds for, in words."""
        row = _core._describe_neighbours("zero_out")
        if not self.max_rows_per_user:
            return row
        text = f"all rows of one user (at most {int(self.max_rows_per_user)} rows kept per user"
        if self.min_separation:
            text += f", one per block, blocks at least {int(self.min_separation)} apart"
        return text + "), each: " + row

    def partial_fit(self, X, y=None, user_ids=None):
        """Scores, then ingests, the rows of X (n, d); with max_rows_per_user, user_ids (one a row)
        say whose each row is, and the rows over a user's bound are dropped. Returns self."""
        X = _rows(X)
        if self.max_rows_per_user and user_ids is None:
            raise ValueError("max_rows_per_user is set: partial_fit needs user_ids=, one per row of X")
        if user_ids is not None and not self.max_rows_per_user:
            raise ValueError("user_ids= needs max_rows_per_user=K (the bound on each user's rows)")
        if self._core is None:
            self._start(X.shape[1])
        if self._bound is not None:
            ids = user_ids.tolist() if isinstance(user_ids, np.ndarray) else list(user_ids)
            if len(ids) != X.shape[0]:
                raise ValueError(f"user_ids has {len(ids)} entries for {X.shape[0]} rows of X")
            # Bounded before the guard (source -> bound -> guard -> stream); a kept row's block is its
            # position in the stream.
            mask = self._bound.admit(ids, self._presented, self._core.rows(), self.block)
            self._presented += len(ids)
            X = X[mask]
            if X.shape[0] == 0:
                return self
        self._core.partial_fit(X)
        return self

    @property
    def user_counts_(self):
        """The bound's counts (seen, kept, over_rows, too_close, users, state bytes): NOT private."""
        if getattr(self, "_bound", None) is None:
            raise AttributeError("user_counts_: this OnlinePCA has no max_rows_per_user, or has seen no rows")
        return self._bound.counts()

    def finish(self):
        """Closes a partial last block: it becomes the last release, which the learner follows."""
        if self._core is not None:
            self._core.finish()
        return self

    def fit(self, X, y=None):
        """A fresh stream over the rows of X (n, d), then finish(). Returns self."""
        self._core = None
        return self.partial_fit(X).finish()

    def _fitted(self):
        if self._core is None:
            raise AttributeError("this OnlinePCA has seen no rows yet: call partial_fit first")
        return self._core

    @property
    def components_(self):
        """The current subspace V^T (n_components x d): what the next row would be scored with."""
        return self._fitted().basis().T

    @property
    def leader_values_(self):
        """Top eigenvalues of the last followed release (private)."""
        return self._fitted().leader_values()

    @property
    def regret_(self):
        """The regret meter's figures so far (evaluation: raw rows, NOT private)."""
        return self._fitted().regret()

    @property
    def guard_counts_(self):
        return self._fitted().guard_counts()

    @property
    def n_releases_(self):
        return self._fitted().steps()

    @property
    def is_secure(self):
        return self._fitted().is_secure()

    def transform(self, X):
        """X (n, d) projected onto the subspace: X @ components_.T (n x n_components)."""
        return self._fitted().transform(_rows(X))

    def stream_bytes(self):
        """The continual stream's checkpoint (ContinualSumCheckpoint, as the C++ side writes)."""
        return self._fitted().serialize_stream()


class PrivatePCA(_StreamParams):
    """One-shot private PCA of the rows of X by one of dpstream-pca's methods (tools/pca).

    * method='gauss': Analyze Gauss, Algorithm 1 (pca/gaussian_pca.hpp): one release
      C + E of the covariance, E symmetric Gaussian; sensitivity L^2 (add/remove one row).
    * method='power': the noisy power method (Hardt & Price 2014; pca/noisy_power_method.hpp):
      ``iterations`` Gaussian rounds (default 5), sensitivity L^2 each, jointly mu-GDP.
    * method='oja': private Oja (pca/private_oja.hpp), k > 1 by deflation.

    Neighbouring relation (``neighbours``): one row added or removed (each method releases a
    function of the set of rows, so order does not matter), every row ||a||_2 <= L
    (normalize='unit', L = 1, the default; 'clip'/'none' with clip_norm). Privacy unit: one row.
    guard_counts_ is exact: NOT private. Each fit is (epsilon, delta)-DP and charges the
    accountant (``accountant_``; one with budget (epsilon, delta) if none is given) before any
    noise is drawn: BudgetExhausted leaves nothing released. Noise: secure by default; seed=N is
    reproducible and NOT secure.

    Fitted attributes: components_ (n_components x d), explained_variance_ (private eigenvalue
    estimates of X^T X, when the method releases them), n_features_in_, accountant_, guard_counts_.
    """
    _param_names = ("method", "n_components", "epsilon", "delta", "iterations", "normalize", "clip_norm",
                    "calibration", "seed")

    def __init__(self, method="gauss", n_components=10, epsilon=1.0, delta=1e-6, *, iterations=None,
                 normalize="unit", clip_norm=1.0, calibration="tight", seed=None, accountant=None):
        self.method, self.n_components, self.epsilon, self.delta = method, n_components, epsilon, delta
        self.iterations, self.normalize, self.clip_norm = iterations, normalize, clip_norm
        self.calibration, self.seed, self.accountant = calibration, seed, accountant

    def fit(self, X, y=None):
        X = _rows(X)
        self.accountant_ = self.accountant if self.accountant is not None else PrivacyAccountant(self.epsilon, self.delta)
        out = _core.private_pca_fit(X, self.method, self.n_components, self.accountant_._core,
                                    epsilon=self.epsilon, delta=self.delta, iterations=self.iterations,
                                    normalize=self.normalize, clip_norm=self.clip_norm,
                                    calibration=self.calibration, seed=self.seed)
        self.components_ = np.ascontiguousarray(out["vectors"].T)
        self.explained_variance_ = out["values"]
        self.guard_counts_ = out["counts"]
        self.n_features_in_ = X.shape[1]
        return self

    @property
    def neighbours(self):
        """The neighbouring relation the (epsilon, delta) holds for, in words."""
        return _core._describe_neighbours("add_remove")

    def transform(self, X):
        return _rows(X) @ self.components_.T

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)
