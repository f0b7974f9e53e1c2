"""Ingestion spread over a Dask cluster: rows checked and summed on the workers, noise added once.

    partition p (rows [o_p, o_p + n_p)) --worker: RowGuard, exact sums cut at multiples of `block`
                                           (by global row offset)--> parts (Protobuf bytes)
    parts of one block --tree-reduced (exact sums add)--> one part per block
    coordinator: ContinualCovariance.add_aggregate, block by block, in row order --> releases

Neighbouring relation: the stream's (ContinualCovariance): one row zeroed, its slot kept (global row
offsets fix the slots), or replaced; a removal that shifts later rows is not covered.

Privacy (stream/block_aggregate.hpp): unchanged from a single process. Each row passes one RowGuard
with the stream's bound L (same policy; counts returned with the part), each block's exact sum is
what a single process would sum (up to the order of additions), and the noise is drawn once per
release by the one ContinualCovariance at the coordinator, which is also the only thing that charges
the accountant (once, at construction, however many workers). The coordinator re-checks each part
(its rows continue the stream, no block twice or missing, the guard's counts and bound, and that
the sum is one n rows of norm <= L can make: finite, diagonal >= 0, trace <= n L^2,
|c_ij| <= sqrt(c_ii c_jj), positive semidefinite -- a Cholesky factorization, O(d^3) a block)
before it changes anything. What the coordinator cannot check: the rows one by one -- one row of
norm sqrt(n) L labelled as n rows passes. The CRC in a part is no authentication. So the workers
must be trusted (they are part of the trusted computing base, as the process calling update() is),
and parts are raw data: keep the cluster inside the trusted deployment (TLS between workers if the
network is not).

Releases equal a single process's within 1e-9 relative (the exact sums differ only by summation
order; see tests). A worker that dies mid-run: Dask recomputes its partitions elsewhere (each
part is a pure function of its rows); the coordinator takes each block's part exactly once, in
order, and refuses a duplicate or a gap, so no row is counted twice or dropped; if the partition
cannot be recomputed the run fails loudly (distributed's KilledWorker) with nothing released for
the blocks after it.

Privacy unit (user_ids=, max_rows_per_user=K, min_separation=B): contributions are bounded at the
coordinator, from the keys only. The key partitions (a 1-d dask array or a bag, partitioned as the
rows) come to the coordinator in row order -- a few bytes a row, never the rows -- where ONE
ContributionBound (stream/contribution_bound.hpp) decides every row exactly as a single process
would (her first K rows in stream order, B kept: a kept row's block is the number of rows kept
before it // block); each worker then drops its partition's rows by that mask before it sums. So the
stream equals OnlinePCA.partial_fit(X, user_ids=...) on one machine. Cost: one pass over the keys
before the sums, and the per-user state on the coordinator (96 bytes a user, within a quarter of
the memory limit). The keys are checked (type, empty, state budget) before the one charge. A shuffle
by key would bound on the workers instead, but cannot keep B nor "her first K rows" in stream order.

Collections: a dask.array of shape (n, d) (chunks along rows; columns are joined into one chunk),
or a dask.bag whose elements are rows (sequences of d numbers; a bag is read twice: its partitions'
lengths first, since the global row offsets cut the blocks). At most ``window`` blocks' parts are
requested and not yet taken (a default from the workers' memory limit: default_window); they wait
on the workers until the coordinator takes them, in order (d(d+1)/2 doubles a block), so the
workers' memory does not grow with the stream's length. A stream whose batches arrive over time
(not a finished collection): stream_covariance / stream_online_pca (as_completed, same window).
"""
import operator

import numpy as np

from . import _core
from ._online_pca import OnlinePCA
from ._stream import ContinualCovariance

__all__ = ["continual_covariance", "online_pca", "replay", "stream_covariance", "stream_online_pca",
           "default_window"]

_GUARD_KEYS = ("dim", "block", "normalize", "clip_norm", "nonnegative")


