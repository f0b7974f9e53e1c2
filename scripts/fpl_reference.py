#!/usr/bin/python3
"""Numpy reference for private online PCA by follow-the-perturbed-leader (FPL) over a
binary-tree continual release, run on Fashion-MNIST train, to cross-check the C++ tool.

Usage:
    /usr/bin/python3 scripts/fpl_reference.py [--limit N] [--seed 1] [--k 10] [--block 128]
        [--epsilon 1] [--delta 1e-6] [--runs 1] [--noise-seed 0]

Needs the Debian system Python with:
    apt-get install python3-numpy python3-scipy dataset-fashion-mnist
(the data set package provides /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz).

Pipeline (each step is marked "Step n" in the code below):
 1. Load the 60000 train images, flatten to 784, scale by 1/255, normalise each row to unit l2
    norm (a zero row stays zero), shuffle rows with default_rng(--seed).permutation; --limit N
    keeps the first N shuffled rows.
 2. k = --k, block B = --block; T = ceil(m/B) steps, step t (1-based) covers rows [(t-1)B, tB).
 3. "Tight" calibration: L = T.bit_length() tree levels; each node gets the analytic Gaussian
    mechanism sigma (Balle & Wang 2018) for l2 sensitivity sqrt(L), (epsilon, delta).
 4. Binary-tree noise: node noise is a symmetric 784x784 matrix, upper triangle incl. diagonal
    i.i.d. N(0, sigma^2); release t sums the live nodes at the set bits of t. Released
    C_hat_t = C_t + N_t with C_t the uncentered covariance of rows of steps 1..t.
 5. Online protocol: V starts as the first k coordinate axes; each row of block t earns
    ||V^T a||^2 with the current V, then C is updated, released, and V = eigenvectors of the k
    algebraically largest eigenvalues of C_hat_t. Follow-the-leader (FTL, non-private) runs in
    the same loop on the exact C_t.
 6. OPT = sum of the k largest eigenvalues of C_m; regret = OPT - total gain.
 7. Prints a human summary and a final JSON line.

With --runs R > 1 the private part is repeated with noise seeds --noise-seed + r over the same
shuffle; FTL is deterministic and computed once (in run 0). The JSON then holds the means over
runs for gain/regret/regret_over_opt, plus "runs" and "regret_over_opt_std" (population std).
"""
import time

# Wall clock of the whole pipeline, started before anything else (imports included).
T_START = time.perf_counter()

import argparse
import gzip
import json
import math
import struct

import numpy as np
from scipy.special import ndtr

DATA = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
DIM = 784


