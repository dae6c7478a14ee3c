"""Real rospy subscribers for tcpros_subscribers.rs (run with Debian's /usr/bin/python3).

usage: tcpros_rospy_sub.py OUTDIR COUNT
First writes, atomically:
  OUTDIR/types     "<type> <md5> <hex of full definition>" for sensor_msgs/Imu
  OUTDIR/imu_sent  COUNT serialised Imu messages (hex) for the test to publish
Then subscribes /chatter as rospy.AnyMsg (md5sum=*, raw bytes) and /imu as sensor_msgs/Imu
(the real md5), appending to OUTDIR/chatter and OUTDIR/imu one line per message: the raw
bytes (AnyMsg) or the re-serialised message (Imu), in hex. The first message of each topic
also writes OUTDIR/<topic>.header: the connection header, "key hex(value)" per line.
"""
import io
import os
import sys
import time

import rospy
from sensor_msgs.msg import Imu

out, n = sys.argv[1], int(sys.argv[2])


def write_atomic(name, lines):
    tmp = os.path.join(out, name + ".tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, os.path.join(out, name))


def hexof(msg):
    b = io.BytesIO()
    msg.serialize(b)
    return b.getvalue().hex()


write_atomic("types", ["%s %s %s" % (Imu._type, Imu._md5sum, Imu._full_text.encode().hex())])
sent = []
for i in range(n):
    m = Imu()
    m.header.seq = i
    m.header.stamp = rospy.Time(1700000000 + i, 7 * i)
    m.header.frame_id = "imu_%d" % i
    m.orientation.w = 1.0
    m.linear_acceleration.x = 0.25 * i
    m.angular_velocity_covariance = [float(i)] * 9
    sent.append(hexof(m))
write_atomic("imu_sent", sent)

files = {}


def record(name, msg_hex, header):
    if name not in files:
        write_atomic(name + ".header", ["%s %s" % (k, v.encode().hex()) for k, v in sorted(header.items())])
        files[name] = open(os.path.join(out, name), "a")
    files[name].write(msg_hex + "\n")
    files[name].flush()


rospy.init_node("tcpros_sub", disable_signals=True)
rospy.Subscriber("/chatter", rospy.AnyMsg, lambda m: record("chatter", m._buff.hex(), m._connection_header))
rospy.Subscriber("/imu", Imu, lambda m: record("imu", hexof(m), m._connection_header))
while True:
    time.sleep(1)
