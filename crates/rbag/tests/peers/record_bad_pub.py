"""A misbehaving ROS 1 publisher for rbag's record tests: plain sockets and xmlrpc, no rospy.
Run with /usr/bin/python3 (any Python 3 works); ROS_MASTER_URI names the master.

usage: record_bad_pub.py

Registers /bad_pub with the master as the publisher of the topics below, answers requestTopic
with its TCPROS port, and on each subscriber connection (after reading the subscriber's
header, printed as `SUBHEADER {json}`) does what the topic's name says:
  /bad_garbage   a header length of 12 whose one field claims 0xFFFFFFFF bytes, then closes
  /bad_noise     HTTP-ish ASCII junk instead of a header, then closes
  /bad_huge      a valid header, then a frame length of 0xFFFFFFF0 and some bytes
  /bad_midframe  a valid header, one good frame, then half a frame, then closes
  /bad_refuse    an `error=` header, then closes
  /bad_nodef     a header with md5sum=* and no message_definition, then 3 good frames
  /bad_wrongmd5  a header with a wrong md5sum for std_msgs/String, then 3 good frames
The last two keep their connection open. Every good frame is printed as
`SENT <topic> <hex>` after it was written to the socket.
"""
import json
import os
import socket
import socketserver
import struct
import sys
import threading
import time
import xmlrpc.client
from xmlrpc.server import SimpleXMLRPCRequestHandler, SimpleXMLRPCServer

CALLER = "/bad_pub"
MASTER = os.environ["ROS_MASTER_URI"]
STRING_MD5 = "992ce8a1687cec8c8bd883ec73ca41d1"
WRONG_MD5 = "0123456789abcdef0123456789abcdef"
TOPICS = ["/bad_garbage", "/bad_noise", "/bad_huge", "/bad_midframe", "/bad_refuse", "/bad_nodef", "/bad_wrongmd5"]
lock = threading.Lock()
counter = {"n": 0}


def say(*parts):
    with lock:
        print(*parts, flush=True)


def header(fields):
    body = b""
    for k, v in fields:
        f = ("%s=%s" % (k, v)).encode()
        body += struct.pack("<I", len(f)) + f
    return struct.pack("<I", len(body)) + body


def string_msg(s):
    b = s.encode()
    return struct.pack("<I", len(b)) + b


def frame(payload):
    return struct.pack("<I", len(payload)) + payload


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def read_header(sock):
    (n,) = struct.unpack("<I", recv_exact(sock, 4))
    body = recv_exact(sock, n)
    fields, i = {}, 0
    while i < len(body):
        (m,) = struct.unpack("<I", body[i : i + 4])
        k, _, v = body[i + 4 : i + 4 + m].decode().partition("=")
        fields[k] = v
        i += 4 + m
    return fields


def good_header(topic, **extra):
    fields = [
        ("callerid", CALLER),
        ("latching", "0"),
        ("md5sum", STRING_MD5),
        ("message_definition", "string data\n"),
        ("topic", topic),
        ("type", "std_msgs/String"),
    ]
    fields = [(k, extra.get(k, v)) for k, v in fields if extra.get(k, v) is not None]
    return header(fields)


def send_good(sock, topic, text):
    payload = string_msg(text)
    sock.sendall(frame(payload))
    say("SENT", topic, payload.hex())


class Tcpros(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class Conn(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        try:
            sub = read_header(s)
        except Exception as e:
            say("BADSUB", repr(e))
            return
        say("SUBHEADER", json.dumps(sub, sort_keys=True))
        topic = sub.get("topic", "")
        with lock:
            counter["n"] += 1
            k = counter["n"]
        try:
            if topic == "/bad_garbage":
                s.sendall(b"\x0c\x00\x00\x00\xff\xff\xff\xffgarbage!")
                time.sleep(0.5)
            elif topic == "/bad_noise":
                s.sendall(b"GET / HTTP/1.1\r\nHost: nowhere\r\n\r\n" + bytes(range(256)) * 4)
                time.sleep(0.5)
            elif topic == "/bad_huge":
                s.sendall(good_header(topic) + struct.pack("<I", 0xFFFFFFF0) + b"z" * 4096)
                time.sleep(2)
            elif topic == "/bad_midframe":
                s.sendall(good_header(topic))
                send_good(s, topic, "good before the torn frame %d" % k)
                s.sendall(struct.pack("<I", 100) + b"y" * 50)
                time.sleep(0.2)
            elif topic == "/bad_refuse":
                s.sendall(header([("error", "this publisher refuses everyone")]))
                time.sleep(0.2)
            elif topic in ("/bad_nodef", "/bad_wrongmd5"):
                if topic == "/bad_nodef":
                    s.sendall(good_header(topic, md5sum="*", message_definition=None, latching=None))
                else:
                    s.sendall(good_header(topic, md5sum=WRONG_MD5))
                for i in range(3):
                    send_good(s, topic, "%s message %d" % (topic, i))
                while True:
                    time.sleep(1)
            else:
                s.sendall(header([("error", "unknown topic " + topic)]))
        except OSError as e:
            say("PEERGONE", topic, repr(e))
        finally:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


class Slave(socketserver.ThreadingMixIn, SimpleXMLRPCServer):
    daemon_threads = True


tcpros = Tcpros(("127.0.0.1", 0), Conn)
threading.Thread(target=tcpros.serve_forever, daemon=True).start()
tcp_port = tcpros.server_address[1]

slave = Slave(("127.0.0.1", 0), requestHandler=SimpleXMLRPCRequestHandler, logRequests=False, allow_none=True)
slave_uri = "http://127.0.0.1:%d/" % slave.server_address[1]


def requestTopic(caller_id, topic, protocols):
    say("REQUEST", caller_id, topic)
    return [1, "ready on 127.0.0.1:%d" % tcp_port, ["TCPROS", "127.0.0.1", tcp_port]]


slave.register_function(requestTopic, "requestTopic")
slave.register_function(lambda c: [1, "", os.getpid()], "getPid")
slave.register_function(lambda c: [1, "", MASTER], "getMasterUri")
slave.register_function(lambda c: [1, "", []], "getBusInfo")
slave.register_function(lambda c: [1, "", [[], [], []]], "getBusStats")
slave.register_function(lambda c: [1, "", []], "getSubscriptions")
slave.register_function(lambda c: [1, "", [[t, "std_msgs/String"] for t in TOPICS]], "getPublications")
slave.register_function(lambda c, t, p: [1, "", 0], "publisherUpdate")
slave.register_function(lambda c, k, v: [1, "", 0], "paramUpdate")
slave.register_function(lambda c, m="": [1, "", 0], "shutdown")
threading.Thread(target=slave.serve_forever, daemon=True).start()

master = xmlrpc.client.ServerProxy(MASTER)
for t in TOPICS:
    code, msg, _ = master.registerPublisher(CALLER, t, "std_msgs/String", slave_uri)
    if code != 1:
        sys.exit("registerPublisher %s: %s" % (t, msg))
say("READY", slave_uri, tcp_port)
while True:
    time.sleep(1)
