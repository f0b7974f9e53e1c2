#!/usr/bin/python3
"""Row logs between Python and C++: Python's protobuf writes a log, dpstream-convert (the C++
reader and writer) copies it and exports it as CSV, and Python checks both copies bit for bit.

Usage: rowlog_interop.py DPSTREAM_CONVERT ROW_LOG_PROTO
Needs python3-protobuf and protoc (Debian: python3-protobuf, protobuf-compiler). Takes well under a
second; registered as a unit test when python3 can import google.protobuf.
"""
import math
import os
import struct
import subprocess
import sys
import tempfile

from google.protobuf.internal.decoder import _DecodeVarint32
from google.protobuf.internal.encoder import _VarintBytes


def bits(x):
    return struct.pack("<d", x)


def nan_with_payload(payload):
    return struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000000 | payload))[0]


def write_log(pb, path, dim, rows):
    header = pb.RowLogHeader(magic="dpstream-rowlog", format_version=1, dimension=dim, count=len(rows),
                             provenance=b"rowlog_interop.py", created_by="python3-protobuf")
    with open(path, "wb") as f:
        for msg in [header] + rows:
            data = msg.SerializeToString()
            f.write(_VarintBytes(len(data)) + data)


def read_log(pb, path):
    with open(path, "rb") as f:
        data = f.read()
    pos, messages = 0, []
    while pos < len(data):
        size, pos = _DecodeVarint32(data, pos)
        messages.append(data[pos:pos + size])
        pos += size
    header = pb.RowLogHeader.FromString(messages[0])
    return header, [pb.Row.FromString(m) for m in messages[1:]]


def dense_of(row, dim):
    if not row.sparse:
        return list(row.values)
    out = [0.0] * dim
    for i, v in zip(row.indices, row.values):
        out[i] = v
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    convert, proto = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="dpstream-interop-") as tmp:
        subprocess.run(["protoc", "--proto_path=" + os.path.dirname(proto), "--python_out=" + tmp, proto], check=True)
        sys.path.insert(0, tmp)
        import row_log_pb2 as pb  # generated just above

        dim = 5
        rows = []
        for t in range(200):
            rows.append(pb.Row(values=[math.sin(t * 7 + j) * 10.0 ** (t % 9 - 4) for j in range(dim)]))
            if t % 3 == 0:
                rows[-1].id = 2**64 - 1 - t
            if t % 4 == 0:
                rows[-1].timestamp = -(2**63) + t
        rows.append(pb.Row(values=[-0.0, 5e-324, 1.7976931348623157e308, float("-inf"), nan_with_payload(0x1234)]))
        rows.append(pb.Row(sparse=True, indices=[0, 3, 4], values=[-0.0, 0.1, 1 / 3], id=7, timestamp=1700000000))
        rows.append(pb.Row(sparse=True))  # all zero
        py_log = os.path.join(tmp, "python.pb")
        write_log(pb, py_log, dim, rows)

        cpp_log = os.path.join(tmp, "cpp.pb")
        cpp_csv = os.path.join(tmp, "cpp.csv")
        for out in (cpp_log, cpp_csv):
            run = subprocess.run([convert, "--input", py_log, "--output", out], capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit("dpstream-convert failed:\n" + run.stdout + run.stderr)

        header, back = read_log(pb, cpp_log)
        assert header.magic == "dpstream-rowlog" and header.dimension == dim and header.count == len(rows), header
        assert len(back) == len(rows), (len(back), len(rows))
        for t, (a, b) in enumerate(zip(rows, back)):
            assert a.sparse == b.sparse and list(a.indices) == list(b.indices), t
            assert [bits(x) for x in a.values] == [bits(x) for x in b.values], t
            assert a.HasField("id") == b.HasField("id") and a.id == b.id, t
            assert a.HasField("timestamp") == b.HasField("timestamp") and a.timestamp == b.timestamp, t

        with open(cpp_csv) as f:
            lines = [line.rstrip("\n") for line in f]
        assert len(lines) == len(rows), (len(lines), len(rows))
        for t, (row, line) in enumerate(zip(rows, lines)):
            values = [float(x) for x in line.split(",")]
            expected = dense_of(row, dim)
            for x, y in zip(values, expected):
                assert (math.isnan(x) and math.isnan(y)) or bits(x) == bits(y), (t, line)
    print("rowlog interop: ok (%d rows Python -> C++ -> Python, bit for bit; CSV export exact)" % len(rows))


if __name__ == "__main__":
    main()
