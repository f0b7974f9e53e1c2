#!/usr/bin/python3
"""Python bindings and Dask ingestion, measured by hand (not a test: no timing in tests).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_ingest.py [--quick] [--bindings-only]

1. Bindings: rows/s of OnlinePCA.partial_fit (blocks of 128 rows, d = 784, seeded) against the
   library's own time inside the same calls (RowGuard, stream, learner, meter: the C++ ingestion
   alone); the ratio is what the bindings cost (dispatch, array conversion, the Python wrapper).
   Acceptance: <= 10%. And the cost of the object's lock (thread safety): one acquire/release a
   call against a partial_fit call's time. Acceptance: <= 1%.
2. Dask: dpstream.dask.continual_covariance with a LocalCluster of 1 and 2 worker processes against
   a single process's ContinualCovariance.update on the same rows, at d = 784 and d = 2048
   (blocks of 1024 rows), and the bytes a worker sends per block (one BlockAggregate message).
3. A model for N machines from those measured costs (for the closing note): per block a worker
   spends g = B d^2 / (Gram rate) computing its part and sends b bytes; the coordinator receives
   the parts one after another and spends c per block adding them and releasing (noise). With
   bandwidth W into the coordinator, blocks/s(N) = 1 / max(g / N, b / W, c): the noise and the
   coordinator's ingress bound the speed-up, not the workers.
The last line of output is one JSON object with every figure.
"""
import json
import sys
import time

import numpy as np

import dpstream
import dpstream.dask


def rows(n, d, seed):
    x = np.random.default_rng(seed).standard_normal((n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def bindings(n, d=784, block=128):
    x = rows(n, d, 1)
    pca = dpstream.OnlinePCA(10, 1.0, 1e-6, block=block, mechanism="tree", seed=1, normalize="unit")
    start = time.perf_counter()
    for i in range(0, n, block):
        pca.partial_fit(x[i : i + block])
    wall = time.perf_counter() - start
    library = pca._core.library_seconds()
    # The object's lock (thread safety): one acquire/release per call, timed alone, as a share of a
    # partial_fit call's time. Acceptance: <= 1%.
    calls = 100_000
    t0 = time.perf_counter()
    for _ in range(calls):
        with pca._lock:
            pass
    lock_per_call = (time.perf_counter() - t0) / calls
    per_call = wall / -(-n // block)
    return {"d": d, "rows": n, "python_rows_per_s": n / wall, "cpp_rows_per_s": n / library,
            "bindings_cost": wall / library - 1, "lock_seconds_per_call": lock_per_call,
            "lock_cost": lock_per_call / per_call}


def single_process(x, block):
    s = dpstream.ContinualCovariance(x.shape[1], 1.0, 1e-6, block=block, mechanism="tree", seed=1)
    start = time.perf_counter()
    s.update(x)
    s.flush()
    return time.perf_counter() - start


def dask_run(x, block, workers, chunk):
    import dask.array as da
    import distributed
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as cluster, distributed.Client(cluster):
        arr = da.from_array(x, chunks=(chunk, x.shape[1])).persist()  # the rows already on the workers
        distributed.wait(arr)
        start = time.perf_counter()
        dpstream.dask.continual_covariance(arr, 1.0, 1e-6, block=block, mechanism="tree", seed=1)
        return time.perf_counter() - start


def dask_figures(d, n, block):
    x = rows(n, d, 2)
    part = dpstream._core.aggregate_rows("covariance", x[:block], 0, dim=d, block=block)[0]
    t_single = single_process(x, block)
    out = {"d": d, "rows": n, "block": block, "bytes_per_block_per_worker": len(part),
           "raw_bytes_per_block": 8 * d * block, "single_rows_per_s": n / t_single}
    for workers in (1, 2):
        out[f"dask{workers}_rows_per_s"] = n / dask_run(x, block, workers, chunk=block * 2)
    # The coordinator's share: parts summed here once, then handed over block by block.
    parts = dpstream._core.aggregate_rows("covariance", x, 0, dim=d, block=block)
    t0 = time.perf_counter()
    parts = dpstream._core.aggregate_rows("covariance", x, 0, dim=d, block=block)
    g = (time.perf_counter() - t0) / len(parts)  # a worker's time per block
    s = dpstream.ContinualCovariance(d, 1.0, 1e-6, block=block, mechanism="tree", seed=1)
    t0 = time.perf_counter()
    for p in parts:
        s.add_aggregate(p)
    c = (time.perf_counter() - t0) / len(parts)
    out.update({"worker_seconds_per_block": g, "coordinator_seconds_per_block": c})
    # Loopback bandwidth as the 1-worker run achieved it beyond its compute: (t1 - blocks*(g+c)).
    t1 = n / out["dask1_rows_per_s"]
    transfer = max(t1 - len(parts) * (g + c), 1e-9) / len(parts)
    out["measured_transfer_seconds_per_block"] = transfer
    out["model_rows_per_s"] = {str(m): block / max(g / m, transfer, c) for m in (1, 2, 4, 8, 16, 64)}
    return out


def main():
    quick = "--quick" in sys.argv
    figures = {"bindings": bindings(8192 if quick else 32768)}
    b = figures["bindings"]
    print(f"bindings: partial_fit {b['python_rows_per_s']:.0f} rows/s, library alone {b['cpp_rows_per_s']:.0f} rows/s:"
          f" bindings cost {100 * b['bindings_cost']:.2f}% (acceptance <= 10%)", flush=True)
    print(f"lock: {1e9 * b['lock_seconds_per_call']:.0f} ns a call, {100 * b['lock_cost']:.4f}% of a partial_fit call "
          "(acceptance <= 1%)", flush=True)
    if "--bindings-only" in sys.argv:
        print(json.dumps(figures))
        return
    for d, n in ((784, 8192 if quick else 32768), (2048, 4096 if quick else 8192)):
        f = dask_figures(d, n, 1024)
        figures[f"dask_d{d}"] = f
        print(f"d = {d}: single {f['single_rows_per_s']:.0f} rows/s, Dask 1 worker {f['dask1_rows_per_s']:.0f}, "
              f"2 workers {f['dask2_rows_per_s']:.0f}; {f['bytes_per_block_per_worker'] / 1e6:.2f} MB sent per block "
              f"per worker (the rows: {f['raw_bytes_per_block'] / 1e6:.2f} MB); model rows/s for N machines "
              + ", ".join(f"{m}: {r:.0f}" for m, r in f["model_rows_per_s"].items()), flush=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
