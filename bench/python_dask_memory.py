"""Peak worker memory of dpstream.dask against the stream's length: the same block size and
partitions, 1x and `--scale`x the rows, each on a fresh distributed.LocalCluster (2 worker processes,
one thread each, loopback only). The rows are generated on the workers (dask.array.random), so the
only thing that can grow with the stream is what waits on the workers: the blocks' parts.

Reports each run's peak RSS per worker (VmHWM of the worker processes, read by client.run) and the
ratio of the long run's peak to the short one's, against the limit (--limit, 1.2). --window all
requests every block at once (the behaviour before the window) for comparison.

    PYTHONPATH=build/python OMP_NUM_THREADS=1 /usr/bin/python3 bench/python_dask_memory.py
"""
import argparse
import json
import time


def peak_rss_bytes():
    """This process's peak resident set (VmHWM), in bytes; runs on each worker."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def run(rows, dim, block, chunk, window):
    import dask.array as da
    import distributed

    import dpstream.dask

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=40)
    with distributed.Client(cluster) as client:
        x = da.random.RandomState(1).standard_normal((rows, dim), chunks=(chunk, dim))
        start = time.monotonic()
        stream, _ = dpstream.dask.continual_covariance(x, 1.0, 1e-6, block=block, seed=1, normalize="unit",
                                                       window=window, callback=lambda r: None)
        seconds = time.monotonic() - start
        peaks = client.run(peak_rss_bytes)
        used = window if window is not None else dpstream.dask.default_window(client, dim)
    cluster.close()
    assert stream.rows == rows
    return {"rows": rows, "blocks": -(-rows // block), "window": used, "seconds": round(seconds, 1),
            "peak_worker_rss_mb": round(max(peaks.values()) / 2**20, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dim", type=int, default=784)
    parser.add_argument("--block", type=int, default=128)
    parser.add_argument("--rows", type=int, default=12_800, help="the short stream (1x)")
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=2048, help="rows a partition")
    parser.add_argument("--window", default=None, help="blocks in flight: an integer, 'all', or the default")
    parser.add_argument("--limit", type=float, default=1.2)
    args = parser.parse_args()
    short_rows, long_rows = args.rows, args.rows * args.scale
    window = None if args.window is None else None if args.window == "default" else args.window
    windows = {r: (r // args.block + 1 if window == "all" else None if window is None else int(window))
               for r in (short_rows, long_rows)}
    short = run(short_rows, args.dim, args.block, args.chunk, windows[short_rows])
    long = run(long_rows, args.dim, args.block, args.chunk, windows[long_rows])
    ratio = long["peak_worker_rss_mb"] / short["peak_worker_rss_mb"]
    print(json.dumps({"dim": args.dim, "block": args.block, "short": short, "long": long,
                      "ratio": round(ratio, 3), "limit": args.limit, "within_limit": ratio <= args.limit}))


if __name__ == "__main__":
    main()
