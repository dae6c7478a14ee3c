"""A real rospy subscriber for play_ros1.rs (run with Debian's /usr/bin/python3).

usage: play_sub.py OUTDIR [--decode] [--from PREFIX] [--stall TOPIC] TOPIC...

Subscribes every TOPIC as rospy.AnyMsg (md5sum `*`, raw bytes) and keeps, per topic and in
arrival order, what came from publishers whose callerid starts with PREFIX (default
`/rbag_play`; other nodes, e.g. rospy's own /rosout, are ignored):
  digests  FNV-1a 64 of the bytes + length (rbag_testkit::digest), one per message
  wall     arrival time (time.time(), seconds) of each message
  header   the connection header of the first message (type, md5sum, latching, ...)
  values   with --decode: each message decoded with genpy from the connection header's
           own message_definition, as JSON (time/duration as {"secs", "nsecs"})
A --stall topic's callback blocks forever at its first message: rospy stops reading that
connection, so the publisher's socket and queue fill up.

  connected_at  when (time.time()) the subscriber first had a publisher connection, or null
Files in OUTDIR: `ready` once every subscriber is registered with the master; `count`
("<messages kept so far> <topics with a connection>") rewritten whenever it changes; `received.json` (atomically) when
OUTDIR/stop appears or on SIGTERM/SIGINT, after which the script exits.
"""
import json
import os
import signal
import sys
import threading
import time

import genpy
import genpy.dynamic
import rospy

args = sys.argv[1:]
out = args.pop(0)
decode = False
prefix = "/rbag_play"
stall = set()
topics = []
while args:
    a = args.pop(0)
    if a == "--decode":
        decode = True
    elif a == "--from":
        prefix = args.pop(0)
    elif a == "--stall":
        stall.add(args.pop(0))
    else:
        topics.append(a)


def digest(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x%08x" % (h, len(data))


def write_atomic(name, text):
    tmp = os.path.join(out, name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, os.path.join(out, name))


classes = {}


def message_class(header):
    key = (header["type"], header["message_definition"])
    if key not in classes:
        classes[key] = genpy.dynamic.generate_dynamic(header["type"], header["message_definition"])[header["type"]]
    return classes[key]


def plain(v):
    if isinstance(v, (genpy.Time, genpy.Duration)):
        return {"secs": v.secs, "nsecs": v.nsecs}
    if isinstance(v, genpy.Message):
        return {s: plain(getattr(v, s)) for s in v.__slots__}
    if isinstance(v, (bytes, bytearray)):
        return list(v)
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


lock = threading.Lock()
got = {t: {"digests": [], "wall": [], "header": None, "values": [], "connected_at": None} for t in topics}
total = [0]


def callback(msg, topic):
    now = time.time()
    header = dict(msg._connection_header)
    if not header.get("callerid", "").startswith(prefix):
        return
    with lock:
        g = got[topic]
        if g["header"] is None:
            g["header"] = header
        g["digests"].append(digest(msg._buff))
        g["wall"].append(now)
        if decode:
            m = message_class(header)()
            m.deserialize(msg._buff)
            g["values"].append(plain(m))
        total[0] += 1
    if topic in stall:
        while True:
            time.sleep(3600)


stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
signal.signal(signal.SIGINT, lambda *_: stop.set())

rospy.init_node("play_sub", anonymous=True, disable_signals=True)
subs = [rospy.Subscriber(t, rospy.AnyMsg, callback, callback_args=t) for t in topics]
write_atomic("ready", "\n".join(topics) + "\n")

written = None
while not stop.is_set() and not os.path.exists(os.path.join(out, "stop")):
    now = time.time()
    with lock:
        for t, s in zip(topics, subs):
            if got[t]["connected_at"] is None and s.get_num_connections() > 0:
                got[t]["connected_at"] = now
        state = "%d %d\n" % (total[0], sum(1 for t in topics if got[t]["connected_at"] is not None))
    if state != written:
        write_atomic("count", state)
        written = state
    time.sleep(0.02)

with lock:
    write_atomic("received.json", json.dumps(got))
# Unregister from the master (a --stall callback never returns: hence the hard exit after).
try:
    rospy.signal_shutdown("done")
except Exception:
    pass
os._exit(0)
