"""Every message of every corpus bag decodes, through rbag.Reader, to the same values as an
independent decoder, compared as plain values (tests/oracle/canonical.py):

- ROS 1 bags: Debian's rosbag with genpy (through /usr/bin/python3, where it imports);
- MCAP: the mcap library's mcap_ros2 decoder;
- SQLite3: rosbags.
"""
import json
import math
import sys
from collections import defaultdict

import rbag
from canonical import canonical
from conftest import TEST_MSGS, corpus, oracle, peer_module, rosbag_python


def ours(path, msg_path=()):
    """rbag's messages of a bag, by topic: [(log_time, canonical message)]."""
    topics = defaultdict(list)
    with rbag.Reader(path, msg_path=list(msg_path)) as bag:
        for m in bag.messages():
            topics[m.topic].append((m.log_time, canonical(m.message.to_dict())))
    return topics


def theirs(lines):
    topics = defaultdict(list)
    for line in lines:
        obj = json.loads(line)
        topics[obj["topic"]].append((obj["log_time"], obj["message"]))
    return topics


def diff(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return f"{path}: fields {list(a)} vs {list(b)}"
        return next((d for k in a if (d := diff(a[k], b[k], f"{path}.{k}"))), None)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} elements"
        return next((d for i, (p, q) in enumerate(zip(a, b)) if (d := diff(p, q, f"{path}[{i}]"))), None)
    if isinstance(a, float) or isinstance(b, float):
        if a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float)) and _f32(a) == _f32(b)):
            return None
    if a != b:
        return f"{path}: {a!r} vs {b!r}"
    return None


def _f32(x):
    import struct

    return struct.unpack("f", struct.pack("f", x))[0] if math.isfinite(x) else x


def assert_same(what, a, b):
    assert sorted(a) == sorted(b), f"{what}: topics differ: {sorted(a)} vs {sorted(b)}"
    n = 0
    for topic, xs in a.items():
        ys = b[topic]
        assert len(xs) == len(ys), f"{what} {topic}: {len(xs)} vs {len(ys)} messages"
        for i, ((ta, ma), (tb, mb)) in enumerate(zip(xs, ys)):
            assert ta == tb, f"{what} {topic} message {i}: log times {ta} vs {tb}"
            d = diff(ma, mb)
            assert d is None, f"{what} {topic} message {i}: {d}"
            n += 1
    return n


def test_ros1_bags_decode_like_genpy():
    root = corpus("ros1")
    python = rosbag_python()
    total = 0
    for name in ["multi_none.bag", "multi_lz4.bag", "multi_bz2.bag", "small_chunks.bag"]:
        bag = root / name
        total += assert_same(name, ours(bag), theirs(oracle(python, "decode_ros1.py", bag)))
    assert total > 2500, total
    print(f"{total} ROS 1 messages equal genpy's", file=sys.stderr)


def test_mcap_bags_decode_like_mcap_ros2():
    root = corpus("ros2/mcap")
    peer_module("mcap_ros2")
    total = 0
    for name in ["talker", "wbag", "cdr_test"]:
        files = sorted((root / name).glob("*.mcap"))
        total += assert_same(
            name, ours(root / name, [TEST_MSGS]), theirs(oracle(sys.executable, "decode_mcap.py", *files))
        )
    assert total > 100, total
    print(f"{total} MCAP messages equal mcap_ros2's", file=sys.stderr)


def test_sqlite3_bags_decode_like_rosbags():
    root = corpus("ros2/sqlite3")
    peer_module("rosbags")
    total = 0
    for name in ["wbag", "cdr_test", "empty_bag"]:
        total += assert_same(
            name,
            ours(root / name, [TEST_MSGS]),
            theirs(oracle(sys.executable, "decode_rosbags.py", root / name, "--msg-path", TEST_MSGS)),
        )
    assert total > 6000, total
    print(f"{total} SQLite3 messages equal rosbags'", file=sys.stderr)
