"""A rospy node that only subscribes (for `rbag record --node`); run with /usr/bin/python3.

usage: record_listener.py NAME TOPICS   (TOPICS comma-separated, std_msgs/String)
"""
import sys

import rospy
from std_msgs.msg import String

rospy.init_node(sys.argv[1], disable_signals=True)
subs = [rospy.Subscriber(t, String, lambda m: None) for t in sys.argv[2].split(",")]
print("READY", flush=True)
rospy.spin()
