#!/usr/bin/env python3
"""Writes the C++ example of README.md to a source file, so that the test suite compiles and runs it.

usage: extract_readme_example.py README.md OUTPUT.cpp

The example is the one fenced code block tagged `cpp` (a line "```cpp" opening it, a line "```"
closing it). No such block, more than one, or one left open is an error (exit status 1): the test
must never compile something other than what the README shows.
"""
import sys


def extract(text, source):
    blocks = []
    current = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if current is None:
            if stripped.startswith("```") and stripped[3:].strip() == "cpp":
                current = (number, [])
        elif stripped == "```":
            blocks.append(current)
            current = None
        else:
            current[1].append(line)
    if current is not None:
        sys.exit(f"{source}:{current[0]}: the ```cpp block opened here is never closed")
    if len(blocks) != 1:
        where = ", ".join(f"line {n}" for n, _ in blocks) or "none"
        sys.exit(f"{source}: expected exactly one ```cpp block, found {len(blocks)} ({where})")
    start, lines = blocks[0]
    return f'// Generated from {source}, the ```cpp block at line {start}: edit the README, not this file.\n' + \
        f'#line {start + 1} "README.md"\n' + "\n".join(lines) + "\n"


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: extract_readme_example.py README.md OUTPUT.cpp")
    readme, output = argv[1], argv[2]
    with open(readme, encoding="utf-8") as f:
        code = extract(f.read(), readme)
    with open(output, "w", encoding="utf-8") as f:
        f.write(code)


if __name__ == "__main__":
    main(sys.argv)
