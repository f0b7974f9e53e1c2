"""Shared fixtures: seeded row streams (the data's randomness; privacy noise is the library's)."""
import numpy as np
import pytest


def bounded_rows(n, d, seed, over=0.25):
    """Gaussian rows, a fraction `over` of them scaled over norm 1 (the guard clips those), the rest inside."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    scale = np.where(rng.random((n, 1)) < over, 2.0, 0.8)
    return x / norms * scale


@pytest.fixture
def rows():
    return bounded_rows(60, 5, seed=3)
