"""A rospy talker for rbag's record tests (run with Debian's /usr/bin/python3).

usage: record_talker.py TOPICS N RATE SUBS [PAD] [latch]

TOPICS is a comma-separated list. Each tick publishes std_msgs/String "<topic> <i> <PAD x's>"
(PAD `rN`: N random hex digits instead, which do not compress) on every topic, N ticks (0 = forever) at RATE Hz, once every topic has SUBS subscriber
connections (0: at once). Prints SUBSCRIBED when it starts publishing and DONE after the N-th
tick, then sleeps until killed. With `latch`, the publishers are latched.
"""
import os
import sys
import time

import rospy
from std_msgs.msg import String

topics = sys.argv[1].split(",")
n, rate, subs = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
pad_arg = sys.argv[5] if len(sys.argv) > 5 else "0"
random_pad = pad_arg.startswith("r")
pad = "x" * int(pad_arg.lstrip("r"))
latch = len(sys.argv) > 6 and sys.argv[6] == "latch"

rospy.init_node("record_talker", anonymous=True, disable_signals=True)
pubs = [(t, rospy.Publisher(t, String, queue_size=1000, latch=latch)) for t in topics]
deadline = time.time() + 180
while subs > 0 and not all(p.get_num_connections() >= subs for _, p in pubs):
    if time.time() > deadline:
        print("TIMEOUT waiting for subscribers", flush=True)
        sys.exit(1)
    time.sleep(0.02)
print("SUBSCRIBED", flush=True)
r = rospy.Rate(rate)
i = 0
while n == 0 or i < n:
    for t, p in pubs:
        if random_pad:
            pad = os.urandom(len(pad) // 2 + 1).hex()[: len(pad)]
        p.publish(String(data="%s %d %s" % (t, i, pad)))
    i += 1
    r.sleep()
print("DONE", flush=True)
while True:
    time.sleep(1)