# ---------------------------------------------------------------------------------------------
# Step 1: data
# ---------------------------------------------------------------------------------------------
def load_rows(path, seed, limit):
    """IDX images -> unit-norm float64 rows in shuffled order."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, n, rows, cols = struct.unpack(">IIII", raw[:16])
    assert magic == 0x00000803, hex(magic)
    assert rows * cols == DIM and len(raw) == 16 + n * DIM, (n, rows, cols, len(raw))
    x = np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, DIM).astype(np.float64) / 255.0
    norms = np.linalg.norm(x, axis=1)
    # Unit rows bound the per-row covariance contribution a a^T to Frobenius norm 1 (the
    # sensitivity used in step 3); an all-zero row is left as is rather than divided by 0.
    nz = norms > 0
    x[nz] /= norms[nz, None]
    x = x[np.random.default_rng(seed).permutation(n)]
    if limit is not None:
        x = x[:limit]
    return np.ascontiguousarray(x)


# ---------------------------------------------------------------------------------------------
# Step 3: analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8 / Algorithm 1)
# ---------------------------------------------------------------------------------------------
def analytic_delta(sigma, sensitivity, epsilon):
    """Exact delta achieved by N(0, sigma^2) noise for the given l2 sensitivity and epsilon."""
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return ndtr(a - b) - math.exp(epsilon) * ndtr(-a - b)


def analytic_sigma(sensitivity, epsilon, delta, rel_tol=1e-12):
    """Smallest sigma with analytic_delta(sigma) <= delta, by bisection (delta is decreasing
    in sigma), to relative width rel_tol. Returns the upper end, so the guarantee holds."""
    lo, hi = 1e-3 * sensitivity, sensitivity
    while analytic_delta(hi, sensitivity, epsilon) > delta:  # grow until bracketed
        lo, hi = hi, 2.0 * hi
    while analytic_delta(lo, sensitivity, epsilon) <= delta:  # shrink until bracketed
        lo, hi = lo / 2.0, lo
    while hi - lo > rel_tol * hi:
        mid = 0.5 * (lo + hi)
        if analytic_delta(mid, sensitivity, epsilon) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def check_calibration():
    """Reference values given with the brief: sigma(1, 1, 1e-6) ~ 4.2247, sqrt(11)x that ~ 14.01."""
    s1 = analytic_sigma(1.0, 1.0, 1e-6)
    assert abs(s1 - 4.2247) < 5e-4, s1
    s11 = analytic_sigma(math.sqrt(11), 1.0, 1e-6)
    assert abs(s11 - 14.01) < 5e-3, s11
    # The mechanism is scale-equivariant in the sensitivity: sigma(c*D) = c*sigma(D).
    assert abs(s11 - math.sqrt(11) * s1) < 1e-9 * s11, (s11, s1)


# ---------------------------------------------------------------------------------------------
# Step 4: binary-tree continual release of symmetric matrix noise
# ---------------------------------------------------------------------------------------------
class TreeNoise:
    """Plain binary tree (continual counting) over T steps with L levels.

    At step t, h = trailing zeros of t: one fresh node is drawn for level h and levels < h are
    discarded (their dyadic intervals are now covered by the new node). The release noise is
    the sum of the live nodes at the set bits of t; each node is drawn once and reused.
    """

    def __init__(self, dim, levels, sigma, rng):
        self.dim, self.sigma, self.rng = dim, sigma, rng
        self.nodes = [None] * levels
        self.iu = np.triu_indices(dim)  # upper triangle including the diagonal

    def _fresh_node(self):
        vals = self.rng.standard_normal(len(self.iu[0])) * self.sigma
        node = np.zeros((self.dim, self.dim))
        node[self.iu] = vals
        # Mirror the strict upper triangle; the diagonal is added once.
        return node + np.triu(node, 1).T

    def release(self, t):
        h = (t & -t).bit_length() - 1  # number of trailing zero bits of t (t >= 1)
        for j in range(h):
            self.nodes[j] = None
        self.nodes[h] = self._fresh_node()
        # Sum over the set bits of t. Equal to N_{t-1} - sum_{j<h} node_j + node_h, but summed
        # afresh so no rounding drift builds up over steps.
        noise = np.zeros((self.dim, self.dim))
        for j in range(len(self.nodes)):
            if (t >> j) & 1:
                noise += self.nodes[j]
        return noise


# ---------------------------------------------------------------------------------------------
# Step 5: online protocol
# ---------------------------------------------------------------------------------------------
def top_k_eigvecs(c, k):
    """Eigenvectors of the k algebraically largest eigenvalues (eigh sorts ascending)."""
    _, v = np.linalg.eigh(c)
    return v[:, -k:]


def online_run(x, k, block, levels, sigma, noise_seed, with_ftl):
    """One pass over the stream. Returns (private gain, FTL gain or None, exact C_m)."""
    m, d = x.shape
    steps = -(-m // block)
    tree = TreeNoise(d, levels, sigma, np.random.default_rng(noise_seed))
    # Data-independent start: columns e_0..e_{k-1} of the identity.
    v_priv = np.eye(d)[:, :k]
    v_ftl = v_priv.copy()
    c = np.zeros((d, d))
    gain_priv = 0.0
    gain_ftl = 0.0
    for t in range(1, steps + 1):
        blk = x[(t - 1) * block : t * block]
        # Score the block with the basis chosen before seeing it (online learning).
        gain_priv += float(np.sum((blk @ v_priv) ** 2))
        if with_ftl:
            gain_ftl += float(np.sum((blk @ v_ftl) ** 2))
        c += blk.T @ blk
        v_priv = top_k_eigvecs(c + tree.release(t), k)
        if with_ftl:
            v_ftl = top_k_eigvecs(c, k)
    return gain_priv, (gain_ftl if with_ftl else None), c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1, help="row shuffle seed")
    ap.add_argument("--limit", type=int, default=None, help="use the first N shuffled rows")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--block", type=int, default=128)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--runs", type=int, default=1, help="private repetitions (noise seeds)")
    ap.add_argument("--noise-seed", type=int, default=0, help="noise seed of run 0")
    args = ap.parse_args()

    check_calibration()

    # Step 1
    x = load_rows(DATA, args.seed, args.limit)
    m, d = x.shape

    # Step 2
    k, block = args.k, args.block
    steps = -(-m // block)

    # Step 3: each row touches one node per level, so L nodes; with covariance sensitivity 1
    # per node the whole tree has l2 sensitivity sqrt(L).
    levels = steps.bit_length()
    sigma = analytic_sigma(math.sqrt(levels), args.epsilon, args.delta)
    print(f"rows={m} dim={d} k={k} block={block} steps={steps} levels={levels}")
    print(f"epsilon={args.epsilon} delta={args.delta} node_sigma={sigma:.10g} "
          f"(analytic Gaussian, sensitivity sqrt({levels}))", flush=True)

    # Steps 4-5, repeated over noise seeds; FTL only in run 0 (it has no randomness).
    gains, loop_secs = [], []
    gain_ftl = c_final = None
    for r in range(args.runs):
        t0 = time.perf_counter()
        g, gf, c = online_run(x, k, block, levels, sigma, args.noise_seed + r, with_ftl=(r == 0))
        loop_secs.append(time.perf_counter() - t0)
        gains.append(g)
        if r == 0:
            gain_ftl, c_final = gf, c
        print(f"run {r}: noise_seed={args.noise_seed + r} private_gain={g:.6f} "
              f"loop_seconds={loop_secs[-1]:.1f}" + (" (incl. FTL)" if r == 0 else ""),
              flush=True)

    # Step 6
    opt = float(np.sum(np.linalg.eigvalsh(c_final)[-k:]))
    regrets = [opt - g for g in gains]
    ratios = [rg / opt for rg in regrets]
    ftl_ratio = (opt - gain_ftl) / opt
    seconds = time.perf_counter() - T_START

    # Step 7
    mean_ratio = float(np.mean(ratios))
    print(f"OPT (top-{k} eigenvalue sum of C_m) = {opt:.6f}")
    print(f"FPL private: gain={np.mean(gains):.6f} regret={np.mean(regrets):.6f} "
          f"regret/OPT={100 * mean_ratio:.4f}%"
          + (f" (mean of {args.runs} runs, std {100 * np.std(ratios):.4f}%; per run "
             + ", ".join(f"{100 * q:.4f}%" for q in ratios) + ")" if args.runs > 1 else ""))
    print(f"FTL non-private: gain={gain_ftl:.6f} regret={opt - gain_ftl:.6f} "
          f"regret/OPT={100 * ftl_ratio:.4f}%")
    print(f"time: loop {loop_secs[0]:.1f} s (run 0, private + FTL)"
          + (f", later runs {', '.join(f'{s:.1f}' for s in loop_secs[1:])} s (private only)"
             if args.runs > 1 else "")
          + f"; whole pipeline {seconds:.1f} s")
    out = {
        "rows": m, "dim": d, "k": k, "epsilon": args.epsilon, "delta": args.delta,
        "block": block, "levels": levels, "node_sigma": sigma, "opt": opt,
        "gain": float(np.mean(gains)), "regret": float(np.mean(regrets)),
        "regret_over_opt": mean_ratio, "nonprivate_regret_over_opt": ftl_ratio,
        "seconds": seconds,
    }
    if args.runs > 1:
        out["runs"] = args.runs
        out["regret_over_opt_std"] = float(np.std(ratios))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
