"""Prints where `meson install` puts the package: argv[2] (Meson's default) if this interpreter searches
it, else the first directory on sys.path under the prefix argv[1] that is a site directory (Debian:
/usr/local/lib/python3.X/dist-packages, while Meson's default is /usr/local/lib/python3/dist-packages,
which Debian's python3 does not search), else argv[2]."""
import os
import sys

prefix, default = os.path.normpath(sys.argv[1]), os.path.normpath(sys.argv[2])
searched = [os.path.normpath(p) for p in sys.path if p]
if default in searched:
    print(default)
else:
    under = [p for p in searched if p.startswith(prefix + os.sep) and os.path.basename(p) in ("dist-packages", "site-packages")]
    print(under[0] if under else default)
