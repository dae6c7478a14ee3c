"""Which messages of a bench/ros1_live.sh run a recorded bag lacks (run with /usr/bin/python3).

    ros1_live_missing.py BAG string|image BASE_HZ PUBLISHED [TOPIC]

The generated messages carry their log time (ros1_live_gen.py): a std_msgs/String's data starts
with it in decimal nanoseconds, a sensor_msgs/Image's header.stamp is it. Their index is
(log time - 1700000000 s) * BASE_HZ. Prints one line: how many of the PUBLISHED first indices are
missing, as ranges, and whether they are at the start, the end or in the middle; duplicates and
out-of-order messages are counted too.
"""
import struct
import sys

import rosbag

T0 = 1_700_000_000 * 10**9


def stamp(kind, data):
    if kind == 'string':
        return int(data[4:23])
    secs, nsecs = struct.unpack_from('<II', data, 4)
    return secs * 10**9 + nsecs


def ranges(xs):
    out = []
    for x in xs:
        if out and x == out[-1][1] + 1:
            out[-1][1] = x
        else:
            out.append([x, x])
    return ', '.join(f'{a}' if a == b else f'{a}-{b}' for a, b in out)


def main(bag, kind, base, published, topic='/bench'):
    base, published = float(base), int(published)
    seen, dups, back, last = set(), 0, 0, -1
    with rosbag.Bag(bag) as b:
        for _, raw, _ in b.read_messages(topics=[topic], raw=True):
            i = int(round((stamp(kind, raw[1]) - T0) * base / 1e9))
            dups += i in seen
            back += i < last
            seen.add(i)
            last = i
    missing = [i for i in range(published) if i not in seen]
    where = []
    if missing:
        if missing[0] == 0:
            where.append('start')
        if missing[-1] == published - 1:
            where.append('end')
        if any(0 < i < published - 1 for i in missing) and not (missing == list(range(missing[0], missing[-1] + 1))
                                                               and (missing[0] == 0 or missing[-1] == published - 1)):
            where.append('middle')
    shown = ranges(missing)
    if len(shown) > 200:
        shown = shown[:200] + ' ...'
    print(f'{bag}: kept {len(seen)} of {published}, missing {len(missing)} [{shown}] at {"/".join(where) or "-"}; '
          f'duplicates {dups}, out of order {back}')


if __name__ == '__main__':
    main(*sys.argv[1:])
