#!/usr/bin/env python3
"""Print rosbags' RIHS01 type hashes for every message type of one ROS 2 distro's store.

usage: store_rihs01.py DISTRO   (humble, iron, jazzy, kilted)

Prints {"pkg/msg/Type": "RIHS01_<hex>"} from rosbags' get_typestore(Stores.ROS2_<DISTRO>).

One correction first: rosidl turns a .msg `char` into IDL `uint8` before describing the type,
so the real hash describes a uint8 field; rosbags 0.11.9 describes it as `char`. With the
fields retyped the hashes equal the ones rosidl generates (std_msgs/msg/Char is
RIHS01_3ad2d04d…, service_msgs/msg/ServiceEventInfo RIHS01_41bcbbe0…).
"""
import json
import sys

from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.base import Nodetype


def char_as_uint8(desc):
    kind, rest = desc
    if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
        return (kind, (char_as_uint8(rest[0]), rest[1]))
    if kind == Nodetype.BASE and rest[0] == "char":
        return (kind, ("uint8", rest[1]))
    return desc


def main():
    store = get_typestore(getattr(Stores, "ROS2_" + sys.argv[1].upper()))
    for name, (consts, fields) in list(store.fielddefs.items()):
        store.fielddefs[name] = (consts, [(f, char_as_uint8(d)) for f, d in fields])
    store.cache.clear()
    json.dump({name: store.hash_rihs01(name) for name in sorted(store.fielddefs)}, sys.stdout)


if __name__ == "__main__":
    main()
