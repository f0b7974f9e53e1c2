"""Ctrl-C (SIGINT) during a long call: it stops at a safe point with KeyboardInterrupt instead of
running to its end. An interrupted PrivatePCA fit charges nothing; an interrupted stream stops at a
release boundary with its counts those of the rows it took. Before, the call ran to its end (the
fit's budget charged, its result thrown away) and the KeyboardInterrupt came after."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import dpstream


def interrupt_after(seconds):
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_an_interrupted_private_pca_fit_charges_nothing():
    x = np.random.default_rng(1).standard_normal((1500, 900))
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    timer = interrupt_after(0.1)
    with pytest.raises(KeyboardInterrupt):
        dpstream.PrivatePCA("gauss", 5, accountant=acct).fit(x)  # ~1-3 s of eigensolver: stopped at 0.1 s
    timer.join()
    assert acct.ledger == [] and acct.spent.epsilon == 0
    pca = dpstream.PrivatePCA("gauss", 2, accountant=acct).fit(x[:50, :8])  # the accountant is usable
    assert len(acct.ledger) == 1 and pca.components_.shape == (2, 8)


@pytest.mark.parametrize("kind", ["stream", "online_pca"])
def test_an_interrupted_stream_stops_at_a_release_boundary(kind):
    # 1,600 releases of d x d: over a second even on an idle machine (16,000 rows could end before the
    # 0.2 s interrupt there, and the test then failed), interrupted at 0.2 s.
    d, block, n = 160, 40, 64000
    x = np.random.default_rng(2).standard_normal((n, d))
    if kind == "stream":
        obj = dpstream.ContinualCovariance(d, 1.0, 1e-6, block=block, seed=1)
        ingest, rows, seen = obj.update, (lambda: obj.rows), (lambda: obj.guard_counts["seen"])
    else:
        obj = dpstream.OnlinePCA(3, 1.0, 1e-6, block=block, seed=1, track_regret=False)
        obj.partial_fit(x[:block])
        ingest, rows, seen = obj.partial_fit, (lambda: obj.n_releases_ * block), (lambda: obj.guard_counts_["seen"])
    start = rows()
    timer = interrupt_after(0.2)
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        ingest(x)
    timer.join()
    taken = rows() - start
    assert 0 < taken < n and taken % block == 0  # stopped early, at a release boundary
    assert seen() == rows()  # the guard counted exactly the rows the stream took
    assert time.monotonic() - began < 30
