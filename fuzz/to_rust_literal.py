#!/usr/bin/env python3
"""Prints a file as a Rust byte-string literal (for regression tests in tests/fuzzed.rs)."""
import sys

data = open(sys.argv[1], "rb").read()
width = int(sys.argv[2]) if len(sys.argv) > 2 else 96
out, line = [], ""
for b in data:
    c = chr(b)
    if c == '"' or c == "\\":
        piece = "\\" + c
    elif 0x20 <= b < 0x7F:
        piece = c
    else:
        piece = "\\x%02x" % b
    if len(line) + len(piece) > width:
        out.append(line)
        line = ""
    line += piece
out.append(line)
# A trailing backslash continues the literal on the next line without the newline and indent;
# a line starting with a space would lose it, so a continued line never starts with one.
fixed = []
for i, l in enumerate(out):
    if i > 0 and l.startswith(" "):
        l = "\\x20" + l[1:]
    fixed.append(l)
print('b"' + "\\\n    ".join(fixed) + '"')
