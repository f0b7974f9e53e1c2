"""The Python API wires the library: releases, accountant, checkpoints, OnlinePCA and PrivatePCA.

Every stream here is seeded (reproducible, NOT secure noise) so that assertions are exact."""
import os
import pickle
import stat

import numpy as np
import pytest

import dpstream
from conftest import bounded_rows

SNAP_BITS = 30  # privacy/snap.hpp: releases are snapped to a grid of spacing ~ sigma * 2^-30


def guarded(x, bound=1.0):
    """What RowGuard (normalize='clip') does to rows: a <- a * L / ||a|| above the bound."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.where(norms > bound, x * (bound / norms), x)


def test_a_release_is_the_exact_prefix_plus_data_independent_noise(rows):
    # Same seed, same options: a stream of zero rows draws the same noise, so releases differ by the
    # exact prefix sum a a^T. Tolerance: the snap (<= half a grid step of ~sigma * 2^-30 per entry) in
    # each of the two releases, plus the rounding of exact + noise and of numpy's own sum (a few ulps
    # of the largest magnitude): 4 * (sigma * 2^(1-30) + scale * 2^-52).
    data = dpstream.ContinualCovariance(5, 1.0, 1e-6, block=4, mechanism="tree", horizon=15, seed=99)
    zero = dpstream.ContinualCovariance(5, 1.0, 1e-6, block=4, mechanism="tree", horizon=15, seed=99)
    released = data.update(rows)
    zeros = zero.update(np.zeros_like(rows))
    assert len(released) == 15 and [r.step for r in released] == list(range(1, 16))
    a = guarded(rows)
    for r, z in zip(released, zeros):
        exact = a[: r.rows].T @ a[: r.rows]
        sigma = np.sqrt(r.noise_variance)
        scale = np.abs(r.noisy_second_moment).max() + np.abs(z.noisy_second_moment).max()
        tol = 4 * (sigma * 2.0 ** (1 - SNAP_BITS) + scale * np.finfo(float).eps)
        assert np.abs(r.noisy_second_moment - z.noisy_second_moment - exact).max() <= tol
        assert np.array_equal(r.noisy_second_moment, r.noisy_second_moment.T)  # bitwise symmetric
        assert r.noise_variance == data.release_variance(r.step)
        assert r.off_diagonal_noise_variance == pytest.approx(r.noise_variance / 2, rel=1e-12)  # goe
    assert data.guard_counts["clipped"] == int((np.linalg.norm(rows, axis=1) > 1).sum()) > 0
    assert not data.is_secure
    assert dpstream.ContinualCovariance(5, 1.0, 1e-6).is_secure  # secure noise unless seeded


def test_layouts_callback_and_iteration_give_the_same_releases(rows):
    # float32 rows are the float64 stream of their (exactly converted) values; Fortran order and
    # row-by-row updates ingest the same rows: releases bit for bit (same seed, same sums).
    def stream(**kw):
        return dpstream.ContinualCovariance(5, 1.0, 1e-6, block=6, seed=5, **kw)

    x32 = rows.astype(np.float32)
    reference = [r.noisy_second_moment.copy() for r in stream().update(x32.astype(np.float64))]
    assert all(np.array_equal(r.noisy_second_moment, b) for r, b in zip(stream().update(x32), reference))
    seen = []
    s = stream(callback=seen.append)
    s.update(np.asfortranarray(x32.astype(np.float64)))
    assert all(np.array_equal(a.noisy_second_moment, b) for a, b in zip(seen, reference))
    chunks = [x32[i : i + 7].astype(np.float64) for i in range(0, 60, 7)]
    iterated = list(stream().releases(chunks))
    assert len(iterated) == 10 and all(np.array_equal(a.noisy_second_moment, b) for a, b in zip(iterated, reference))
    single = stream()
    for row in x32.astype(np.float64)[:6]:
        single.update(row)  # a 1-d row is one row
    assert np.array_equal(single.latest.noisy_second_moment, reference[0])


def test_the_accountant_is_shared_and_charged_once_per_stream(rows):
    acct = dpstream.PrivacyAccountant(2.0, 1e-5)
    a = dpstream.ContinualCovariance(5, 1.0, 1e-6, block=10, seed=1, accountant=acct)
    assert len(acct.ledger) == 1  # at construction, before any row
    a.update(rows)
    assert len(acct.ledger) == 1  # releases are post-processing
    dpstream.PrivatePCA("gauss", 2, 0.5, 1e-6, seed=2, accountant=acct).fit(rows)
    assert len(acct.ledger) == 2
    spent = acct.spent.epsilon
    assert spent <= 2.0 * (1 + 1e-9) and acct.remaining == pytest.approx(2.0 - spent)
    with pytest.raises(dpstream.BudgetExhausted, match="continual covariance sum"):
        dpstream.ContinualCovariance(5, 2.0, 1e-6, seed=3, accountant=acct)  # 2.0 on top of what was spent
    assert len(acct.ledger) == 2 and acct.spent.epsilon == spent  # refused: nothing charged
    back = dpstream.PrivacyAccountant.from_bytes(acct.to_bytes())
    assert back.ledger == acct.ledger and back.spent == acct.spent


def test_the_budget_is_described_in_the_librarys_words(rows):
    acct = dpstream.PrivacyAccountant(2.0, 1e-5)
    stream = dpstream.ContinualCovariance(5, 1.0, 1e-6, seed=1, accountant=acct)
    assert stream.budget_description == "accounted against (epsilon=2, delta=1e-05)"  # the accountant's
    alone = dpstream.ContinualCovariance(5, 1.0, 1e-6, seed=1)  # no accountant: its reason, stated
    assert alone.budget_description == "not accounted: ContinualCovariance: no accountant was given (accountant=None)"
    fit = dpstream.PrivatePCA("gauss", 2, 0.5, 1e-6, seed=2).fit(rows)
    assert fit.budget_description_ == "accounted against (epsilon=0.5, delta=1e-06)"
    online = dpstream.OnlinePCA(n_components=2, epsilon=0.5, delta=1e-6, seed=3, block=10)
    with pytest.raises(dpstream.NotFittedError):
        online.budget_description_
    online.partial_fit(rows)
    assert online.budget_description_ == "accounted against (epsilon=0.5, delta=1e-06)"  # the one it made
    assert pickle.loads(pickle.dumps(online)).budget_description_ == online.budget_description_
    given = dpstream.OnlinePCA(n_components=2, seed=3, block=10, accountant=dpstream.PrivacyAccountant(3.0, 1e-5))
    assert given.partial_fit(rows).budget_description_ == "accounted against (epsilon=3, delta=1e-05)"


def test_checkpoints_continue_bit_identically(tmp_path, rows):
    params = dict(dim=5, epsilon=1.0, delta=1e-6, block=8, mechanism="blt", horizon=8, seed=4)
    whole = dpstream.ContinualCovariance(**params)
    whole_releases = whole.update(rows)
    half = dpstream.ContinualCovariance(**params)
    half.update(rows[:21])  # mid-block
    path = tmp_path / "stream.ckpt"
    half.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # raw sums: owner only
    for restored in (dpstream.ContinualCovariance.from_bytes(half.to_bytes(), **params),
                     dpstream.ContinualCovariance.load(path, **params)):
        assert restored.rows == 21 and restored.steps == 2
        later = restored.update(rows[21:])
        assert all(np.array_equal(a.noisy_second_moment, b.noisy_second_moment) for a, b in zip(later, whole_releases[2:]))
    with pytest.raises(dpstream.CorruptInput, match="epsilon"):
        dpstream.ContinualCovariance.from_bytes(half.to_bytes(), **{**params, "epsilon": 2.0})
    damaged = bytearray(half.to_bytes())
    damaged[len(damaged) // 2] ^= 1
    with pytest.raises(dpstream.CorruptInput):
        dpstream.ContinualCovariance.from_bytes(bytes(damaged), **params)


def test_a_restore_never_lowers_the_spend_and_the_journal_refuses_other_rows(tmp_path, rows):
    acct = dpstream.PrivacyAccountant(2.0, 1e-6)
    params = dict(dim=5, epsilon=1.0, delta=1e-6, block=4, mechanism="tree", horizon=8, seed=4,
                  journal=tmp_path / "stream.journal")
    stream = dpstream.ContinualCovariance(**params, accountant=acct)
    stream.update(rows[:4])
    checkpoint = stream.to_bytes()
    published = stream.update(rows[4:8])[0].noisy_second_moment.copy()  # release 2, then a crash
    dpstream.PrivatePCA("gauss", 2, 0.5, 1e-6, seed=2, accountant=acct).fit(rows)  # another mechanism
    spent = acct.spent.epsilon
    restored = dpstream.ContinualCovariance.from_bytes(checkpoint, accountant=acct, **params)
    assert acct.spent.epsilon == spent and len(acct.ledger) == 2  # not back to the checkpoint's one charge
    other = rows[4:8].copy()
    other[0] = rows[50]  # another row in place of row 4
    with pytest.raises(dpstream.InvalidParameter, match="differs from the one published before the restore"):
        restored.update(other)
    again = dpstream.ContinualCovariance.from_bytes(checkpoint, **params)
    assert np.array_equal(again.update(rows[4:8])[0].noisy_second_moment, published)


def test_online_pca_follows_the_releases_and_meters_its_regret():
    x = bounded_rows(640, 12, seed=8, over=0.0)
    x[:, :3] *= 6  # a dominant 3-subspace
    pca = dpstream.OnlinePCA(3, 1.0, 1e-6, block=64, mechanism="tree", seed=6, baseline=True)
    for i in range(0, 640, 100):  # chunks that do not line up with the blocks
        pca.partial_fit(x[i : i + 100])
    pca.finish()
    v = pca.components_
    assert v.shape == (3, 12)
    np.testing.assert_allclose(v @ v.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(pca.transform(x[:5]), x[:5] @ v.T, rtol=1e-12, atol=1e-12)
    r = pca.regret_
    assert r["rows"] == 640 and r["regret"] == pytest.approx(r["opt"] - r["gain"], rel=1e-12)
    assert 0 <= r["gain"] <= r["opt"]
    # One fit over the same rows in one call: the same protocol (blocks of 64), the same figures.
    # Chunking changes only how a block's rows are cut into rank-k updates: within 1e-9 relative.
    one = dpstream.OnlinePCA(3, 1.0, 1e-6, block=64, mechanism="tree", seed=6, baseline=True).fit(x)
    assert one.regret_["regret"] == pytest.approx(r["regret"], rel=1e-9)
    assert one.n_releases_ == 10 and len(one.accountant_.ledger) == 1


@pytest.mark.parametrize("method", ["gauss", "power", "oja"])
def test_private_pca_methods(method):
    x = bounded_rows(400, 8, seed=11, over=0.0)
    fit = dpstream.PrivatePCA(method, 2, 1.0, 1e-6, seed=3).fit(x)
    v = fit.components_
    assert v.shape == (2, 8)
    np.testing.assert_allclose(v @ v.T, np.eye(2), atol=1e-9)
    again = dpstream.PrivatePCA(method, 2, 1.0, 1e-6, seed=3).fit(x)
    assert np.array_equal(again.components_, v)  # seeded: reproducible (and NOT secure)
    assert len(fit.accountant_.ledger) >= 1 and fit.accountant_.spent.epsilon <= 1.0 * (1 + 1e-9)
    assert fit.transform(x).shape == (400, 2)


def test_the_readme_quick_start_runs_as_printed(capsys):
    # The first ```python block of README.md, run as printed (its secure noise makes the figures vary:
    # the check is that it runs and prints what it says; the strong 3-subspace is found). Every block
    # runs as a script in test_docs.py.
    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    blocks = text.split("```python\n")
    code = blocks[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 10
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "subspace (3, 50) spent epsilon 1.0" in out
    regret = float(out.split("regret/OPT")[1])
    # 3 directions with 25x the variance of the other 47: data seeds 1-5 (secure noise) gave 0.033-0.039;
    # a random 3-subspace would capture ~3/50 of the variance, regret/OPT ~ 0.9.
    assert 0 <= regret < 0.1
