"""OnlinePCA at the unit level: user_ids= bound each user's rows before the stream, which is
calibrated for all of one user's rows. Seeded streams (reproducible, NOT secure noise)."""
import numpy as np
import pytest

import dpstream


def stream(**kw):
    return dpstream.OnlinePCA(2, 1.0, 1e-6, block=4, mechanism="tree", seed=3, **kw)


def test_a_users_rows_over_the_bound_are_dropped_and_counted():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((12, 5))
    ids = ["a", "b", "a", "a", 7, "b", "a", 7, b"c", "a", 7, 7]
    unit = stream(max_rows_per_user=2).partial_fit(X, user_ids=ids)
    counts = unit.user_counts_
    assert (counts["seen"], counts["kept"], counts["over_rows"], counts["users"]) == (12, 7, 5, 4)
    # Kept: a's first two, b's two, 7's first two, and c.
    kept = [0, 1, 2, 4, 5, 7, 8]
    assert unit.n_releases_ == len(kept) // 4
    assert unit._core.rows() == len(kept)
    assert "all rows of one user (at most 2 rows kept per user)" in unit.neighbours


def test_unit_level_noise_is_k_times_row_level():
    # Zero rows: each release is pure noise, drawn from the same seeded draws; at the unit level the
    # stream is calibrated for 4 rows, so its noise is 4 times the row level's (4 is a power of two:
    # the snapping grid scales with it), and so are the eigenvalues the learner follows (to rounding).
    X = np.zeros((8, 4))
    row = stream().partial_fit(X)
    unit = stream(max_rows_per_user=4).partial_fit(X, user_ids=list(range(8)))
    assert unit.n_releases_ == row.n_releases_ == 2
    np.testing.assert_allclose(unit.leader_values_, 4 * row.leader_values_, rtol=1e-9)
    assert unit.accountant_.spent.epsilon == pytest.approx(1.0, rel=1e-6)


def test_bad_user_ids_are_refused_naming_the_row():
    X = np.ones((3, 4)) / 2
    with pytest.raises(ValueError, match="needs user_ids"):
        stream(max_rows_per_user=1).partial_fit(X)
    with pytest.raises(ValueError, match="needs max_rows_per_user"):
        stream().partial_fit(X, user_ids=[1, 2, 3])
    with pytest.raises(ValueError, match="2 entries for 3 rows"):
        stream(max_rows_per_user=1).partial_fit(X, user_ids=[1, 2])
    with pytest.raises(Exception, match="row 1.*empty"):
        stream(max_rows_per_user=1).partial_fit(X, user_ids=["a", "", "b"])
    with pytest.raises(Exception, match="row 2.*not a str, bytes or int"):
        stream(max_rows_per_user=1).partial_fit(X, user_ids=["a", "b", 1.5])


def test_separation_keeps_one_row_a_block_and_costs_less_noise():
    # b = 2: a user's rows at least 2 blocks apart (block = 4 rows: kept positions 0-3 are block 0).
    X = np.ones((12, 4)) / 2
    ids = ["a", "a", "b", "a", "b", "c", "a", "d", "a", "e", "f", "a"]
    unit = stream(max_rows_per_user=3, min_separation=2).partial_fit(X, user_ids=ids)
    counts = unit.user_counts_
    assert counts["too_close"] > 0 and counts["kept"] + counts["too_close"] + counts["over_rows"] == 12
    assert "at most one a release, releases at least 2 apart" in unit.neighbours
    # The factor: exactly k for b = 0 (rows may share a block), at most k with a separation.
    shared = stream(max_rows_per_user=3).partial_fit(X, user_ids=ids)
    assert shared.sensitivity_factor_[0] == pytest.approx(3.0, rel=1e-12) and shared.sensitivity_factor_[1]
    assert unit.sensitivity_factor_[0] <= 3.0
    assert stream().partial_fit(X).sensitivity_factor_ == (1.0, True)


def test_bad_unit_settings_are_refused_before_any_charge():
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    X = np.ones((3, 4)) / 2
    with pytest.raises(ValueError, match="min_separation needs max_rows_per_user"):
        stream(min_separation=2, accountant=acct).partial_fit(X)
    with pytest.raises(ValueError, match="center=True"):
        dpstream.OnlinePCA(2, 1.0, 1e-6, normalize="clip", center=True, max_rows_per_user=2,
                           accountant=acct).partial_fit(X, user_ids=[1, 2, 3])
    with pytest.raises(Exception, match="row 1.*empty"):
        stream(max_rows_per_user=1, accountant=acct).partial_fit(X, user_ids=["a", "", "b"])
    assert acct.ledger == []
