"""dpstream.dask on a distributed.LocalCluster of 2 worker processes on loopback: the releases equal a
single process's, the budget is charged once, bad rows are named by their global index, and a worker
killed mid-stream is retried without counting a row twice or dropping one.

One cluster for the whole file (start-up is most of its time); small streams."""
import os
import signal

import numpy as np
import pytest

import dpstream
import dpstream.dask
from conftest import bounded_rows

da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

N, D, BLOCK = 300, 6, 16
PARAMS = dict(epsilon=1.0, delta=1e-6, block=BLOCK, mechanism="blt", horizon=(N + BLOCK - 1) // BLOCK, seed=7)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=40)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def rows():
    return bounded_rows(N, D, seed=21)


@pytest.fixture(scope="module")
def single(rows):
    s = dpstream.ContinualCovariance(D, **PARAMS)
    return s, s.update(rows) + s.flush()


def assert_same_releases(got, want):
    # The same noise (seed, strategy, one draw per release at the coordinator); the exact sums differ
    # only in the order of additions (per part, then merged: |error| ~ rows * 2^-53 relative), and
    # the releases are snapped to ~2^-30 sigma: within 1e-9 of the largest entry.
    assert [(r.step, r.rows) for r in got] == [(r.step, r.rows) for r in want]
    for a, b in zip(got, want):
        scale = np.abs(b.noisy_second_moment).max()
        assert np.abs(a.noisy_second_moment - b.noisy_second_moment).max() <= 1e-9 * scale


def test_two_workers_release_what_one_process_releases(client, rows, single):
    assert len(client.scheduler_info()["workers"]) == 2
    x = da.from_array(rows, chunks=(37, D))  # partitions that straddle the blocks of 16
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    stream, releases = dpstream.dask.continual_covariance(x, accountant=acct, **PARAMS)
    assert_same_releases(releases, single[1])
    assert stream.rows == N and stream.guard_counts == single[0].guard_counts
    assert stream.guard_counts["clipped"] > 0
    # The budget is charged once, by the coordinator's stream, however many workers summed rows.
    assert len(acct.ledger) == 1
    alone = dpstream.PrivacyAccountant(1.0, 1e-6)
    dpstream.ContinualCovariance(D, accountant=alone, **PARAMS)
    assert acct.spent == alone.spent


def test_a_bag_of_rows_and_partitions_smaller_than_a_block(client, rows, single):
    bag = db.from_sequence([list(r) for r in rows], npartitions=40)  # ~8 rows a partition: tree-reduced
    _, releases = dpstream.dask.continual_covariance(bag, **PARAMS)
    assert_same_releases(releases, single[1])


def test_a_bad_row_on_a_worker_is_named_by_its_place_in_the_stream(client, rows):
    bad = rows.copy()
    bad[123, 4] = np.nan
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    with pytest.raises(dpstream.InvalidRow, match=r"^row 123: .*column 4"):
        dpstream.dask.continual_covariance(da.from_array(bad, chunks=(50, D)), accountant=acct, **PARAMS)
    with pytest.raises(dpstream.InvalidParameter, match="unknown noise strategy"):
        dpstream.dask.continual_covariance(da.from_array(bad, chunks=(50, D)), **{**PARAMS, "mechanism": "fft"})


def _die_once(block, marker, victim, block_id=None):
    # The worker computing partition `victim` is killed (SIGKILL) the first time: Dask's nanny
    # restarts it and the scheduler recomputes what it held.
    if block_id[0] == victim and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return block


def test_a_worker_killed_mid_stream_is_retried_and_no_row_is_lost_or_counted_twice(client, rows, single, tmp_path):
    marker = str(tmp_path / "killed")
    x = da.from_array(rows, chunks=(37, D)).map_blocks(_die_once, marker, 4, dtype=rows.dtype)
    stream, releases = dpstream.dask.continual_covariance(x, **PARAMS)
    assert os.path.exists(marker)  # a worker did die
    # Partition 4 (and whatever else the dead worker held) was recomputed; the coordinator took each
    # block's part once, in order (a second copy would be refused as 'rows counted twice').
    assert stream.rows == N and stream.guard_counts["seen"] == N
    assert_same_releases(releases, single[1])


def test_online_pca_over_dask_meters_the_regret_of_one_process(client):
    x = bounded_rows(400, 10, seed=5, over=0.3)
    x[:, :2] *= 4
    settings = dict(block=32, mechanism="blt", horizon=13, seed=3, normalize="clip")
    one = dpstream.OnlinePCA(2, 1.0, 1e-6, **settings).fit(x)
    pca, regret = dpstream.dask.online_pca(da.from_array(x, chunks=(45, 10)), 2, 1.0, 1e-6, **settings)
    # The same releases up to summation order (above), snapped: the same subspaces; the gains and
    # OPT are sums over 400 rows computed in another order (numpy on the workers, eigvalsh):
    # within 1e-9 relative.
    for key in ("opt", "gain", "regret"):
        assert regret[key] == pytest.approx(one.regret_[key], rel=1e-9), key
    np.testing.assert_allclose(pca.components_, one.components_, rtol=0, atol=1e-9)
    assert len(pca.accountant_.ledger) == 1 and pca.guard_counts_ == one.guard_counts_
    figures = dpstream.dask.replay(da.from_array(x, chunks=(45, 10)), k=2, block=32, seed=3, normalize="clip")
    assert figures["regret"] == pytest.approx(regret["regret"], rel=1e-9) and figures["rows"] == 400
    # The labels of the tool's JSON line: the relation in words, the exact figures listed.
    assert figures["neighbours"] == pca.neighbours == dpstream.OnlinePCA(2, 1.0, 1e-6).neighbours
    assert figures["neighbours"].startswith("one row zeroed, its slot kept")
    assert set(figures["not_private"]) == {"rows", "opt", "gain", "regret", "regret_over_opt", "rows_clipped",
                                           "rows_rejected"}


# Bounded memory: at most `window` blocks requested and not yet taken, whatever the stream's length.
def test_blocks_in_flight_stay_within_the_window(client, rows, single, monkeypatch):
    blocks = (N + BLOCK - 1) // BLOCK  # 19
    requested = []
    compute = client.compute

    def counting(collections, **kw):  # blocks requested of the cluster so far
        requested.append(len(collections) if isinstance(collections, (list, tuple)) else 1)
        return compute(collections, **kw)

    monkeypatch.setattr(client, "compute", counting)
    for window in (None, 3):  # None: the default (before: every block requested at once)
        requested.clear()
        in_flight = []  # at each release (one a block): requested and not yet taken
        _, releases = dpstream.dask.continual_covariance(
            da.from_array(rows, chunks=(37, D)), callback=lambda r: in_flight.append(sum(requested) - r.step),
            **PARAMS, **({} if window is None else {"window": window}))
        assert_same_releases(releases, single[1])
        assert sum(requested) == blocks and 0 < max(in_flight) < blocks - 1
        if window is not None:
            assert max(in_flight) < window  # the window, less the block just taken
    with pytest.raises(dpstream.InvalidParameter, match="window 0"):
        dpstream.dask.continual_covariance(da.from_array(rows, chunks=(37, D)), window=0, **PARAMS)


def test_batches_that_arrive_over_time_release_what_one_process_releases(client, rows, single):
    def arriving():  # uneven batches, some as futures already on the workers
        for i, start in enumerate(range(0, N, 23)):
            batch = rows[start : start + 23]
            yield client.scatter(batch) if i % 2 else batch

    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    stream = dpstream.ContinualCovariance(D, accountant=acct, **PARAMS)
    in_flight = []
    releases = []
    for release in dpstream.dask.stream_covariance(arriving(), stream, window=2):
        in_flight.append(sum(1 for key in client.futures if str(key).startswith("_aggregate")))
        releases.append(release)
    releases += stream.flush()
    assert_same_releases(releases, single[1])
    assert stream.guard_counts == single[0].guard_counts and len(acct.ledger) == 1
    assert 0 < max(in_flight) <= 2  # aggregations submitted and not yet taken: the window
    settings = dict(block=32, mechanism="tree", seed=3, normalize="clip", track_regret=False)
    one = dpstream.OnlinePCA(2, 1.0, 1e-6, **settings).fit(rows)
    pca = dpstream.dask.stream_online_pca((rows[i : i + 50] for i in range(0, N, 50)),
                                          dpstream.OnlinePCA(2, 1.0, 1e-6, **settings), window=2).finish()
    np.testing.assert_allclose(pca.components_, one.components_, rtol=0, atol=1e-9)
    assert pca.guard_counts_ == one.guard_counts_


def test_user_keys_bound_at_the_coordinator_as_one_process_would(client, rows):
    # Keys to the coordinator: the dask stream keeps the rows one process's OnlinePCA keeps (a user's
    # first 3, at least 2 blocks apart), and its releases equal that process's (same seed, same rows).
    ids = np.random.default_rng(4).integers(0, 40, N)
    unit = dict(max_rows_per_user=3, min_separation=2)
    one = dpstream.OnlinePCA(2, block=BLOCK, mechanism="blt", horizon=PARAMS["horizon"], seed=7, normalize="clip",
                             track_regret=False, **unit)
    one.partial_fit(rows, user_ids=ids).finish()
    x, keys = da.from_array(rows, chunks=(37, D)), da.from_array(ids, chunks=37)
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    pca, _ = dpstream.dask.online_pca(x, 2, 1.0, 1e-6, block=BLOCK, mechanism="blt", horizon=PARAMS["horizon"],
                                      seed=7, normalize="clip", track_regret=False, accountant=acct,
                                      user_ids=keys, **unit)
    assert pca.user_counts_ == one.user_counts_
    assert pca.user_counts_["too_close"] > 0 and pca.user_counts_["over_rows"] > 0  # both rules exercised
    assert pca.n_releases_ == one.n_releases_
    np.testing.assert_allclose(pca.leader_values_, one.leader_values_, rtol=1e-9)
    assert len(acct.ledger) == 1 and "at most 3 rows" in pca.neighbours
    # Keys partitioned otherwise than the rows, or a missing key: refused before the one charge.
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    with pytest.raises(dpstream.InvalidParameter, match="partitioned as"):
        dpstream.dask.continual_covariance(x, accountant=acct, user_ids=da.from_array(ids, chunks=50), **unit,
                                           **PARAMS)
    bad = ids.astype(object)
    bad[100] = ""
    with pytest.raises(Exception, match="row 100.*empty"):
        dpstream.dask.continual_covariance(x, accountant=acct, user_ids=da.from_array(bad, chunks=37), **unit,
                                           **PARAMS)
    assert acct.ledger == []
