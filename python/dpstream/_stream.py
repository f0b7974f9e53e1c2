"""ContinualCovariance: continual release of a private second-moment matrix (stream/continual_sum.hpp)."""
import numpy as np

from . import _core
from ._estimator import Params, check_rows, serialised
from ._privacy import charging

Release = _core._Release
Release.__doc__ = """One release of a continual stream.

step: 1-based release number; rows: rows summed in it; noisy_second_moment: the released
sum of a a^T plus noise (d x d, symmetric, a read-only view owned by this object); noise_variance:
per-entry noise variance (diagonal); off_diagonal_noise_variance: the off-diagonal's (half of it
under noise_shape='goe')."""


def _rows(rows, where="rows"):
    """A 2-d float64 view of rows; a single row (1-d) becomes one row; no rows is no rows. No copy for
    float64 arrays. Sparse, complex or non-numeric input is refused without showing a value."""
    return check_rows(rows, where, allow_1d=True, allow_empty=True)


class ContinualCovariance(Params):
    """Private continual release of the second moment sum of a a^T of a stream of rows.

    rows --update()--> RowGuard --> ContinualCovariance (C++) --every `block` rows--> Release

    Privacy contract (stream/continual_sum.hpp):

    * Neighbouring relation (``neighbours`` says it in words): streams of the same length that
      differ in one row, zeroed with its slot kept (relation='zero_out', the default) or replaced
      by another in the same slot (relation='replace'); every row with ||a||_2 <= L. A removal
      that shifts the later rows into other blocks is NOT covered, so relation='add_remove' is
      refused (InvalidParameter). L is 1 under normalize='unit' (rows scaled to unit norm), else
      clip_norm (normalize='clip': rows over it are clipped and counted; 'none': refused with
      InvalidRow). Privacy unit: one row -- or, with max_rows_per_user=K (and min_separation=B),
      all rows of one user, at most K of them (B >= 1: one a block, blocks at least B apart; B = 0:
      they may share a block): the stream is then calibrated for her rows (stream/participation.hpp),
      and keeping each user within (K, B) is the CALLER's (dpstream.dask does it from user_ids=;
      OnlinePCA from partial_fit's user_ids=).
    * Sensitivity of one block's sum (the packed upper triangle): L^2 (zero_out), sqrt(2) L^2
      (replace); times the unit's factor at the unit level (``participation_bound``).
    * NOT private: guard_counts, rows, rows_pending and steps are exact figures from the data.
    * Noise: the mechanism's -- 'tree' or 'honaker' (binary tree over releases; horizon=None is an
      unbounded stream), 'blt' (buffered linear Toeplitz) or 'separable' (fixed horizon only: give
      horizon, the number of releases). noise_shape 'goe' halves the off-diagonal variance
      (symmetric_gaussian.hpp) or 'paper' (i.i.d. upper triangle).
    * Guarantee and accounting: the whole sequence of releases is (epsilon, delta)-DP (mu-GDP,
      mu = self.mu); the accountant, if given, is charged ONCE, at construction, before any row
      (BudgetExhausted then, and nothing is built). A fixed horizon refuses rows past
      horizon * block with BudgetExhausted.
    * Noise source: secure (libsodium ChaCha20) by default. seed=N gives reproducible noise that is
      NOT secure: for tests and reproducible experiments only.
    * Checkpoints (to_bytes/save, from_bytes/load) keep the noise of the releases, so a restored
      stream re-makes a release published after its checkpoint with the same noise: fed other rows,
      the two versions would differ by exactly the rows' difference. journal=PATH (a release journal:
      each release's digest, written durably before it is returned) makes a restored stream refuse
      such a release (InvalidParameter, nothing returned). Keep the checkpoint and its journal
      together; without a journal, feeding the same rows after a restore is up to you. A restore's
      accountant never spends less than before (PrivacyAccountant.restore).

    Releases are returned by update()/flush() (a list, in order), passed to ``callback`` if given,
    and ``latest`` is the last one. ``releases(chunks)`` iterates over the releases of an iterable of
    row blocks. Rows: any (n, d) array numpy converts to float64 (float32 accepted); C-contiguous
    float64 is read in place, the guard copies each row once (it may clip; your array is never
    modified). A bad row raises InvalidRow naming its index and leaves the stream unchanged. The
    GIL is released while the C++ side ingests and releases; every method holds the object's lock
    (threads on one stream take turns; see dpstream._estimator). A signal (Ctrl-C) stops update() at
    a release boundary with KeyboardInterrupt: the rows before it were ingested and counted, the rest
    not, and the releases already made are returned by the next call.
    """
    _param_names = ("dim", "epsilon", "delta", "block", "mechanism", "horizon", "noise_shape", "seed",
                    "normalize", "clip_norm", "relation", "calibration", "nonnegative", "journal", "accountant",
                    "callback", "max_rows_per_user", "min_separation")

    def __init__(self, dim, epsilon, delta, block=1, mechanism="tree", horizon=None, noise_shape="goe",
                 seed=None, *, normalize="clip", clip_norm=1.0, relation="zero_out", calibration="tight",
                 nonnegative=False, journal=None, accountant=None, callback=None, max_rows_per_user=None,
                 min_separation=0):
        self.dim, self.epsilon, self.delta, self.block = dim, epsilon, delta, block
        self.mechanism, self.horizon, self.noise_shape, self.seed = mechanism, horizon, noise_shape, seed
        self.normalize, self.clip_norm, self.relation = normalize, clip_norm, relation
        self.calibration, self.nonnegative = calibration, nonnegative
        self.journal = None if journal is None else str(journal)
        self.accountant = accountant
        self.callback = callback
        self.max_rows_per_user, self.min_separation = max_rows_per_user, min_separation
        with charging(accountant):
            self._core = _core._ContinualCovariance(accountant._core if accountant is not None else None, None,
                                                    **self._stream_params())

    def _stream_params(self):
        params = {k: v for k, v in self.get_params().items() if k not in ("accountant", "callback")}
        params["max_rows_per_user"] = params["max_rows_per_user"] or 0  # None: row level
        params["min_separation"] = params["min_separation"] or 0
        return params

    def set_params(self, **params):
        raise TypeError("ContinualCovariance: parameters are fixed at construction (the stream and its one "
                        "charge are made then); build a new one")

    def __reduce__(self):
        raise TypeError("ContinualCovariance is not pickled (its checkpoint holds the exact sums and the noise "
                        "source's state): use to_bytes()/save() and from_bytes()/load()")

    def _deliver(self, releases):
        if self.callback is not None:
            for r in releases:
                self.callback(r)
        return releases

    @serialised
    def update(self, rows):
        """Ingests rows (n, d), or one row (d,); returns the releases this made (a list)."""
        return self._deliver(self._core.update(_rows(rows, "ContinualCovariance.update")))

    @serialised
    def flush(self):
        """Closes a partial block as a (shorter) release; returns it ([] if no row was pending)."""
        return self._deliver(self._core.flush())

    @serialised
    def add_aggregate(self, part):
        """A part of the current block summed by a worker (dpstream.dask; block_aggregate.hpp).

        Checked before anything changes: it continues the stream, the guard's bound and counts, and
        that its sum is one its row count n of rows with norm <= L can make (finite, diagonal >= 0,
        trace <= n L^2, |c_ij| <= sqrt(c_ii c_jj), positive semidefinite): InvalidParameter
        otherwise. What it cannot check: the rows one by one (one row of norm sqrt(n) L labelled as
        n rows passes). The CRC in the bytes is no authentication. Workers must be trusted, as the
        process calling update() is."""
        return self._deliver(self._core.add_aggregate(bytes(part)))

    def releases(self, chunks, flush=True):
        """Yields every release made while ingesting the row blocks of ``chunks`` (then flush())."""
        for chunk in chunks:
            yield from self.update(chunk)
        if flush:
            yield from self.flush()

    @property
    @serialised
    def latest(self):
        """The latest release (identical on every call: nothing is re-drawn)."""
        return self._core.latest()

    @property
    @serialised
    def steps(self):
        return self._core.steps()

    @property
    @serialised
    def rows(self):
        return self._core.rows()

    @property
    @serialised
    def rows_pending(self):
        return self._core.rows_pending()

    @property
    def neighbours(self):
        """The neighbouring relation the (epsilon, delta) holds for, in words."""
        row = _core._describe_neighbours(self.relation)
        if not self.max_rows_per_user:
            return row
        return _core._describe_unit(self.max_rows_per_user, self.min_separation or 0, "user") + ", each: " + row

    @property
    @serialised
    def mu(self):
        """The whole stream's Gaussian-DP parameter (it implies the (epsilon, delta) target)."""
        return self._core.mu()

    @property
    @serialised
    def participation_bound(self):
        """(factor, exact): one unit's sensitivity over one row's, and whether it is attained (else a
        proven upper bound); (1.0, True) at row level."""
        return self._core.participation_bound()

    @property
    @serialised
    def l2_sensitivity(self):
        return self._core.l2_sensitivity()

    @property
    @serialised
    def is_secure(self):
        """False when seed= was given (reproducible, NOT secure noise)."""
        return self._core.is_secure()

    @property
    @serialised
    def budget_description(self):
        """What every release is charged to, in the library's words: "accounted against (epsilon=...,
        delta=...)", or "not accounted: ..." (accountant=None: the reason)."""
        return self._core.budget_description()

    @property
    @serialised
    def guard_counts(self):
        """RowGuard's counts: seen, accepted, clipped, rejected, zero (exact: NOT private)."""
        return self._core.guard_counts()

    @serialised
    def release_variance(self, step):
        """Per-entry noise variance of release ``step`` (closed form)."""
        return self._core.release_variance(step)

    # Checkpoints: the C++ side's own ContinualSumCheckpoint message (CRC-sealed). They hold the exact
    # partial sums (as sensitive as the rows), the held noise and the noise source's state. A restored
    # stream re-makes the releases published after its checkpoint with the same noise: with
    # journal=PATH (a release journal, kept beside the checkpoint) a re-release on other rows than
    # before is refused (InvalidParameter) before it is published; without one, feeding the same rows
    # again is up to you. Keep the checkpoint and its journal together until the stream ends.
    @serialised
    def to_bytes(self):
        return self._core.serialize()

    @serialised
    def save(self, path):
        """Writes the checkpoint atomically, mode 0600 (base/atomic_file.hpp)."""
        self._core.save_checkpoint(str(path))

    @classmethod
    def from_bytes(cls, data, *, accountant=None, callback=None, **params):
        """The stream a checkpoint holds. ``params`` (dim, epsilon, delta and the rest) must be those
        it was built with: CorruptInput naming the field otherwise; journal= is required if the
        stream kept one (its path may change). The accountant, if given, takes the checkpoint's
        ledger and never spends less than before: its charges and the checkpoint's are merged (the
        common prefix, then both sides' own); another budget raises CorruptInput, a merged ledger
        over the budget BudgetExhausted, and nothing changes then. A checkpoint saved without an
        accountant charges the one given for the stream."""
        self = cls.__new__(cls)
        self.__dict__.update(dict(block=1, mechanism="tree", horizon=None, noise_shape="goe", seed=None,
                                  normalize="clip", clip_norm=1.0, relation="zero_out", calibration="tight",
                                  nonnegative=False, journal=None, max_rows_per_user=None, min_separation=0))
        self.__dict__.update(params)
        self.journal = None if self.journal is None else str(self.journal)
        self.accountant, self.callback = accountant, callback
        with charging(accountant):
            self._core = _core._ContinualCovariance(accountant._core if accountant is not None else None, bytes(data),
                                                    **self._stream_params())
        return self

    @classmethod
    def load(cls, path, **params):
        with open(path, "rb") as f:
            return cls.from_bytes(f.read(), **params)