def _partitions(collection):
    """(delayed partitions as arrays, their lengths) of a dask array or bag."""
    import dask
    import dask.array as da
    import dask.bag as db

    if isinstance(collection, da.Array):
        if collection.ndim != 2:
            raise _core.InvalidParameter(f"dpstream.dask: expected a 2-d dask array (n, d), got {collection.ndim} dimensions")
        if len(collection.chunks[1]) != 1:
            collection = collection.rechunk({1: -1})
        parts = list(collection.to_delayed()[:, 0])
        return parts, _chunk_lengths(parts, collection.chunks[0]), int(collection.shape[1])
    if isinstance(collection, db.Bag):
        parts = [dask.delayed(_bag_rows)(p) for p in collection.to_delayed()]
        lengths = list(dask.compute(*[dask.delayed(len)(p) for p in collection.to_delayed()]))
        return parts, [int(n) for n in lengths], None
    raise _core.InvalidParameter(f"dpstream.dask: expected a dask array or bag, got {type(collection).__name__}")


def _chunk_lengths(parts, chunks):
    """A dask array's row counts a partition, computed where its chunks are unknown (NaN)."""
    import dask

    lengths = list(chunks)
    if any(np.isnan(n) for n in lengths):
        lengths = list(dask.compute(*[dask.delayed(len)(p) for p in parts]))
    return [int(n) for n in lengths]


def _bag_rows(rows):
    return np.asarray(list(rows), dtype=np.float64)


def _key_partitions(user_ids):
    """The delayed partitions of a 1-d dask array or bag of user ids, and their lengths."""
    import dask
    import dask.array as da
    import dask.bag as db

    if isinstance(user_ids, da.Array):
        if user_ids.ndim != 1:
            raise _core.InvalidParameter(f"dpstream.dask: user_ids must be 1-d, got {user_ids.ndim} dimensions")
        parts = list(user_ids.to_delayed())
        return parts, _chunk_lengths(parts, user_ids.chunks[0])
    if isinstance(user_ids, db.Bag):
        parts = [dask.delayed(list)(p) for p in user_ids.to_delayed()]
        return parts, list(dask.compute(*[dask.delayed(len)(p) for p in parts]))
    raise _core.InvalidParameter(f"dpstream.dask: user_ids must be a dask array or bag, got {type(user_ids).__name__}")


def _unit_masks(user_ids, lengths, max_rows_per_user, min_separation, block):
    """Keys to the coordinator: one keep-mask a partition, from one ContributionBound over every key in
    row order (the module docstring). Returns (masks, bound)."""
    import dask

    if user_ids is None:
        raise _core.InvalidParameter("dpstream.dask: max_rows_per_user is set: user_ids= (one a row) is needed")
    key_parts, key_lengths = _key_partitions(user_ids)
    if key_lengths != lengths:
        raise _core.InvalidParameter(f"dpstream.dask: user_ids are partitioned as {key_lengths}, the rows as {lengths}: "
                                     "give them the same partitions (one id a row)")
    bound = _core._ContributionBound(int(max_rows_per_user), int(min_separation or 0))
    masks, presented, kept = [], 0, 0
    for keys in key_parts:  # one partition's keys at a time: the coordinator holds no more
        ids = dask.compute(keys)[0]
        ids = ids.tolist() if isinstance(ids, np.ndarray) else list(ids)
        mask = bound.admit(ids, presented, kept, block)
        presented += len(ids)
        kept += int(mask.sum())
        masks.append(mask)
    return masks, bound


def _kept(rows, mask):
    """On a worker: the partition's rows the coordinator's bound kept."""
    return np.asarray(rows)[np.asarray(mask, dtype=bool)]


def _bounded(parts, lengths, user_ids, max_rows_per_user, min_separation, block):
    """(parts, lengths, bound): the collection's partitions, filtered by the unit bound if there is one."""
    import dask

    if not max_rows_per_user:
        if user_ids is not None:
            raise _core.InvalidParameter("dpstream.dask: user_ids= needs max_rows_per_user=K (the bound on each "
                                         "user's rows)")
        return parts, lengths, None
    masks, bound = _unit_masks(user_ids, lengths, max_rows_per_user, min_separation, block)
    kept_parts = [dask.delayed(_kept, pure=True)(p, m) for p, m in zip(parts, masks)]
    return kept_parts, [int(m.sum()) for m in masks], bound


