"""PrivacyAccountant: the ledger of every charge and what the run has spent (privacy/accountant.hpp)."""
import threading
from dataclasses import dataclass

from . import _core


@dataclass(frozen=True)
class Spent:
    """What a ledger spends, at the budget's delta (privacy/accountant.hpp, Spent)."""
    epsilon: float        # the smallest of the basic, the zCDP and the GDP bound
    delta: float
    basic_epsilon: float  # sum of the charges' epsilons
    basic_delta: float
    zcdp_epsilon: float   # the zCDP bound (CKS 2020 conversion by default); inf if not applicable
    rho: float            # sum of rho over charges that have one
    gdp_epsilon: float    # the Gaussian DP bound when every charge is Gaussian; inf otherwise


class PrivacyAccountant:
    """A privacy budget (epsilon, delta) and the ledger of what was charged against it.

    Accounting (privacy/accountant.hpp): each charge carries a zCDP rho (Gaussian: Delta^2/(2 sigma^2))
    and its own (epsilon_i, delta_i). Valid bounds on the composition are computed at the budget's
    delta -- basic composition (sum of epsilon_i, sum of delta_i), zCDP (sum of rho converted to
    (epsilon, delta)) and, when every charge is a Gaussian mechanism, Gaussian DP (mu =
    sqrt(sum of mu_i^2), mu_i^2 = 2 rho_i, read on the Gaussian's exact profile; Dong, Roth & Su
    2022) -- and the smallest is what ``spent`` reports. A charge that would take the
    spent epsilon over the budget is refused with BudgetExhausted and leaves the ledger unchanged.

    One accountant may be shared by several objects (ContinualCovariance, OnlinePCA, PrivatePCA):
    pass it as ``accountant=``; each continual stream charges it once, at construction, for all of
    its releases, and PrivatePCA once per fit.

    Thread-safe: its methods, and every charge an object makes to it, hold its lock.

    A budget cannot be copied: copy.copy, copy.deepcopy and so sklearn.base.clone (cross_val_score,
    GridSearchCV) return THIS accountant, so the clones of an estimator given ``accountant=`` all
    charge the one budget (a second fold past it raises BudgetExhausted) instead of each getting a
    fresh one. Pickling carries the ledger (to_bytes()): the unpickled accountant has spent what
    this one had, and from then on is a separate ledger (merge two with restore()).
    """

    def __init__(self, epsilon, delta, conversion="cks2020"):
        self._core = _core._Accountant(float(epsilon), float(delta), conversion)
        self._lock = threading.RLock()

    @classmethod
    def _wrap(cls, core):
        self = cls.__new__(cls)
        self._core = core
        self._lock = threading.RLock()
        return self

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (PrivacyAccountant.from_bytes, (self.to_bytes(),))

    @property
    def budget(self):
        """(epsilon, delta) of the budget."""
        with self._lock:
            return self._core.budget()

    @property
    def spent(self):
        """What the ledger spends (a Spent)."""
        with self._lock:
            return Spent(**self._core.spent())

    @property
    def remaining(self):
        """Epsilon still available at the budget's delta."""
        with self._lock:
            return self._core.remaining_epsilon()

    @property
    def ledger(self):
        """Every charge, in order: dicts with label, epsilon, delta, rho (None if it has none) and
        gaussian (True for a Gaussian mechanism, which the GDP bound may compose)."""
        with self._lock:
            return self._core.ledger()

    def to_bytes(self):
        """The ledger as the library's Protobuf message (privacy_ledger.proto, CRC-sealed)."""
        with self._lock:
            return self._core.serialize()

    def restore(self, data):
        """Takes a saved ledger (to_bytes()) into this one without ever lowering the spend: the
        common prefix of the two, then this ledger's own later charges, then the saved one's. Another
        budget: CorruptInput; a merged ledger over the budget: BudgetExhausted (nothing changes)."""
        with self._lock:
            self._core.restore(bytes(data))

    @classmethod
    def from_bytes(cls, data):
        """A ledger from to_bytes(); CorruptInput if the bytes are not one."""
        return cls._wrap(_core._Accountant.deserialize(bytes(data)))

    def __repr__(self):
        eps, delta = self.budget
        return f"PrivacyAccountant(epsilon={eps}, delta={delta}, spent={self.spent.epsilon:.6g}, charges={len(self.ledger)})"


def charging(accountant):
    """The lock to hold while a call may charge `accountant` (None: nothing to hold)."""
    return accountant._lock if accountant is not None else _NO_LOCK


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NO_LOCK = _NoLock()
