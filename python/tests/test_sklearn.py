"""scikit-learn's contract: check_estimator (the checks a randomised DP estimator fails declared, and
shown to fail for that reason only), set_params, clone that keeps a shared budget, pickling and
deepcopy, the transformer attributes, and private centring."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import dpstream
from conftest import bounded_rows

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.utils import estimator_checks  # noqa: E402

ESTIMATORS = [dpstream.PrivatePCA, dpstream.OnlinePCA]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_check_estimator_passes_but_for_the_declared_checks(cls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the declared checks are skipped with a SkipTestWarning
        estimator_checks.check_estimator(cls())


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_the_declared_checks_fail_for_secure_noise_and_pass_when_seeded(cls):
    # Each declared failure is the noise: it fails with secure (fresh) noise, passes with seed=.
    declared = cls()._more_tags()["_xfail_checks"]
    assert set(declared) == {"check_fit_idempotent", "check_transformer_general",
                             "check_transformer_data_not_an_array", "check_pipeline_consistency"}
    for name in declared:
        check = getattr(estimator_checks, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(AssertionError):
                check(cls.__name__, cls())
            check(cls.__name__, cls(seed=3))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_clone_keeps_a_shared_accountant_so_cross_validation_cannot_reset_the_budget(cls):
    x = bounded_rows(100, 5, seed=1)
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)  # one fit's budget
    est = cls(n_components=2, epsilon=1.0, delta=1e-6, accountant=acct)
    assert clone(est).accountant is acct and copy.deepcopy(est).accountant is acct
    with pytest.raises(dpstream.BudgetExhausted):
        cross_val_score(est, x, cv=5, error_score="raise", scoring=lambda e, X, y=None: 0.0)
    assert len(acct.ledger) == 1  # the first fold spent the budget; the second was refused


def test_set_params_grid_search_and_pipeline():
    rng = np.random.default_rng(2)
    x = bounded_rows(120, 6, seed=2)
    y = (x[:, 0] > 0).astype(int)
    from sklearn.linear_model import LogisticRegression
    pipe = make_pipeline(dpstream.PrivatePCA(seed=1), LogisticRegression())
    pipe.set_params(privatepca__n_components=3, privatepca__epsilon=2.0)
    assert pipe.steps[0][1].n_components == 3 and pipe.steps[0][1].epsilon == 2.0
    grid = GridSearchCV(pipe, {"privatepca__n_components": [1, 2]}, cv=2).fit(x, y)
    assert grid.best_params_["privatepca__n_components"] in (1, 2)
    with pytest.raises(ValueError, match="Invalid parameter 'bogus'"):
        dpstream.OnlinePCA().set_params(bogus=1)
    assert rng is not None


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_pickle_and_deepcopy_carry_the_fitted_model_and_the_ledger(cls):
    x = bounded_rows(200, 6, seed=3)
    est = cls(n_components=2, seed=5, block=32) if cls is dpstream.OnlinePCA else cls(n_components=2, seed=5)
    est.fit(x)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.transform(x), est.transform(x))
    assert again.accountant_.ledger == est.accountant_.ledger and again.accountant_ is not est.accountant_
    assert again.get_params().keys() == est.get_params().keys()
    twin = copy.deepcopy(est)
    np.testing.assert_array_equal(twin.transform(x), est.transform(x))
    assert twin.accountant_ is est.accountant_  # a budget is never copied
    if cls is dpstream.OnlinePCA:
        assert again.regret_ == est.regret_ and again.guard_counts_ == est.guard_counts_
        with pytest.raises(dpstream.InvalidParameter, match="unpickled"):
            again.partial_fit(x)  # the stream (and its noise key) is not in the pickle
        again.fit(x)  # a new stream


def test_a_pickle_of_a_secure_online_pca_holds_no_stream_state():
    x = bounded_rows(64, 4, seed=4)
    est = dpstream.OnlinePCA(2, block=16).fit(x)  # secure noise
    state = pickle.loads(pickle.dumps(est)).__dict__
    assert state["_core"] is None and set(state["_model"]) == {"components_", "leader_values_", "regret_",
                                                                "guard_counts_", "n_releases_", "is_secure"}


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_transformer_attributes_and_deterministic_signs(cls):
    x = bounded_rows(300, 5, seed=6)
    est = cls(n_components=3, seed=7)
    z = est.fit_transform(x)
    v = est.components_
    assert z.shape == (300, 3) and est.n_components_ == 3 and est.n_features_in_ == 5
    assert np.all(v[np.arange(3), np.argmax(np.abs(v), axis=1)] > 0)  # largest |entry| positive
    np.testing.assert_allclose(est.inverse_transform(z), z @ v, atol=1e-12)
    np.testing.assert_allclose(est.singular_values_, np.sqrt(np.maximum(est.explained_variance_, 0)))
    assert not hasattr(est, "explained_variance_ratio_")  # not released (the docstring says why)
    assert cls().n_components is None and cls().epsilon == 1.0  # constructor defaults


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_private_centring_finds_the_direction_of_largest_variance_not_the_mean(cls):
    # Rows offset by a large mean along e_0, most variance along e_1. Uncentred, the top direction is
    # the mean's; centred (a private mean with a quarter of a large budget), sklearn's first component.
    rng = np.random.default_rng(8)
    n, d = 4000, 4
    x = np.zeros((n, d))
    x[:, 0] = 0.6
    x[:, 1] = rng.uniform(-0.4, 0.4, n)
    x[:, 2:] = rng.uniform(-0.05, 0.05, (n, 2))
    kw = dict(n_components=1, epsilon=20.0, delta=1e-6, normalize="clip", clip_norm=1.0, seed=9)
    if cls is dpstream.OnlinePCA:
        kw.update(block=500, track_regret=False)
    plain = cls(**kw).fit(x)
    centred = cls(center=True, **kw).fit(x)
    assert abs(plain.components_[0, 0]) > 0.9
    assert abs(centred.components_[0, 1]) > 0.9
    # mean_ error: per coordinate sigma / n (sigma of the mean's Gaussian mechanism, < 1 at this
    # budget and n = 4000): 6 sigma / n < 0.002 bounds it with probability > 1 - 1e-8 a coordinate.
    np.testing.assert_allclose(centred.mean_, x.mean(axis=0), atol=0.002)
    labels = [c["label"] for c in centred.accountant_.ledger]
    assert "private mean (centring)" in labels and len(labels) == 2
    assert centred.accountant_.spent.basic_epsilon <= 20.0 * (1 + 1e-9)
    if cls is dpstream.OnlinePCA:
        assert "replaced" in centred.neighbours
    with pytest.raises(dpstream.InvalidParameter, match="normalize='clip'"):
        cls(center=True).fit(x)
