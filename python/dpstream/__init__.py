"""dpstream: differentially private learning of low-rank structure from streams (Python bindings).

The C++ library does the work (every check, noise draw and charge); this package wires it:

* ContinualCovariance -- continual private release of a stream's second moment.
* OnlinePCA -- private online PCA (follow-the-perturbed-leader on that stream), with the regret meter.
* PrivatePCA -- one-shot private PCA (gauss, power, oja).
* PrivacyAccountant -- a budget and its ledger, shared by several objects.
* replay(...) -- dpstream-replay's run through the library's session; returns its JSON line's figures as a dict.
* dpstream.dask -- the same streams ingested by a Dask cluster (a finished collection, or batches as
  they arrive), with a bounded window of blocks in flight.

The estimators follow scikit-learn's contract (get_params/set_params, clone keeps a shared
accountant, pickling carries the fitted model and the ledger), every object is thread-safe (a lock
per object), and long calls stop on Ctrl-C (an interrupted PrivatePCA fit charges nothing).

Noise is secure (libsodium ChaCha20) unless seed= is given: seeded noise is reproducible and NOT
secure. Errors are the library's, with its messages: InvalidParameter, InvalidRow, CorruptInput
(ValueError subclasses), BudgetExhausted and ResourceLimit (a MemoryError); NotFittedError
(scikit-learn's, when it is installed) before a fit.
"""
from ._errors import BudgetExhausted, CorruptInput, DpstreamError, InvalidParameter, InvalidRow, ResourceLimit
from ._estimator import NotFittedError
from ._online_pca import OnlinePCA
from ._pca import PrivatePCA
from ._privacy import PrivacyAccountant, Spent
from ._replay import replay
from ._stream import ContinualCovariance, Release

__all__ = ["ContinualCovariance", "Release", "OnlinePCA", "PrivatePCA", "PrivacyAccountant", "Spent", "replay",
           "DpstreamError", "NotFittedError", "InvalidParameter", "InvalidRow", "CorruptInput", "BudgetExhausted", "ResourceLimit"]
from ._version import __version__  # noqa: E402  (meson.build's project version)
