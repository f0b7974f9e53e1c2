"""What every dpstream estimator shares: scikit-learn's parameter protocol, one lock per object, pickling
of the fitted state, and input checks as strict as scikit-learn's that never echo the data.

Thread safety: every public method of an estimator (and of ContinualCovariance and
PrivacyAccountant) holds the object's own lock, so calls from several threads on one object run one
after the other (the C++ side releases the GIL, so without it two threads would race inside the
library). A lock wait releases the GIL. Objects that share an accountant charge it under the
accountant's lock, taken after the object's own (always in that order, so two objects cannot
deadlock). Threads on different objects run in parallel.
"""
import functools
import threading

import numpy as np

from ._core import InvalidRow

try:  # scikit-learn's own class when it is installed, so `except NotFittedError` catches ours
    from sklearn.exceptions import NotFittedError as _SklearnNotFitted
except ImportError:  # pragma: no cover - scikit-learn is optional
    class _SklearnNotFitted(ValueError, AttributeError):
        pass


class NotFittedError(_SklearnNotFitted):
    """A method that needs a fitted estimator was called before fit/partial_fit (a ValueError and an
    AttributeError, as scikit-learn's, from which it derives when scikit-learn is installed)."""


def serialised(method):
    """Runs `method` holding the object's lock (see the module's docstring)."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


class Params:
    """get_params/set_params over the constructor's arguments (scikit-learn's convention), a lock per
    object, and pickling of what ``_fitted_state`` gives (the lock never travels)."""
    _param_names = ()

    @property
    def _lock(self):
        lock = self.__dict__.get("_object_lock")
        if lock is None:  # made on first use, under the GIL: setdefault keeps exactly one
            lock = self.__dict__.setdefault("_object_lock", threading.RLock())
        return lock

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names}

    def set_params(self, **params):
        """Sets constructor arguments; takes effect at the next fit (a fitted model is unchanged)."""
        for name, value in params.items():
            if name not in self._param_names:
                raise ValueError(f"Invalid parameter {name!r} for estimator {type(self).__name__}; "
                                 f"valid parameters are {sorted(self._param_names)}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __getstate__(self):
        with self._lock:
            state = {k: v for k, v in self.__dict__.items() if k != "_object_lock"}
            return self._fitted_state(state)

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _fitted_state(self, state):
        return state


def _is_sparse(X):
    return type(X).__module__.startswith("scipy.sparse")


def check_rows(X, where, n_features=None, *, allow_1d=False, allow_empty=False, finite=False):
    """X as a 2-d float64 array, or a clear error naming `where` and never showing a value of X.

    Refused: sparse matrices (TypeError: densify with X.toarray()), complex values (ValueError: their
    imaginary part would be lost), anything that is not numbers (TypeError/ValueError), 1-d arrays
    unless allow_1d (then one row), other than 2 dimensions, no rows (unless allow_empty) or no columns, a width other
    than n_features, and with finite=True (or the index of X's first row in a stream) NaN or
    infinity: InvalidRow (a ValueError) naming the row and column."""
    if _is_sparse(X):
        raise TypeError(f"{where}: sparse input is not supported (a {type(X).__name__}); pass a dense array, "
                        "e.g. X.toarray()")
    try:
        a = np.asarray(X)
        if np.iscomplexobj(a):
            raise ValueError(f"{where}: Complex data not supported (the imaginary part would be lost)")
        a = a.astype(np.float64, copy=False)
    except TypeError:
        # numpy's own wording names only the element's type, not its value
        raise TypeError(f"{where}: float() argument must be a string or a real number: an element of X is "
                        "neither (its value is not shown)") from None
    except ValueError as e:
        if "Complex data" in str(e):
            raise
        raise ValueError(f"{where}: an element of X cannot be converted to float64 (its value is not "
                         "shown: dpstream never echoes its input)") from None
    if a.ndim == 1 and allow_1d:
        a = a.reshape(1, -1)
    if a.ndim != 2:
        raise ValueError(f"{where}: Expected 2D array, got {a.ndim}D array instead. Reshape your data either using "
                         "array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) if it "
                         "contains a single sample.")
    if a.shape[0] == 0 and not allow_empty:
        raise ValueError(f"{where}: Found array with 0 sample(s) (shape={a.shape}) while a minimum of 1 is "
                         "required.")
    if a.shape[1] == 0:
        raise ValueError(f"{where}: Found array with 0 feature(s) (shape={a.shape}) while a minimum of 1 is "
                         "required.")
    if n_features is not None and a.shape[1] != n_features:
        owner = where.split(".")[0]
        raise ValueError(f"{where}: X has {a.shape[1]} features, but {owner} is expecting {n_features} "
                         "features as input")
    if finite is not False and not np.isfinite(a).all():
        row, col = np.argwhere(~np.isfinite(a))[0]
        first = 0 if finite is True else int(finite)
        reason = f"{where}: Input contains NaN or infinity (column {col}; nothing was charged)"
        error = InvalidRow(f"row {first + row}: {reason}")
        error.row_index, error.reason = first + int(row), reason
        raise error
    return a


def flip_signs(components):
    """Rows of `components` with the sign that makes each row's largest |entry| positive (scikit-learn's
    svd_flip convention): post-processing, so signs are deterministic for a given release."""
    c = np.array(components, dtype=np.float64, copy=True)
    if c.size:
        biggest = np.argmax(np.abs(c), axis=1)
        signs = np.sign(c[np.arange(c.shape[0]), biggest])
        c *= np.where(signs == 0, 1.0, signs)[:, None]
    return c
