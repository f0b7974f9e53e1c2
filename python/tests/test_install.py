"""Installing (suite `slow`: it builds the library from scratch). 1. docs/python.md's `pip install`
block, run as printed in a copy of the source tree: a clean venv (system site-packages for numpy)
gets an importable dpstream whose __version__ is the project's and the distribution's. 2. `meson
install` of this build (into a --destdir): the package lands in a directory /usr/bin/python3
searches, and its extension has a RUNPATH to the installed library."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("DPSTREAM_BUILD_ROOT")


def project_version():
    with open(os.path.join(ROOT, "meson.build"), encoding="utf-8") as f:
        return re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)


def install_block():
    with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
        text = f.read()
    blocks = [b for b in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M) if "pip install" in b]
    assert len(blocks) == 1, "docs/python.md must hold one ```sh block with pip install"
    return blocks[0]


def copy_sources(into):
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if tracked.returncode != 0:  # not a git checkout: everything but build trees
        shutil.copytree(ROOT, into, ignore=shutil.ignore_patterns("build*", ".venv", "__pycache__"))
        return
    for path in tracked.stdout.decode().split("\0"):
        if path:
            os.makedirs(os.path.join(into, os.path.dirname(path)), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, path), os.path.join(into, path))


def test_pip_install_into_a_clean_venv_as_the_docs_print_it(tmp_path):
    source = tmp_path / "src"
    copy_sources(source)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", install_block()], cwd=source, capture_output=True,
                          text=True, timeout=3000)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == project_version()
    python = str(source / ".venv" / "bin" / "python")
    check = ("import importlib.metadata as m, dpstream, numpy as np; "
             "assert m.version('dpstream') == dpstream.__version__; "
             "assert dpstream.__file__.startswith(__import__('sys').prefix), dpstream.__file__; "
             "print(dpstream.PrivatePCA(n_components=1, seed=1).fit(np.eye(3)).components_.shape)")
    done = subprocess.run([python, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "(1, 3)", done.stderr


@pytest.mark.skipif(BUILD is None, reason="DPSTREAM_BUILD_ROOT not set (meson test sets it)")
def test_meson_install_lands_where_debian_python_looks(tmp_path):
    dest = tmp_path / "dest"
    done = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--tags", "python-runtime", "--destdir",
                           str(dest)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = [root for root, dirs, files in os.walk(dest) if os.path.basename(root) == "dpstream" and "__init__.py" in files]
    assert len(found) == 1
    site = "/" + os.path.relpath(os.path.dirname(found[0]), dest)
    searched = subprocess.run(["/usr/bin/python3", "-c", "import sys; print('\\n'.join(sys.path))"],
                              capture_output=True, text=True, check=True).stdout.split()
    assert site in searched, f"{site} is not on /usr/bin/python3's sys.path"
    options = {o["name"]: o["value"] for o in json.loads(subprocess.run(
        ["meson", "introspect", "--buildoptions", BUILD], capture_output=True, text=True, check=True).stdout)}
    libdir = os.path.join(options["prefix"], options["libdir"])  # where libdpstream.so is installed
    core = [f for f in os.listdir(found[0]) if f.startswith("_core") and f.endswith(".so")]
    dynamic = subprocess.run(["readelf", "-d", os.path.join(found[0], core[0])], capture_output=True, text=True).stdout
    assert re.search(r"RUNPATH.*\[[^\]]*" + re.escape(libdir), dynamic), dynamic
    # Imported from the installed tree, with the library of this build standing in for the installed one.
    env = dict(os.environ, PYTHONPATH=os.path.dirname(found[0]), LD_LIBRARY_PATH=os.path.join(BUILD, "lib"))
    done = subprocess.run([sys.executable, "-c", "import dpstream; print(dpstream.__version__)"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == project_version(), done.stderr
