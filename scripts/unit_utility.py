#!/usr/bin/python3
"""Unit-level privacy against group privacy on a generated event stream (docs/privacy.md's table).

Users send a heavy-tailed number of rows (1 + a Pareto draw, shape 1.1, at most 2000 each); each
user's rows lie near her own preference, a point of a rank-3 subspace, in an order that interleaves
users at random. For each k, the stream each pair of methods sees is the same: every user's first k rows (b = 0),
or with a separation b every user's first k rows at least b blocks apart (dpstream's ContributionBound
keeps those; the script keeps the same rows for the baseline and checks the counts agree).
  unit:  --max-rows-per-user k [--min-separation b] at (eps, delta): calibrated for all of one user's
         rows (b = 0: k x one row's sensitivity; b >= 1: the strategy's factor for rows b blocks
         apart, printed as unit_sensitivity_factor), neighbouring = all rows of one user;
  group: the row-level mechanism at (eps/k, delta_0), delta_0 = delta / (k e^((k-1) eps/k)): by group
         privacy a row-level (eps0, delta0) mechanism is (k eps0, k e^((k-1) eps0) delta0)-DP for a group
         of k rows, i.e. (eps, delta) for a user with at most k rows (Dwork & Roth 2014, Thm 2.2).
The separation is a choice made from public numbers only: under the unit-level relation the keys and
the rows' positions are public (only values are protected), and so is what the bound keeps. With T
the release blocks of the stream the bound keeps at b = 0, b = floor(T / k) spreads k rows over the
whole stream and b = floor(T / (4 k)) over a quarter of it: fewer rows kept against a smaller
sensitivity factor.
Prints a Markdown table of regret/OPT (dpstream-replay, fpl on the continual covariance) and captured
variance (dpstream-pca --method gauss: one-shot, no blocks, so no separation), each the mean over
--seeds noise seeds.

  /usr/bin/python3 scripts/unit_utility.py --tools build/tools --work /tmp/unit-utility
"""
import argparse
import json
import math
import os
import subprocess

import numpy as np


def generate(path, users, dim, seed):
    rng = np.random.default_rng(seed)
    counts = np.minimum(1 + np.floor(rng.pareto(1.1, users)).astype(int), 2000)
    basis = np.linalg.qr(rng.standard_normal((dim, 3)))[0] * np.array([3.0, 2.0, 1.5])
    prefs = rng.standard_normal((users, 3)) @ basis.T
    owner = np.repeat(np.arange(users), counts)
    rng.shuffle(owner)
    rows = prefs[owner] + 0.5 * rng.standard_normal((owner.size, dim))
    with open(path, "w") as f:
        f.write("user," + ",".join(f"x{j}" for j in range(dim)) + "\n")
        for u, row in zip(owner, rows):
            f.write(f"u{u}," + ",".join(f"{v:.6g}" for v in row) + "\n")
    return owner, rows


def first_k(path, owner, rows, k, separation=0, block=64):
    """The rows ContributionBound keeps (stream/contribution_bound.hpp): a user's first k, and with a
    separation b >= 1 only rows at least b blocks after her last kept one; a kept row's block is the
    number of rows kept before it // block. Returns how many were kept."""
    kept_rows, last = {}, {}
    used = 0
    with open(path, "w") as f:
        for u, row in zip(owner, rows):
            b = used // block
            if kept_rows.get(u, 0) >= k or (separation and u in last and b - last[u] < separation):
                continue
            kept_rows[u] = kept_rows.get(u, 0) + 1
            last[u] = b
            used += 1
            f.write(",".join(f"{v:.6g}" for v in row) + "\n")
    return used


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", default="build/tools")
    ap.add_argument("--work", default="/tmp/unit-utility")
    ap.add_argument("--users", type=int, default=4000)
    ap.add_argument("--dim", type=int, default=20)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    events = os.path.join(a.work, "events.csv")
    owner, rows = generate(events, a.users, a.dim, 1)
    print(f"{owner.size} rows from {a.users} users; rows per user: median {int(np.median(np.bincount(owner)))}, "
          f"max {np.bincount(owner).max()}")
    replay = [os.path.join(a.tools, "dpstream-replay"), "--k", "3", "--block", "64", "--mechanism", "blt",
              "--out", os.path.join(a.work, "out"), "--normalize", "clip", "--clip-norm", "10"]
    pca = [os.path.join(a.tools, "dpstream-pca"), "--method", "gauss", "--k", "3", "--normalize", "clip",
           "--clip-norm", "10"]
    print("| k | b | rows kept | replay regret/OPT, unit | group | unit sensitivity factor | "
          "Analyze Gauss captured, unit | group |")
    print("|---|---|---|---|---|---|---|---|")
    for k in (1, 4, 16):
        eps0, delta0 = a.epsilon / k, a.delta / (k * math.exp((k - 1) * a.epsilon / k))
        blocks = math.ceil(first_k(os.path.join(a.work, "probe.csv"), owner, rows, k) / 64)
        for b in sorted({0} | ({blocks // (4 * k), blocks // k} if k > 1 else set())):
            bounded = os.path.join(a.work, f"first{k}_b{b}.csv")
            kept = first_k(bounded, owner, rows, k, b)
            unit_flags = ["--input", events, "--user-column", "user", "--max-rows-per-user", str(k),
                          "--epsilon", str(a.epsilon), "--delta", str(a.delta)]
            group_flags = ["--input", bounded, "--header", "no", "--epsilon", repr(eps0), "--delta", repr(delta0)]
            figures = {}
            for name, flags in (("unit", unit_flags), ("group", group_flags)):
                regret, captured, factor = [], [], None
                for seed in range(1, a.seeds + 1):
                    r = run(replay + flags + (["--min-separation", str(b)] if name == "unit" and b else [])
                            + ["--seed", str(seed)])
                    regret.append(r["regret_over_opt"])
                    factor = r.get("unit_sensitivity_factor")
                    assert r["rows"] == kept, f"{name}: the tool kept {r['rows']} rows, the script {kept}"
                    if b == 0:
                        captured.append(run(pca + flags + ["--seed", str(seed)])["captured_ratio"])
                figures[name] = (np.mean(regret), np.mean(captured) if captured else None, factor)
            u, g = figures["unit"], figures["group"]
            ag = f"{u[1]:.4f} | {g[1]:.4f}" if b == 0 else "– | –"
            print(f"| {k} | {b} | {kept} | {u[0]:.4f} | {g[0]:.4f} | {u[2]:.3f} | {ag} |", flush=True)


if __name__ == "__main__":
    main()
