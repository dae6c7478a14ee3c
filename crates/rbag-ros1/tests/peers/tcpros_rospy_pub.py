"""A real rospy publisher for tcpros_rospy.rs (run with Debian's /usr/bin/python3).

usage: tcpros_rospy_pub.py OUTDIR COUNT
Advertises /chatter (std_msgs/String) and /imu (sensor_msgs/Imu, latched). Writes, each file
atomically, with hex of what rospy serialised:
  OUTDIR/types    "<type> <md5> <hex of full definition>" per line (String, Imu)
  OUTDIR/imu      COUNT Imu messages, published at once (only the last stays latched)
  OUTDIR/chatter  COUNT String messages, published once /chatter has a subscriber
then sleeps until killed.
"""
import io
import os
import sys
import time

import rospy
from sensor_msgs.msg import Imu
from std_msgs.msg import String

out, n = sys.argv[1], int(sys.argv[2])


def write_atomic(name, lines):
    tmp = os.path.join(out, name + ".tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, os.path.join(out, name))


def hexof(msg):
    # Serialised as it stands: rospy fills header.seq only when it serialises for a connection.
    b = io.BytesIO()
    msg.serialize(b)
    return b.getvalue().hex()


rospy.init_node("tcpros_pub", disable_signals=True)
chatter = rospy.Publisher("/chatter", String, queue_size=100)
imu = rospy.Publisher("/imu", Imu, queue_size=100, latch=True)
write_atomic("types", ["%s %s %s" % (c._type, c._md5sum, c._full_text.encode().hex()) for c in (String, Imu)])

imu_hex = []
for i in range(n):
    m = Imu()
    m.header.stamp = rospy.Time(1700000000 + i, 1000 * i)
    m.header.frame_id = "imu_link"
    m.orientation.w = 1.0
    m.orientation_covariance = [0.01 * i] * 9
    m.angular_velocity.z = -0.5 * i
    m.linear_acceleration.z = 9.81 + i
    imu.publish(m)
    imu_hex.append(hexof(m))
write_atomic("imu", imu_hex)

deadline = time.time() + 60
while chatter.get_num_connections() < 1 and time.time() < deadline:
    time.sleep(0.02)
chatter_hex = []
for i in range(n):
    m = String(data="hello %d \u00e9" % i)
    chatter.publish(m)
    chatter_hex.append(hexof(m))
write_atomic("chatter", chatter_hex)

while True:
    time.sleep(1)
