"""The `ros_discovery_info` half of `ros2 node list`, with no ROS installed: rmw_dds_common's
ParticipantEntitiesInfo, which says which node owns which readers and writers (graph_cache.cpp
joins it with DDS discovery; the message layout from rmw_dds_common jazzy: Gid.msg
`char[16] data`, NodeEntitiesInfo.msg, ParticipantEntitiesInfo.msg; topic, type and QoS from
rmw_cyclonedds rmw_node.cpp L1412-1453: `ros_discovery_info`, reliable, transient local, read
here with keep-all as rmw_cyclonedds' own subscription does).

The other half, DDS's built-in DCPSPublication/DCPSSubscription topics, is joined by the test:
the Python binding 11.0.1 crashes reading built-in topics (a segfault or "realloc(): invalid old
size" on `DataReader(dp, BuiltinTopicDcpsSubscription).take()`, even in an empty domain).

    graph_peer.py nodes --domain D [--until NODE] [--timeout S]

Output, one line each, flushed: READY; for every node seen (again when its entry changes)
NODE <namespace> <name> <participant gid hex>, then READER <gid hex> / WRITER <gid hex> per
endpoint it owns; DONE. Exit 0 once --until's node was seen with an endpoint, else 2.
"""
import argparse
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
import cyclonedds.idl.types as types
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class Gid_(IdlStruct, typename="rmw_dds_common::msg::dds_::Gid_"):
    data: types.array[types.uint8, 16]


@dataclass
class NodeEntitiesInfo_(IdlStruct, typename="rmw_dds_common::msg::dds_::NodeEntitiesInfo_"):
    node_namespace: types.bounded_str[256]
    node_name: types.bounded_str[256]
    reader_gid_seq: types.sequence[Gid_]
    writer_gid_seq: types.sequence[Gid_]


@dataclass
class ParticipantEntitiesInfo_(IdlStruct, typename="rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"):
    gid: Gid_
    node_entities_info_seq: types.sequence[NodeEntitiesInfo_]


def say(*parts):
    print(*parts, flush=True)


def run_nodes(args):
    dp = DomainParticipant(args.domain)
    q = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.Durability.TransientLocal, Policy.History.KeepAll)
    info = DataReader(dp, Topic(dp, "ros_discovery_info", ParticipantEntitiesInfo_), qos=q)
    say("READY")
    shown, found, end = {}, False, time.monotonic() + args.timeout
    while time.monotonic() < end and not found:
        for s in info.take(N=64):
            if not isinstance(s, ParticipantEntitiesInfo_):
                continue
            gid = bytes(s.gid.data).hex()
            for n in s.node_entities_info_seq:
                lines = [f"{kind} {bytes(g.data).hex()}"
                         for kind, seq in (("READER", n.reader_gid_seq), ("WRITER", n.writer_gid_seq)) for g in seq]
                key = (gid, n.node_namespace, n.node_name)
                if shown.get(key) != lines:
                    shown[key] = lines
                    say("NODE", n.node_namespace, n.node_name, gid)
                    for line in lines:
                        say(line)
                    if n.node_name == args.until and lines:
                        found = True
        time.sleep(0.05)
    say("DONE")
    return 0 if found or not args.until else 2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    n = sub.add_parser("nodes")
    n.add_argument("--domain", type=int, required=True)
    n.add_argument("--until", default="")
    n.add_argument("--timeout", type=float, default=30.0)
    args = ap.parse_args()
    sys.exit({"nodes": run_nodes}[args.cmd](args))


if __name__ == "__main__":
    main()
