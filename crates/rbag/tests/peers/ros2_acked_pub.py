"""A transient-local Cyclone DDS publisher that says when its readers have everything, for
record_ros2.rs: a test learns that a recorder received a writer's history from the writer
itself (the recorder's MCAP file shows nothing until its open chunk closes).

    ros2_acked_pub.py --domain D --topic rt/x --type string|imu|blob|unknown --count N
                      [--depth K] [--size BYTES] --readers R [--linger S]

Reliable, transient-local, keep-all (or keep-last K) with the matching durability service, as
crates/rbag-testkit/peers/cyclone_peer.py builds its samples and QoS (imported from there).
Publishes N samples at once, then, whenever the number of matched readers changes and is at
least R, waits until every matched reader acknowledged every sample and prints ACKED <matched>.

Output, one line each, flushed: READY, PUBLISHED <i> <hex>, DONE, ACKED <n>...
Run it with CYCLONEDDS_URI pointing at the loopback config (the tests do).
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "rbag-testkit" / "peers"))

import cyclone_peer as peer  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--type", choices=sorted(peer.TYPES), default="string")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--depth", type=int, default=0)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--readers", type=int, default=1)
    ap.add_argument("--linger", type=float, default=600.0)
    args = ap.parse_args()
    # The QoS cyclone_peer.py gives `pub --reliable --transient-local [--depth K]`.
    args.best_effort, args.transient_local, args.max_samples = False, True, 0

    dp = DomainParticipant(args.domain)
    topic = Topic(dp, args.topic, peer.TYPES[args.type])
    w = DataWriter(dp, topic, qos=peer.qos(args, writer=True))
    peer.say("READY")
    for i in range(args.count):
        s = peer.make_sample(args.type, i, args.size)
        w.write(s)
        peer.say(f"PUBLISHED {i} {s.serialize().hex()}")
    peer.say("DONE")

    end = time.monotonic() + args.linger
    reported = None
    while time.monotonic() < end:
        n = w.get_publication_matched_status().current_count
        if n >= args.readers and n != reported:
            try:
                acked = w.wait_for_acks(duration(seconds=1))
            except Exception:  # noqa: BLE001 - a timeout: try again
                acked = False
            if acked:
                peer.say(f"ACKED {n}")
                reported = n
                continue
        if n < args.readers:
            reported = None
        time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main())
