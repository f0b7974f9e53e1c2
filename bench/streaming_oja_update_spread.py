#!/usr/bin/python3
# Would DP-PCA's adaptive mean estimate (clip each minibatch's updates around a private centre, noise
# scaled to the radius r of that clip) lower StreamingPrivateOja's noise? Best case for the centred
# clip: W the exact top k, centre c = Σ̂W (the exact mean update). Per row g = x(xᵀW) (d × k); printed:
# the 0.9-quantiles of ‖g‖_F (the quantile clip C that scale_share estimates) and of ‖g − c‖_F (the
# radius r), and r/C: the ratio of the two sensitivities, so of the two noise scales, under every
# relation — a row's contribution c + clip_r(g − c), a zero row's (a zeroed slot's) c itself, so
# zero-out moves a sum by ≤ r (plain clip: C) and replace by ≤ 2r (2C). r/C < 1 is noise the centred
# clip would save, in this best case (a private centre from earlier releases is biased while W moves,
# and its error adds to r). Inputs: Fashion-MNIST
# t10k (if installed), the spiked streams of bench_streaming_oja_reach (Gaussian spikes share·2^-j,
# j < 10, on random directions, isotropic bulk, rows scaled into the unit ball) and the row model of
# bench_spiked_k2_replication (k = 2, and with its second spike removed). Seeded; a few seconds.
# Usage: /usr/bin/python3 bench/streaming_oja_update_spread.py
import gzip
import os

import numpy as np

rng = np.random.default_rng(5)
FASHION = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"


def fashion_rows(n):
    with gzip.open(FASHION) as f:
        raw = f.read()
    x = np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(-1, 784)[:n].astype(float)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1
    return x / norms


def spiked_rows(n, d, share):
    u = np.linalg.qr(rng.standard_normal((d, 10)))[0]
    spikes = np.array([share * 2.0 ** -j for j in range(10)])
    x = (rng.standard_normal((n, 10)) * np.sqrt(spikes)) @ u.T
    x += rng.standard_normal((n, d)) * np.sqrt(max(0.0, 1 - spikes.sum()) / d)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.where(norms > 0.999, x * 0.999 / norms, x)


def replication_rows(n, d, sigma, lambdas):
    u = np.linalg.qr(rng.standard_normal((d, 2)))[0]
    signs = rng.choice([-1, 1], size=(n, 2))
    return (signs * np.sqrt(np.array(lambdas))) @ u.T + sigma * rng.standard_normal((n, d))


def report(name, x, k):
    second_moment = x.T @ x / len(x)
    w = np.linalg.eigh(second_moment)[1][:, -k:]
    p = x @ w
    g_norm = np.linalg.norm(x, axis=1) * np.linalg.norm(p, axis=1)
    c = second_moment @ w
    # ‖g − c‖² = ‖g‖² − 2⟨g, c⟩ + ‖c‖², with ⟨g, c⟩ = Σ_j (xᵀw_j)(xᵀc_j)
    off = np.sqrt(np.maximum(g_norm ** 2 - 2 * np.sum(p * (x @ c), axis=1) + np.sum(c * c), 0))
    c_clip, radius = np.quantile(g_norm, 0.9), np.quantile(off, 0.9)
    print(f"{name:42s} k={k:2d}  q90 |g| {c_clip:7.3f}  q90 |g-c| {radius:7.3f}  "
          f"r/C {radius / c_clip:5.2f}")


if os.path.exists(FASHION):
    rows = fashion_rows(10000)
    for k in (1, 10):
        report("Fashion-MNIST t10k (unit rows)", rows, k)
for d, share in ((100, 0.1), (100, 0.3), (784, 0.1), (784, 0.3)):
    rows = spiked_rows(20000, d, share)
    for k in (1, 5, 10):
        report(f"spiked d={d} share={share}", rows, k)
for sigma in (0.025, 0.001):
    report(f"replication rows sigma={sigma}", replication_rows(20000, 200, sigma, (10, 5)), 2)
    report(f"replication rows, one spike, sigma={sigma}", replication_rows(20000, 200, sigma, (10, 0)), 1)
