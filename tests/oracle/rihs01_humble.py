#!/usr/bin/env python3
"""Print every type of rosbags' ROS 2 Humble store with its .msg text and rosbags' RIHS01 hash.

usage: rihs01_humble.py   (with the oracle venv's python: rosbags 0.11.9)

Prints a JSON list of {"name", "msg", "rihs01", "rihs01_char_as_uint8"}: "msg" is .msg text
regenerated from the store's field definitions (constants, bounded strings and sequences,
fixed arrays; an empty struct's `structure_needs_at_least_one_member` left out as .msg does),
"rihs01" is `Typestore.hash_rihs01(name)`. rosbags gives a .msg `char` the type id
FIELD_TYPE_CHAR, but rosidl turns .msg `char` into IDL `uint8` before hashing (compare
std_msgs/msg/Char in rosidl's generated code), so "rihs01_char_as_uint8" is rosbags' hash
with that one id corrected: it equals "rihs01" for every type without a `char`.
"""
import json
import sys

import rosbags.typesys.store as store
from rosbags.interfaces import Nodetype
from rosbags.typesys import Stores, get_typestore

EMPTY_MEMBER = 'structure_needs_at_least_one_member'


def element(desc):
    """The .msg spelling of a non-collection field type."""
    kind, detail = desc
    if kind == Nodetype.NAME:
        return detail
    name, bound = detail
    return f'{name}<={bound}' if bound else name


def field_type(desc):
    kind, detail = desc
    if kind == Nodetype.ARRAY:
        sub, size = detail
        return f'{element(sub)}[{size}]'
    if kind == Nodetype.SEQUENCE:
        sub, bound = detail
        return f'{element(sub)}[<={bound}]' if bound else f'{element(sub)}[]'
    return element(desc)


def msg_text(consts, fields):
    lines = [f'{typ} {name}={value}' for name, typ, value in consts]
    if [name for name, _ in fields] != [EMPTY_MEMBER]:
        lines += [f'{field_type(desc)} {name}' for name, desc in fields]
    return ''.join(line + '\n' for line in lines)


def main():
    typestore = get_typestore(Stores.ROS2_HUMBLE)
    names = sorted(typestore.fielddefs)
    out = []
    for name in names:
        consts, fields = typestore.fielddefs[name]
        out.append({'name': name, 'msg': msg_text(consts, fields), 'rihs01': typestore.hash_rihs01(name)})
    store.TIDMAP['char'] = store.TIDMAP['uint8']
    for entry in out:
        entry['rihs01_char_as_uint8'] = typestore.hash_rihs01(entry['name'])
    json.dump(out, sys.stdout, indent=1)


if __name__ == '__main__':
    main()
