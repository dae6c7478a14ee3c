"""A rospy talker for rbag's tests: publishes std_msgs/String "hello N" on TOPIC at RATE Hz,
COUNT times (0 = forever). Run with Debian's /usr/bin/python3."""
import sys
import rospy
from std_msgs.msg import String

topic, rate, count = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
latch = len(sys.argv) > 4 and sys.argv[4] == "latch"
rospy.init_node("talker", anonymous=True, disable_signals=False)
pub = rospy.Publisher(topic, String, queue_size=100, latch=latch)
r = rospy.Rate(rate)
i = 0
while not rospy.is_shutdown() and (count == 0 or i < count):
    pub.publish(String(data="hello %d" % i))
    i += 1
    r.sleep()
rospy.spin() if latch else None