def _aggregate(rows, first_row, params):
    """On a worker: the partition's parts (the library's BlockAggregate messages)."""
    rows = np.asarray(rows)
    if rows.ndim != 2:  # an empty bag partition, or rows of ragged length
        rows = rows.reshape(len(rows), -1) if rows.size else np.zeros((0, params["dim"]))
    return _core.aggregate_rows("covariance", rows, first_row, **params)


def _combine(left, right):
    """Two adjacent parts of one block as one (the exact sums add)."""
    (merged,) = _core.combine_aggregates([left], [right])
    return merged


def _block_graph(parts, lengths, block, params):
    """One delayed part per release block: pieces from every partition that overlaps it, reduced as a tree."""
    import dask

    per_block = {}
    offset = 0
    for part, n in zip(parts, lengths):
        if n == 0:
            continue
        aggregated = dask.delayed(_aggregate, pure=True)(part, offset, params)
        first_block = offset // block
        for j, b in enumerate(range(first_block, (offset + n - 1) // block + 1)):
            per_block.setdefault(b, []).append(dask.delayed(operator.getitem, pure=True)(aggregated, j))
        offset += n
    blocks = []
    for b in sorted(per_block):
        pieces = per_block[b]
        while len(pieces) > 1:  # a tree: adjacent pairs, order kept
            pieces = [dask.delayed(_combine, pure=True)(pieces[i], pieces[i + 1]) if i + 1 < len(pieces) else pieces[i]
                      for i in range(0, len(pieces), 2)]
        blocks.append(pieces[0])
    return blocks, offset


def default_window(client, dim):
    """Blocks in flight when none is given: enough to keep every worker thread busy (4 a thread),
    at most what 2% of the smallest worker's memory limit holds in parts (d(d+1)/2 doubles each),
    at least 2."""
    part_bytes = 8.0 * dim * (dim + 1) / 2 + 4096
    workers = client.scheduler_info()["workers"].values() if client is not None else []
    threads = sum(w.get("nthreads", 1) for w in workers) or 2
    limits = [w.get("memory_limit") or 0 for w in workers]
    by_memory = int(0.02 * min(limits) / part_bytes) if limits and min(limits) > 0 else 4 * threads
    return max(2, min(4 * threads, by_memory))


def _client():
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError):
        return None


def check_window(window):
    """InvalidParameter unless window is None or a positive integer (checked before any charge)."""
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        raise _core.InvalidParameter(f"dpstream.dask: window {window!r}: expected a positive integer or None")


def _feed(blocks, consume, window, dim):
    """Computes the blocks' parts (on the Dask client's cluster if there is one) and hands them to
    ``consume`` in order, each once, with at most ``window`` blocks requested and not yet consumed
    (None: default_window): the parts waiting on the workers, and so their memory, do not grow with
    the stream's length. A block's part is released as soon as it was consumed."""
    import collections
    import dask

    client = _client()
    window = window if window is not None else default_window(client, dim)
    if client is None:
        for first in range(0, len(blocks), window):
            for part in dask.compute(*blocks[first : first + window]):
                consume(part)
        return
    waiting = collections.deque()
    upcoming = iter(blocks)
    for block in upcoming:
        waiting.append(client.compute(block))
        if len(waiting) < window:
            continue
        future = waiting.popleft()
        consume(future.result())
        future.release()
    while waiting:
        future = waiting.popleft()
        consume(future.result())
        future.release()


def continual_covariance(collection, epsilon, delta, block=1, mechanism="tree", horizon=None, noise_shape="goe",
                         seed=None, *, normalize="clip", clip_norm=1.0, relation="zero_out", calibration="tight",
                         nonnegative=False, accountant=None, callback=None, window=None, user_ids=None,
                         max_rows_per_user=None, min_separation=0):
    """A ContinualCovariance (see its docstring for the privacy contract) fed from a Dask collection.
    With max_rows_per_user=K, user_ids= (one a row, partitioned as the rows) bound each user's rows
    at the coordinator (module docstring) and the stream protects a user; the bound's counts
    (NOT private) are in stream.user_counts_.

    Returns (stream, releases): the stream after every row (a partial last block flushed) and every
    release, in order. The stream -- and so the accountant's one charge -- is built before any
    partition is computed: bad parameters or an exhausted budget are refused before a row moves.
    A bad row raises InvalidRow naming its global index. Uses the current distributed.Client if
    there is one, else Dask's default scheduler. ``window``: blocks requested at once (see _feed;
    None: default_window, from the workers' memory limit and threads).
    """
    check_window(window)
    parts, lengths, dim = _partitions(collection)
    if dim is None:  # a bag: the first row's length
        import dask
        first = next((p for p, n in zip(parts, lengths) if n), None)
        dim = int(dask.compute(first)[0].shape[1]) if first is not None else 0
    parts, lengths, bound = _bounded(parts, lengths, user_ids, max_rows_per_user, min_separation, block)
    stream = ContinualCovariance(dim, epsilon, delta, block, mechanism, horizon, noise_shape, seed,
                                 normalize=normalize, clip_norm=clip_norm, relation=relation,
                                 calibration=calibration, nonnegative=nonnegative, accountant=accountant,
                                 callback=callback, max_rows_per_user=max_rows_per_user,
                                 min_separation=min_separation)
    if bound is not None:
        stream.user_counts_ = bound.counts()
    params = {k: v for k, v in stream.get_params().items() if k in _GUARD_KEYS}
    blocks, _ = _block_graph(parts, lengths, block, params)
    releases = []
    _feed(blocks, lambda part: releases.extend(stream.add_aggregate(part)), window, dim)
    releases.extend(stream.flush())
    return stream, releases


def _gains(rows, first_row, block, bases, first_block, params):
    """On a worker: sum over the partition's rows of ||V_b^T a||^2, a as RowGuard passes it and V_b
    the subspace the learner held before block b (the regret meter's protocol)."""
    a = _core.guard_rows(np.asarray(rows, dtype=np.float64).reshape(len(rows), -1), first_row, **params)
    total = 0.0
    blocks = (first_row + np.arange(len(a))) // block
    for b in np.unique(blocks):
        segment = a[blocks == b]
        total += float(np.square(segment @ bases[int(b) - first_block]).sum())
    return total


def online_pca(collection, n_components, epsilon, delta, *, block=128, mechanism="tree", horizon=None,
               noise_shape="goe", seed=None, normalize="unit", clip_norm=1.0, calibration="tight",
               nonnegative=False, track_regret=True, accountant=None, window=None, user_ids=None,
               max_rows_per_user=None, min_separation=0):
    """An OnlinePCA (see its docstring for the privacy contract) whose stream is fed from a Dask
    collection: the blocks are summed on the workers, released at the coordinator (noise once,
    one charge), and followed there, block by block.

    Returns (pca, regret): the fitted OnlinePCA (components_, accountant_, ...) and, with
    track_regret, the regret meter's figures (rows, opt, gain, regret, regret_over_opt): the rows
    are scored on the workers with the subspace the learner held before their block (a second pass
    over the partitions; only d x k bases travel), OPT from the exact sum of the parts. The figures
    use raw rows: evaluation, NOT private. They equal a single process's OnlinePCA within 1e-9
    relative (summation order only). ``window``, ``user_ids``, ``max_rows_per_user`` and
    ``min_separation``: as continual_covariance's (the bound's counts: pca.user_counts_).
    """
    check_window(window)
    parts, lengths, dim = _partitions(collection)
    if dim is None:
        import dask
        first = next((p for p, n in zip(parts, lengths) if n), None)
        dim = int(dask.compute(first)[0].shape[1]) if first is not None else 0
    pca = OnlinePCA(n_components, epsilon, delta, block=block, mechanism=mechanism, horizon=horizon,
                    noise_shape=noise_shape, seed=seed, normalize=normalize, clip_norm=clip_norm,
                    calibration=calibration, nonnegative=nonnegative, track_regret=False, accountant=accountant,
                    max_rows_per_user=max_rows_per_user, min_separation=min_separation)
    pca._unit()  # its settings checked before the keys move
    parts, lengths, bound = _bounded(parts, lengths, user_ids, max_rows_per_user, min_separation, block)
    if bound is not None:
        pca._bound_counts = bound.counts()
    pca._start(np.zeros((0, dim)))  # the one charge, before any partition is computed
    params = dict(dim=dim, block=block, normalize=normalize, clip_norm=clip_norm, nonnegative=nonnegative)
    blocks, total_rows = _block_graph(parts, lengths, block, params)
    bases = [pca.components_.T.copy()]  # bases[b]: the subspace block b is scored with
    exact = np.zeros(dim * (dim + 1) // 2) if track_regret else None

    def consume(part):
        steps = pca.n_releases_
        pca._core.add_aggregate(part)
        if pca.n_releases_ > steps:
            bases.append(pca.components_.T.copy())
        if exact is not None:
            exact[:] += _core.aggregate_info(part)["packed_sum"]

    _feed(blocks, consume, window, dim)
    pca.finish()
    if not track_regret:
        return pca, None
    import dask
    tasks, offset = [], 0
    for part, n in zip(parts, lengths):
        if n:
            first, last = offset // block, (offset + n - 1) // block
            tasks.append(dask.delayed(_gains, pure=True)(part, offset, block, bases[first:last + 1], first, params))
        offset += n
    gain = float(sum(dask.compute(*tasks)))
    upper = np.zeros((dim, dim))
    at = 0
    for j in range(dim):  # the packed upper triangle, column by column (accumulators.hpp)
        upper[: j + 1, j] = exact[at : at + j + 1]
        at += j + 1
    c = np.triu(upper) + np.triu(upper, 1).T
    opt = float(np.sort(np.linalg.eigvalsh(c))[::-1][:n_components].sum())
    regret = {"rows": total_rows, "opt": opt, "gain": gain, "regret": opt - gain,
              "regret_over_opt": (opt - gain) / opt if opt > 0 else 0.0}
    return pca, regret


def replay(collection, *, k=10, epsilon=1.0, delta=1e-6, mechanism="blt", block=128, noise_shape="goe", seed=None,
           normalize="unit", clip_norm=1.0, calibration="tight", nonnegative=False):
    """dpstream-replay's private learner over a Dask collection, with its defaults (k = 10, BLT with
    GOE noise over the stream's ceil(rows / block) releases, rows to unit norm). Returns the JSON
    line's figures for the private learner: rows, dim, k, epsilon, delta, mechanism, block, opt,
    gain, regret, regret_over_opt, rows_clipped, rows_rejected (evaluation on raw rows, NOT
    private: listed under "not_private", as in the tool's JSON line), and "neighbours", the relation
    the subspaces' (epsilon, delta) holds for. seed= gives reproducible, NOT secure noise."""
    _, lengths, _ = _partitions(collection)
    horizon = (sum(lengths) + block - 1) // block
    pca, figures = online_pca(collection, k, epsilon, delta, block=block, mechanism=mechanism, horizon=horizon,
                              noise_shape=noise_shape, seed=seed, normalize=normalize, clip_norm=clip_norm,
                              calibration=calibration, nonnegative=nonnegative)
    counts = pca.guard_counts_
    return {"rows": figures["rows"], "dim": pca.n_features_in_, "k": k, "epsilon": epsilon, "delta": delta,
            "mechanism": mechanism, "block": block, "opt": figures["opt"], "gain": figures["gain"],
            "regret": figures["regret"], "regret_over_opt": figures["regret_over_opt"],
            "rows_clipped": counts["clipped"], "rows_rejected": counts["rejected"],
            "neighbours": pca.neighbours,
            "not_private": ["rows", "opt", "gain", "regret", "regret_over_opt", "rows_clipped", "rows_rejected"]}


from ._dask_stream import stream_covariance, stream_online_pca  # noqa: E402  (they use _aggregate above)
