"""Many threads on one object: calls take turns (each object's lock), so no crash, no lost row, count,
release or charge. Before the lock, two threads inside the C++ stream at once (the GIL is released
there) crashed the interpreter or lost counts and releases.

Exact counts: every assertion is an equality a lost update would break."""
import threading

import numpy as np

import dpstream
from conftest import bounded_rows

THREADS, CALLS, ROWS, D = 8, 12, 24, 32


def run_threads(work):
    barrier = threading.Barrier(THREADS)
    errors = []

    def body(i):
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_threads_on_one_continual_covariance_lose_no_row_or_release():
    x = bounded_rows(ROWS, D, seed=1)
    stream = dpstream.ContinualCovariance(D, 1.0, 1e-6, block=8, seed=3)
    got = []

    def work(i):
        for _ in range(CALLS):
            got.extend(stream.update(x))

    run_threads(work)
    total = THREADS * CALLS * ROWS
    assert stream.rows == total and stream.guard_counts["seen"] == total
    assert len(got) == total // 8 == stream.steps
    assert sorted(r.step for r in got) == list(range(1, total // 8 + 1))


def test_threads_on_one_online_pca_lose_no_count_or_release():
    x = bounded_rows(ROWS, D, seed=2)
    pca = dpstream.OnlinePCA(3, 1.0, 1e-6, block=8, seed=4)
    pca.partial_fit(x)  # the stream exists before the threads start: they race on ingestion only

    def work(i):
        for _ in range(CALLS):
            pca.partial_fit(x)
            assert pca.components_.shape == (3, D)

    run_threads(work)
    total = (THREADS * CALLS + 1) * ROWS
    assert pca.guard_counts_["seen"] == total and pca.regret_["rows"] == total
    assert pca.n_releases_ == total // 8
    assert len(pca.accountant_.ledger) == 1


def test_threads_sharing_one_accountant_record_every_charge():
    x = bounded_rows(60, 6, seed=5)
    acct = dpstream.PrivacyAccountant(1000.0, 1e-3)

    def work(i):
        for j in range(3):
            dpstream.PrivatePCA("gauss", 2, 1.0, 1e-6, seed=10 * i + j, accountant=acct).fit(x)
            dpstream.ContinualCovariance(6, 1.0, 1e-6, seed=i, accountant=acct).update(x)

    run_threads(work)
    assert len(acct.ledger) == THREADS * 3 * 2
    assert acct.spent.basic_epsilon == np.sum([c["epsilon"] for c in acct.ledger])


def test_threads_fitting_one_private_pca_leave_one_consistent_fit():
    x = bounded_rows(80, 6, seed=6)
    pca = dpstream.PrivatePCA("gauss", 2, 1.0, 1e-6, accountant=dpstream.PrivacyAccountant(1000.0, 1e-3))
    run_threads(lambda i: [pca.fit(x) for _ in range(3)])
    assert len(pca.accountant_.ledger) == THREADS * 3
    np.testing.assert_allclose(pca.components_ @ pca.components_.T, np.eye(2), atol=1e-9)
    assert pca.guard_counts_["seen"] == 80
