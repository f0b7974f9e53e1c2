"""Streaming entries of dpstream.dask: batches of rows that arrive over time (numpy arrays, or
distributed Futures of them), guarded and summed on the workers as they arrive, given to ONE stream at
the coordinator in row order. The privacy contract is the stream's (dpstream.dask's docstring): noise
once per release at the coordinator, one charge, workers trusted.

    batch i (rows [o_i, o_i + n_i)) --client.submit: RowGuard, exact sums cut at multiples of B--> parts
    as_completed: a batch that finishes early waits its turn; parts taken in row order --> releases

At most ``window`` batches are submitted and not yet taken: iterating ``batches`` pauses until the
oldest is taken, so the rows and parts held on the workers (and the finished ones waiting their turn
at the coordinator) do not grow with the stream's length.
"""
import numpy as np

from . import _core
from .dask import _aggregate, check_window, default_window

_END = object()


def _rows_and_shape(client, batch):
    """(what to submit, its shape (n, d)): a Future's shape is asked of the worker holding it."""
    from distributed import Future

    if isinstance(batch, Future):
        rows, shape = batch, tuple(client.submit(np.shape, batch, pure=False).result())
    else:
        rows = np.asarray(batch, dtype=np.float64)
        shape = rows.shape
    if len(shape) != 2:
        raise _core.InvalidParameter(f"dpstream.dask: a batch must be a 2-d array of rows (n, d), got {len(shape)} "
                                     "dimensions")
    return rows, shape


def _take_in_order(batches, first_row, params, consume, client, window):
    """Submits each batch's aggregation with its global row offset, at most `window` outstanding, and
    hands the parts to `consume` in row order as the batches complete; yields after each batch taken."""
    from distributed import as_completed

    completed = as_completed()
    sequence_of, finished = {}, {}
    submitted = taken = 0
    offset = first_row
    upcoming = iter(batches)
    exhausted = False
    while True:
        while not exhausted and submitted - taken < window:
            batch = next(upcoming, _END)
            if batch is _END:
                exhausted = True
                break
            rows, (n, _) = _rows_and_shape(client, batch)
            future = client.submit(_aggregate, rows, offset, params, pure=False)
            sequence_of[future.key] = submitted
            completed.add(future)
            submitted += 1
            offset += n
        if taken == submitted:
            return
        future = next(completed)
        finished[sequence_of.pop(future.key)] = future.result()  # the worker's InvalidRow, if any
        future.release()
        while taken in finished:
            for part in finished.pop(taken):
                consume(part)
            taken += 1
            yield


def stream_covariance(batches, stream, *, client=None, window=None):
    """Feeds ``stream`` (a ContinualCovariance, built -- and charged -- by you) from ``batches`` as they
    arrive, and yields each release as it is made, in order. ``batches``: any iterable (a generator
    reading a queue, a socket, files...) of (n, d) arrays or distributed Futures of them. ``client``:
    the distributed.Client (None: the current one). ``window``: batches in flight (None:
    default_window). A partial last block stays pending: call stream.flush() for it. A bad row raises
    InvalidRow naming its global index; the parts before it were taken."""
    from distributed import get_client

    check_window(window)
    client = client if client is not None else get_client()
    window = window if window is not None else default_window(client, stream.dim)
    params = {k: getattr(stream, k) for k in ("dim", "block", "normalize", "clip_norm", "nonnegative")}
    made = []

    def consume(part):
        made.extend(stream.add_aggregate(part))

    for _ in _take_in_order(batches, stream.rows, params, consume, client, window):
        yield from made
        made.clear()


def stream_online_pca(batches, pca, *, client=None, window=None):
    """Feeds an OnlinePCA (track_regret=False: its rows stay on the workers) from ``batches`` as they
    arrive; returns it (call pca.finish() for a partial last block). Its stream is started -- and
    charged -- at the first batch if it was not yet (center=True is refused: the mean is released
    from the first batch's rows, which only partial_fit sees)."""
    from distributed import get_client

    check_window(window)
    if pca.track_regret:
        raise _core.InvalidParameter("stream_online_pca: build the OnlinePCA with track_regret=False (the "
                                     "regret meter needs the rows, which stay on the workers)")
    if pca.center:
        raise _core.InvalidParameter("stream_online_pca: center=True needs the first rows at the coordinator; "
                                     "use partial_fit for the first batch, then this")
    client = client if client is not None else get_client()
    upcoming = iter(batches)
    first = next(upcoming, _END)
    if first is _END:
        return pca
    first_rows, (_, dim) = _rows_and_shape(client, first)
    if pca.__dict__.get("_core") is None:
        pca._start(np.zeros((0, dim)))
    window = window if window is not None else default_window(client, dim)
    params = dict(dim=dim, block=pca.block, normalize=pca.normalize, clip_norm=pca.clip_norm,
                  nonnegative=pca.nonnegative)

    def consume(part):
        with pca._lock:
            pca._core.add_aggregate(part)

    def chained():
        yield first_rows
        yield from upcoming

    for _ in _take_in_order(chained(), pca.guard_counts_["seen"], params, consume, client, window):
        pass
    return pca
