"""Writes a bag of COUNT std_msgs/String on /chatter for tcpros_roscpp.rs, printing the hex of
each message's serialisation, one per line.

usage: tcpros_make_bag.py BAG COUNT   (Debian's /usr/bin/python3, python3-rosbag)
"""
import io
import sys

import rosbag
import rospy
from std_msgs.msg import String

path, n = sys.argv[1], int(sys.argv[2])
with rosbag.Bag(path, "w") as bag:
    for i in range(n):
        m = String(data="from roscpp %d" % i)
        bag.write("/chatter", m, rospy.Time(1000, 10000000 * i))
        b = io.BytesIO()
        m.serialize(b)
        print(b.getvalue().hex())
