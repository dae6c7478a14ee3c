"""The comparison server for bench/serve.sh: a minimal Foxglove WebSocket server on the pip
`foxglove-sdk`, sending the messages of an MCAP file (read with the mcap library, into memory
first, so the SDK's rate excludes reading) as fast as it can once a client has subscribed to
every channel, then a status "playback ended".

usage: serve_sdk.py MCAP
Prints "sdk serve: ws://127.0.0.1:PORT" on stderr once listening; runs until killed.
"""
import sys
import threading
import time

import foxglove
from foxglove.websocket import ServerListener, StatusLevel
from mcap.reader import make_reader


def main():
    path = sys.argv[1]
    channels = {}
    messages = []
    with open(path, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages(log_time_order=True):
            ch = channels.get(channel.id)
            if ch is None:
                ch = foxglove.Channel(
                    channel.topic,
                    schema=foxglove.Schema(name=schema.name, encoding=schema.encoding, data=schema.data),
                    message_encoding=channel.message_encoding,
                )
                channels[channel.id] = ch
            messages.append((ch, message.data, message.log_time))

    subscribed = set()
    ready = threading.Event()

    class Listener(ServerListener):
        def on_subscribe(self, client, channel):
            subscribed.add(channel.id)
            if len(subscribed) == len(channels):
                ready.set()

    # A backlog that holds every message, as rbag's 64 MiB queue does here: neither drops.
    server = foxglove.start_server(
        name="foxglove-sdk bench", port=0, server_listener=Listener(), message_backlog_size=len(messages) + 16
    )
    print(f"sdk serve: ws://127.0.0.1:{server.port}", file=sys.stderr, flush=True)
    ready.wait()
    time.sleep(0.25)  # rbag serve's start grace, for the same start
    for ch, data, t in messages:
        ch.log(data, log_time=t)
    server.publish_status("playback ended", StatusLevel.Info)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
