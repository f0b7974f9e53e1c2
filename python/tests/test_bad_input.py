"""Bad input from Python: the library's errors, with its messages, before any noise or budget is spent."""
import numpy as np
import pytest

import dpstream
from conftest import bounded_rows


def test_error_types_are_python_exceptions():
    assert issubclass(dpstream.InvalidParameter, ValueError)
    assert issubclass(dpstream.InvalidRow, ValueError)
    assert issubclass(dpstream.CorruptInput, ValueError)
    assert issubclass(dpstream.BudgetExhausted, dpstream.DpstreamError)
    assert issubclass(dpstream.ResourceLimit, MemoryError)


def test_a_covariance_over_the_memory_limit_is_refused_before_allocating_or_charging():
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    # d = 200,000: 320 GB a d x d matrix, over the default limit (80% of the memory) of any machine here.
    with pytest.raises(dpstream.ResourceLimit, match=r"dimension 200000 .* over the memory limit"):
        dpstream.ContinualCovariance(200000, 1.0, 1e-6, accountant=acct, seed=1)
    assert acct.spent.epsilon == 0


def test_a_nan_row_is_refused_by_index_and_column_and_the_stream_is_unchanged():
    s = dpstream.ContinualCovariance(3, 1.0, 1e-6, block=2, seed=1)
    s.update(np.array([[0.1, 0.2, 0.3]]))
    block = np.zeros((3, 3))
    block[2, 1] = np.nan
    with pytest.raises(dpstream.InvalidRow, match=r"^row 3: .*column 1") as error:
        s.update(block)
    assert error.value.row_index == 3
    assert error.value.reason.startswith("entry at column 1") and str(error.value) == "row 3: " + error.value.reason
    assert s.rows == 1 and s.steps == 0 and s.guard_counts["seen"] == 1  # nothing of the block was taken
    s.update(np.zeros((1, 3)))  # the stream goes on; the next row is row 1 again
    assert s.steps == 1
    with pytest.raises(dpstream.InvalidRow, match=r"^row 2: .*dimension 4, expected 3"):
        s.update(np.zeros((1, 4)))
    with pytest.raises(dpstream.InvalidRow, match="row 2: l2 norm 1.41.* exceeds the bound 1 .policy: reject"):
        dpstream.ContinualCovariance(3, 1.0, 1e-6, seed=1, normalize="none").update(np.array([[0.6, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])[[0, 0, 1]])


def test_bad_parameters_are_refused_before_any_charge():
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    cases = [
        (dict(epsilon=0.0), "epsilon"),
        (dict(delta=1.5), "delta"),
        (dict(mechanism="fourier"), "unknown noise strategy 'fourier'"),
        (dict(mechanism="blt"), "fixed horizon"),
        (dict(block=0), "block_rows must be >= 1"),
        (dict(noise_shape="round"), "round"),
        (dict(normalize="sphere"), "normalize 'sphere'"),
        (dict(clip_norm=-1.0), "clip-norm"),
    ]
    for change, message in cases:
        args = {**dict(dim=3, epsilon=1.0, delta=1e-6, accountant=acct), **change}
        with pytest.raises(dpstream.InvalidParameter, match=message):
            dpstream.ContinualCovariance(**args)
    assert acct.ledger == []  # nothing was charged
    with pytest.raises(dpstream.InvalidParameter, match="n_components"):
        dpstream.PrivatePCA("gauss", 9, 1.0, 1e-6, accountant=acct).fit(np.zeros((4, 3)))
    with pytest.raises(dpstream.InvalidParameter, match="method 'svd'"):
        dpstream.PrivatePCA("svd", 1, 1.0, 1e-6, accountant=acct).fit(np.zeros((4, 3)))
    with pytest.raises(dpstream.InvalidRow, match="row 2: .*column 0"):
        x = np.zeros((4, 3))
        x[2, 0] = np.inf
        dpstream.PrivatePCA("gauss", 1, 1.0, 1e-6, accountant=acct).fit(x)
    assert acct.ledger == []


def test_an_exhausted_budget_and_a_full_horizon_raise_budget_exhausted():
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    dpstream.ContinualCovariance(3, 1.0, 1e-6, seed=1, accountant=acct)
    with pytest.raises(dpstream.BudgetExhausted, match="continual covariance sum") as error:
        dpstream.OnlinePCA(1, 1.0, 1e-6, seed=1, accountant=acct).partial_fit(np.zeros((2, 3)))
    assert "budget" in str(error.value)
    assert len(acct.ledger) == 1
    s = dpstream.ContinualCovariance(3, 1.0, 1e-6, block=2, horizon=2, seed=1)
    x = bounded_rows(5, 3, seed=1)
    s.update(x[:3])
    with pytest.raises(dpstream.BudgetExhausted, match="calibrated for 2 releases of 2 rows"):
        s.update(x[3:])
    assert s.rows == 3


def test_bad_aggregates_are_refused():
    from dpstream import _core
    s = dpstream.ContinualCovariance(3, 1.0, 1e-6, block=4, seed=1)
    parts = _core.aggregate_rows("covariance", bounded_rows(8, 3, seed=2), 0, dim=3, block=4)
    s.add_aggregate(parts[0])
    with pytest.raises(dpstream.InvalidParameter, match="rows counted twice"):
        s.add_aggregate(parts[0])
    other = _core.aggregate_rows("covariance", bounded_rows(8, 3, seed=2), 4, dim=3, block=4, clip_norm=2.0)
    with pytest.raises(dpstream.InvalidParameter, match="guarded with norm bound 2"):
        s.add_aggregate(other[0])
    with pytest.raises(dpstream.CorruptInput):
        s.add_aggregate(parts[1][:-3])
    assert s.rows == 4


def test_a_stream_refuses_add_remove_before_charging_and_states_its_relation():
    # A stream's releases depend on each row's slot: a removal that shifts the later rows is not what
    # it guarantees, so relation='add_remove' is refused, naming what holds; the default says it.
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    with pytest.raises(dpstream.InvalidParameter, match=r"add_remove_row is not a stream's guarantee.*zero_out_row"):
        dpstream.ContinualCovariance(3, 1.0, 1e-6, relation="add_remove", accountant=acct, seed=1)
    assert acct.ledger == []
    s = dpstream.ContinualCovariance(3, 1.0, 1e-6, seed=1)
    assert s.relation == "zero_out"
    assert s.neighbours == "one row zeroed, its slot kept (a removal that shifts later rows is not covered)"
    assert dpstream.ContinualCovariance(3, 1.0, 1e-6, relation="replace", seed=1).neighbours == (
        "one row replaced by another in the same slot")
    assert dpstream.PrivatePCA().neighbours == "one row added or removed"
    with pytest.raises(dpstream.InvalidParameter, match="neighbours 'remove'"):
        dpstream.ContinualCovariance(3, 1.0, 1e-6, relation="remove", seed=1)


def test_the_docstrings_state_the_relation_where_users_read_it():
    for cls in (dpstream.ContinualCovariance, dpstream.OnlinePCA):
        assert "zeroed with its slot kept" in " ".join(cls.__doc__.split()), cls
        assert "added/removed" not in cls.__doc__, cls


def _forged(part, old, new):
    """`part` with the packed value `old` replaced by `new`, resealed: the CRC-32 seal (the last 6
    bytes: field 99's tag, then the CRC of every byte before it) is no authentication."""
    import struct
    import zlib
    body = bytes(part)[:-6]
    at = body.find(struct.pack("<d", old))
    assert at >= 0 and body.find(struct.pack("<d", old), at + 1) < 0
    body = body[:at] + struct.pack("<d", new) + body[at + 8:]
    return body + bytes(part)[-6:-4] + struct.pack("<I", zlib.crc32(body))


def test_a_forged_part_no_rows_could_sum_to_is_refused():
    from dpstream import _core
    row = np.array([[0.5, 0.25, 0.125]])  # one row: packed a a^T = (0.25, 0.125, 0.0625, 0.0625, 0.03125, ...)
    (part,) = _core.aggregate_rows("covariance", row, 0, dim=3, block=1)
    s = dpstream.ContinualCovariance(3, 1.0, 1e-6, block=1, seed=1)
    # Entry (0, 1) = 0.125 -> 1e6, the diagonal (trace 0.328 <= 1 L^2) untouched: Cauchy-Schwarz refuses it.
    with pytest.raises(dpstream.InvalidParameter, match="Cauchy-Schwarz"):
        s.add_aggregate(_forged(part, 0.125, 1e6))
    assert s.rows == 0 and s.steps == 0
    s.add_aggregate(part)  # the genuine part, still accepted
    assert s.steps == 1


# Input checks as strict as scikit-learn's, that never echo the data, all before any charge.
SECRET = 123456.789  # a value that must never appear in a message


@pytest.mark.parametrize("make", [lambda a: dpstream.PrivatePCA("gauss", 2, accountant=a),
                                  lambda a: dpstream.OnlinePCA(2, block=4, accountant=a)])
def test_estimators_refuse_bad_input_clearly_before_any_charge(make):
    acct = dpstream.PrivacyAccountant(1.0, 1e-6)
    x = bounded_rows(20, 4, seed=1)
    with pytest.raises(ValueError, match="Complex data not supported"):
        make(acct).fit(x + 1j * SECRET)
    rows = [["a", SECRET, 0.0, 1.0]] * 3
    with pytest.raises(ValueError) as error:
        make(acct).fit(rows)
    assert str(SECRET) not in str(error.value) and "'a'" not in str(error.value)
    with pytest.raises(TypeError, match="sparse input is not supported"):
        make(acct).fit(__import__("scipy.sparse").sparse.csr_matrix(x))
    with pytest.raises(ValueError, match="0 sample"):
        make(acct).fit(np.zeros((0, 4)))
    with pytest.raises(ValueError, match="Expected 2D array"):
        make(acct).fit(x[0])
    nan = x.copy()
    nan[3, 2] = np.nan
    with pytest.raises(dpstream.InvalidRow, match="row 3: .*NaN or infinity .column 2") as error:
        make(acct).fit(nan)
    assert error.value.row_index == 3
    assert acct.ledger == []  # nothing charged by any of the refusals
    fitted = make(acct).fit(x)
    with pytest.raises(dpstream.InvalidRow, match="NaN or infinity"):
        fitted.transform(nan)
    with pytest.raises(ValueError, match="X has 3 features, but \\w+ is expecting 4 features"):
        fitted.transform(x[:, :3])
    with pytest.raises(dpstream.NotFittedError, match="not fitted yet|seen no rows"):
        make(acct).transform(x)
    assert issubclass(dpstream.NotFittedError, AttributeError)


def test_streams_refuse_complex_and_sparse_rows_without_echoing_them():
    s = dpstream.ContinualCovariance(3, 1.0, 1e-6, seed=1)
    with pytest.raises(ValueError, match="Complex data not supported"):
        s.update(np.full((2, 3), SECRET * 1j))
    with pytest.raises(ValueError) as error:
        s.update([["x", SECRET, 1]])
    assert str(SECRET) not in str(error.value)
    assert s.rows == 0 and s.guard_counts["seen"] == 0


def test_replay_names_a_row_over_the_bound_as_an_invalid_row(tmp_path):
    # The reader's refusals keep their class (io/guarded_rows.hpp): an InvalidRow (a ValueError) with
    # the file's row index, naming the file, row and line, not a bare RuntimeError.
    rows = np.full((40, 3), 0.1)
    rows[25] = [3.0, 4.0, 0.0]
    path = tmp_path / "rows.csv"
    np.savetxt(path, rows, delimiter=",")
    with pytest.raises(dpstream.InvalidRow, match=r"rows\.csv: row 25 \(line 26\): .*exceeds the bound") as error:
        dpstream.replay(path, out=tmp_path / "out", seed=1, normalize="none", k=2, block=8)
    assert error.value.row_index == 25
    # reason: what was wrong, without the file, row and line the message adds
    assert "exceeds the bound" in error.value.reason and "rows.csv" not in error.value.reason


def test_a_workers_bad_row_is_named_by_its_global_index_with_its_reason_intact():
    # dpstream.dask's workers guard their rows from 0; the row is renamed by its place in the stream
    # from the error's typed reason, never by cutting its message.
    from dpstream import _core
    rows = np.zeros((4, 3))
    rows[2, 1] = np.inf
    with pytest.raises(dpstream.InvalidRow) as error:
        _core.guard_rows(rows, 100, dim=3)
    assert error.value.row_index == 102
    assert error.value.reason.startswith("entry at column 1 is inf")
    assert str(error.value) == "row 102: " + error.value.reason
