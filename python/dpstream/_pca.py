"""PrivatePCA (one-shot) and what it shares with OnlinePCA: the scikit-learn transformer surface and the
private centring."""
import numpy as np

from . import _core
from ._estimator import NotFittedError, Params, check_rows, flip_signs, serialised
from ._privacy import PrivacyAccountant, charging

# The checks of scikit-learn's check_estimator that a randomised DP estimator fails by design: each
# fit draws fresh secure noise unless seed= is given, and check_estimator only seeds `random_state`.
NONDETERMINISTIC_CHECKS = {
    "check_fit_idempotent": "two fits draw independent secure noise (seed= makes fits reproducible, NOT secure)",
    "check_transformer_general": "fit_transform and fit().transform are two fits: two independent noise draws",
    "check_transformer_data_not_an_array": "as check_transformer_general: two fits, two independent noise draws",
    "check_pipeline_consistency": "the pipeline and the bare estimator are two fits: two independent noise draws",
}


class PcaTransformer(Params):
    """The transformer surface of a fitted PCA: transform, inverse_transform, fit_transform and the
    attributes that are post-processing of the private release (see the classes' docstrings)."""

    def _require_fitted(self):
        if "components_" not in self.__dict__ and not self._has_stream():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit (or partial_fit) first")

    def _has_stream(self):
        return False

    def __sklearn_is_fitted__(self):
        try:
            self._require_fitted()
            return True
        except NotFittedError:
            return False

    @property
    def n_components_(self):
        return self.components_.shape[0]

    @property
    def singular_values_(self):
        """sqrt of the private eigenvalue estimates of X^T X (clipped at 0): post-processing."""
        values = self.explained_variance_
        return None if values is None else np.sqrt(np.maximum(values, 0.0))

    @property
    def explained_variance_ratio_(self):
        raise AttributeError(
            "explained_variance_ratio_ is not released: it needs the total variance trace(X^T X), a "
            "further statistic of the data that no mechanism here releases (the methods release the top "
            "eigenpairs only); explained_variance_ holds the private eigenvalue estimates")

    @serialised
    def transform(self, X):
        """(X - mean_) @ components_.T (n x n_components); mean_ is 0 without centring."""
        self._require_fitted()
        name = type(self).__name__
        X = check_rows(X, f"{name}.transform", self.n_features_in_, finite=True)
        return (X - self.mean_) @ self.components_.T

    @serialised
    def inverse_transform(self, X):
        """Z @ components_ + mean_: back to the input space (post-processing)."""
        self._require_fitted()
        name = type(self).__name__
        Z = check_rows(X, f"{name}.inverse_transform", self.n_components_, finite=True)
        return Z @ self.components_ + self.mean_

    def fit_transform(self, X, y=None):
        with self._lock:
            return self.fit(X).transform(X)

    def _more_tags(self):
        return {"requires_y": False, "X_types": ["2darray"], "preserves_dtype": [np.float64],
                "_xfail_checks": dict(NONDETERMINISTIC_CHECKS)}


def centring_budget(epsilon, delta, center, share, normalize):
    """(mean's (epsilon, delta) or None, the rest's): the mean takes `share` of both (basic composition:
    the two charges add up to at most (epsilon, delta))."""
    if not center:
        return None, (epsilon, delta)
    if normalize == "unit":
        raise _core.InvalidParameter("center=True needs normalize='clip' (or 'none') with clip_norm bounding the "
                                     "rows: under normalize='unit' the mean would be that of the unit-scaled rows, "
                                     "not of the data that transform() centres")
    if not isinstance(share, (int, float)) or not 0 < share < 1:
        raise _core.InvalidParameter(f"centering_share {share!r}: expected a number in (0, 1)")
    return (share * epsilon, share * delta), ((1 - share) * epsilon, (1 - share) * delta)


