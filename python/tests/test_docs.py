"""Every Python block of README.md and docs/python.md runs as printed, as a script of its own (as a
user would save and run it: Dask's worker processes import the script, so a block without a
`__main__` guard spawns workers without end and hangs). Each must exit 0 within its time limit."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DOCS = ["README.md", os.path.join("docs", "python.md")]


def python_blocks(name):
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^```(?:python|py)\n(.*?)^```", text, flags=re.S | re.M)


BLOCKS = [(name, i, code) for name in DOCS for i, code in enumerate(python_blocks(name))]


def test_the_docs_hold_the_blocks_this_file_runs():
    assert [(name, i) for name, i, _ in BLOCKS] == [("README.md", 0), ("README.md", 1), (DOCS[1], 0),
                                                   (DOCS[1], 1), (DOCS[1], 2)]


@pytest.mark.parametrize("name,index,code", BLOCKS, ids=[f"{n}-{i}" for n, i, _ in BLOCKS])
def test_a_block_runs_as_a_script(name, index, code, tmp_path):
    script = tmp_path / f"block{index}.py"
    script.write_text(code, encoding="utf-8")
    # 120 s: the Dask blocks start a 2-process cluster (5-20 s on a shared 2-core machine); a block
    # that re-spawns workers without end never finishes.
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{name} block {index}:\n{done.stderr[-2000:]}"
    assert done.stdout.strip(), f"{name} block {index} printed nothing"
