"""A TCPROS subscriber written from the protocol description alone (no ROS imports).

usage: tcpros_raw_sub.py HOST PORT TOPIC COUNT MD5 [nodelay]
Sends a subscriber header sorted by key as rospy does, then prints the reply's fields as
`H <key> <hex of value>` lines and, unless refused, COUNT messages as `M <hex>` lines.
"""
import socket
import struct
import sys


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("peer closed with %d of %d bytes missing" % (n - len(buf), n))
        buf += chunk
    return buf


def encode_header(fields):
    body = b""
    for k in sorted(fields):
        f = ("%s=%s" % (k, fields[k])).encode()
        body += struct.pack("<I", len(f)) + f
    return struct.pack("<I", len(body)) + body


def decode_header(body):
    out, i = {}, 0
    while i < len(body):
        (n,) = struct.unpack("<I", body[i:i + 4])
        k, v = body[i + 4:i + 4 + n].decode().split("=", 1)
        out[k] = v
        i += 4 + n
    return out


def main():
    host, port, topic, count, md5 = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
    nodelay = len(sys.argv) > 6 and sys.argv[6] == "nodelay"
    sock = socket.create_connection((host, port), timeout=20)
    sock.sendall(encode_header({
        "callerid": "/raw_py_sub",
        "md5sum": md5,
        "tcp_nodelay": "1" if nodelay else "0",
        "topic": topic,
        "type": "*",
    }))
    (n,) = struct.unpack("<I", recv_exact(sock, 4))
    header = decode_header(recv_exact(sock, n))
    msgs = []
    if "error" not in header:
        for _ in range(count):
            (n,) = struct.unpack("<I", recv_exact(sock, 4))
            msgs.append(recv_exact(sock, n).hex())
    for k, v in header.items():
        print("H", k, v.encode().hex())
    for m in msgs:
        print("M", m)
    sys.stdout.flush()


main()
