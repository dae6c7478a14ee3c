"""A rospy publisher for rbag's record tests (run with Debian's /usr/bin/python3).

usage: record_pub.py OUT.json MODE N RATE SUBS

MODE main: publishes /latched (std_msgs/String, latched) once at startup and prints READY;
           then waits until /chatter (std_msgs/String), /imu (sensor_msgs/Imu) and /pose
           (geometry_msgs/PoseStamped) each have SUBS subscriber connections, publishes N
           messages on each at RATE Hz, interleaved.
MODE late: waits until /late (nav_msgs/Odometry) has SUBS connections, publishes N at RATE Hz.
Then writes OUT.json atomically: {topic: [hex of each message's serialised bytes, in order]}
(rospy serialises once per publish() for all subscribers and fills header.seq in place, so the
bytes are taken after publish()), prints DONE and sleeps until killed.
"""
import io
import json
import math
import os
import sys
import time

import rospy
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu
from std_msgs.msg import String

out, mode, n, rate, subs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])


def hexof(msg):
    b = io.BytesIO()
    msg.serialize(b)
    return b.getvalue().hex()


def wait_subscribers(pubs):
    deadline = time.time() + 180
    while time.time() < deadline and not rospy.is_shutdown():
        if all(p.get_num_connections() >= subs for p in pubs.values()):
            return
        time.sleep(0.02)
    counts = {t: p.get_num_connections() for t, p in pubs.items()}
    print("TIMEOUT waiting for %d subscribers: %s" % (subs, counts), flush=True)
    sys.exit(1)


def imu(i):
    m = Imu()
    m.header.stamp = rospy.Time(1700000000 + i, 1000 * i)
    m.header.frame_id = "imu_link"
    m.orientation.w = math.cos(0.01 * i)
    m.orientation.z = math.sin(0.01 * i)
    m.orientation_covariance = [0.01 * i] * 9
    m.angular_velocity.z = -0.5 * i
    m.linear_acceleration.z = 9.81 + i
    return m


def pose(i):
    m = PoseStamped()
    m.header.stamp = rospy.Time(1700000000 + i, 7)
    m.header.frame_id = "map"
    m.pose.position.x = 1.5 * i
    m.pose.position.y = -2.25 * i
    m.pose.orientation.w = 1.0
    return m


def odom(i):
    m = Odometry()
    m.header.stamp = rospy.Time(1700000100 + i, 0)
    m.header.frame_id = "odom"
    m.child_frame_id = "base_link"
    m.pose.pose.position.x = 0.1 * i
    m.twist.twist.linear.x = 0.5
    m.pose.covariance = [float(i)] * 36
    return m


rospy.init_node("record_pub_" + mode, disable_signals=True)
published = {}
if mode == "main":
    latched = rospy.Publisher("/latched", String, queue_size=10, latch=True)
    first = String(data="latched at startup \u00e9")
    latched.publish(first)
    published["/latched"] = [hexof(first)]
    pubs = {
        "/chatter": rospy.Publisher("/chatter", String, queue_size=1000),
        "/imu": rospy.Publisher("/imu", Imu, queue_size=1000),
        "/pose": rospy.Publisher("/pose", PoseStamped, queue_size=1000),
    }
    makers = {"/chatter": lambda i: String(data="hello %d" % i), "/imu": imu, "/pose": pose}
    print("READY", flush=True)
elif mode == "late":
    pubs = {"/late": rospy.Publisher("/late", Odometry, queue_size=1000)}
    makers = {"/late": odom}
    print("READY", flush=True)
else:
    sys.exit("unknown mode " + mode)

wait_subscribers(pubs)
print("SUBSCRIBED", flush=True)
for t in pubs:
    published[t] = []
r = rospy.Rate(rate)
for i in range(n):
    for t, p in pubs.items():
        m = makers[t](i)
        p.publish(m)
        published[t].append(hexof(m))
    r.sleep()

tmp = out + ".tmp"
with open(tmp, "w") as f:
    json.dump(published, f)
os.rename(tmp, out)
print("DONE", flush=True)
while True:
    time.sleep(1)
