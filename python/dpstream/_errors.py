"""dpstream's exceptions: the C++ library's errors, raised with the library's message.

* InvalidParameter (a ValueError): a parameter outside its domain; raised before any noise is drawn
  or any budget spent.
* InvalidRow (a ValueError): a row refused by RowGuard or a stream (wrong dimension, NaN/Inf naming
  the column, a norm over the bound under normalize='none'); ``row_index`` is its index in the
  stream, ``reason`` what was wrong (the message without "row N: "), and the stream is unchanged (no row of the refused block was ingested).
* CorruptInput (a ValueError): a checkpoint, ledger or aggregate that is corrupt or was made with
  other parameters.
* BudgetExhausted (a RuntimeError): a charge over the accountant's budget, or rows past a fixed
  horizon. Nothing was released.
* ResourceLimit (a MemoryError): an object whose state would exceed the memory limit (a covariance of
  dimension 20,000 needs 3.2 GB a matrix); raised before anything is allocated or charged.
All derive from DpstreamError.
"""
from ._core import BudgetExhausted, CorruptInput, DpstreamError, InvalidParameter, InvalidRow, ResourceLimit

__all__ = ["DpstreamError", "InvalidParameter", "InvalidRow", "CorruptInput", "BudgetExhausted", "ResourceLimit"]