class PrivatePCA(PcaTransformer):
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
    reproducible and NOT secure. n_components=None: all d components.

    Centring (center=True, with normalize='clip' or 'none'; the default is the uncentred second moment X^T X, whose top direction is
    often the mean's): first a private mean (dpstream._core.private_mean: one Gaussian mechanism on
    (sum of rows, L * count), sensitivity sqrt(2) L under add/remove) with ``centering_share`` of
    epsilon and of delta, then the PCA of the rows minus that mean (each centred row through the
    same guard, bound L) with the rest. The two charges compose to at most (epsilon, delta) (basic
    composition; the ledger may report less). Cost: the PCA's noise grows by 1/(1 - share) (1.33x at
    the default 0.25) and mean_ has per-coordinate noise sigma / n (``mean_noise_sigma_``).

    Fitted attributes: components_ (n_components x d, each row's largest |entry| positive: signs are
    deterministic post-processing), explained_variance_ (private eigenvalue estimates of X^T X of the
    (centred) rows, when the method releases them: gauss and power; None for oja),
    singular_values_ (their square roots), mean_ (the private mean, or zeros), n_features_in_,
    n_components_, accountant_, guard_counts_, budget_description_ (what the fit was charged to, in the
    library's words: "accounted against (epsilon=..., delta=...)"). explained_variance_ratio_ is NOT given (it needs the
    total variance, which nothing releases). transform, inverse_transform and fit_transform are
    post-processing.

    Thread-safe (one lock per object). A signal (Ctrl-C) stops fit() with KeyboardInterrupt and
    charges nothing: the release runs against a copy of the ledger, which the accountant takes only
    when the release completes (the computation in flight finishes on a background thread and is
    discarded). With center=True the mean's release comes first and stays charged if the PCA after
    it is interrupted. Pickle/deepcopy carry the fitted state and the accountant's ledger (deepcopy and
    clone share the accountant itself: see PrivacyAccountant).
    """
    _param_names = ("method", "n_components", "epsilon", "delta", "iterations", "normalize", "clip_norm",
                    "calibration", "seed", "center", "centering_share", "accountant")

    def __init__(self, method="gauss", n_components=None, epsilon=1.0, delta=1e-6, *, iterations=None,
                 normalize="unit", clip_norm=1.0, calibration="tight", seed=None, center=False,
                 centering_share=0.25, accountant=None):
        self.method, self.n_components, self.epsilon, self.delta = method, n_components, epsilon, delta
        self.iterations, self.normalize, self.clip_norm = iterations, normalize, clip_norm
        self.calibration, self.seed, self.accountant = calibration, seed, accountant
        self.center, self.centering_share = center, centering_share

    @serialised
    def fit(self, X, y=None):
        """Fits on the rows of X (n, d); y is ignored. Every setting and the shape of X are checked
        before anything is charged."""
        X = check_rows(X, "PrivatePCA.fit", finite=True)
        d = X.shape[1]
        k = d if self.n_components is None else self.n_components
        mean_target, (eps, delta) = centring_budget(self.epsilon, self.delta, self.center, self.centering_share,
                                                     self.normalize)
        settings = dict(iterations=self.iterations, normalize=self.normalize, clip_norm=self.clip_norm,
                        calibration=self.calibration, seed=self.seed)
        accountant = self.accountant if self.accountant is not None else PrivacyAccountant(self.epsilon, self.delta)
        mean = np.zeros(d)
        self.__dict__.pop("mean_noise_sigma_", None)
        with charging(accountant):
            if mean_target is not None:  # both mechanisms' settings checked before the first charge
                _core.private_mean(X[:0], None, epsilon=mean_target[0], delta=mean_target[1], check_only=True,
                                   **settings)
                _core.private_pca_fit(X[:0], self.method, k, None, epsilon=eps, delta=delta, check_only=True,
                                      **settings)
                centred = _core.private_mean(X, accountant._core, epsilon=mean_target[0], delta=mean_target[1],
                                             **settings)
                mean = centred["mean"]
                self.mean_noise_sigma_ = centred["sigma"]
            out = _core.private_pca_fit(X - mean if mean_target is not None else X, self.method, k,
                                        accountant._core, epsilon=eps, delta=delta, **settings)
        self.accountant_ = accountant
        self.mean_ = mean
        self.components_ = flip_signs(out["vectors"].T)
        self.explained_variance_ = out["values"] if len(out["values"]) else None
        self.guard_counts_ = out["counts"]
        self.budget_description_ = out["budget"]
        self.n_features_in_ = d
        return self

    @property
    def neighbours(self):
        """The neighbouring relation the (epsilon, delta) holds for, in words."""
        return _core._describe_neighbours("add_remove")
