#!/usr/bin/env python3
"""Print the MD5 sums Debian's generated ROS 1 Python messages carry (genpy `_md5sum`).

usage: ros1_md5.py MSG_FILE...   (each /usr/share/<pkg>/msg/<Type>.msg)

Prints {"pkg/Type": md5 or null}: null where the package's Python module is not installed.
"""
import importlib
import json
import os
import sys


def main():
    out = {}
    for path in sys.argv[1:]:
        pkg = os.path.basename(os.path.dirname(os.path.dirname(path)))
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            module = importlib.import_module(pkg + ".msg")
            out[pkg + "/" + name] = getattr(module, name)._md5sum
        except (ImportError, AttributeError):
            out[pkg + "/" + name] = None
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
