"""rbag.Reader on a URL: a ROS 1 corpus bag served over HTTP (with Range) from 127.0.0.1 reads
as the local file does."""
import http.server
import threading

import pytest

import rbag
from conftest import corpus


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """http.server's file handler, plus the `Range: bytes=a-b` that it lacks."""

    def log_message(self, *args):
        pass

    def send_head(self):
        rng = self.headers.get("Range")
        path = self.translate_path(self.path)
        try:
            data = open(path, "rb").read()
        except OSError:
            self.send_error(404)
            return None
        start, end = 0, len(data)
        if rng and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            start, end = int(a), (int(b) + 1 if b else len(data))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{len(data)}"')
        self.end_headers()
        import io

        return io.BytesIO(data[start:end])


@pytest.fixture
def server():
    root = corpus("ros1")
    handler = lambda *a, **k: RangeHandler(*a, directory=str(root), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_a_url_reads_like_the_local_bag(server):
    local = rbag.Reader(corpus("ros1/multi_lz4.bag"))
    remote = rbag.Reader(f"{server}/multi_lz4.bag")
    assert remote.message_count == local.message_count
    assert {n: t.count for n, t in remote.topics.items()} == {n: t.count for n, t in local.topics.items()}
    ours = [(m.topic, m.log_time, bytes(m.data)) for m in remote.messages(topics="/imu")]
    theirs = [(m.topic, m.log_time, bytes(m.data)) for m in local.messages(topics="/imu")]
    assert ours == theirs and len(ours) > 100
    assert remote.to_arrow("/imu").equals(local.to_arrow("/imu"))
    # Requests and bytes are counted for the URL; a local file makes none.
    stats = remote.stats()
    assert stats["requests"] >= 3 and 0 < stats["bytes_fetched"] <= 2 * corpus("ros1/multi_lz4.bag").stat().st_size
    assert local.stats()["requests"] == 0 and local.stats()["bytes_fetched"] == 0


def test_aws_profile_is_said_to_be_unused(server, monkeypatch):
    monkeypatch.setenv("AWS_PROFILE", "robots")
    # The "bucket" is the local server, which answers 404: no request leaves the machine.
    for k, v in {"AWS_ENDPOINT_URL": server, "AWS_ALLOW_HTTP": "true", "AWS_ACCESS_KEY_ID": "test",
                 "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    # Only s3:// URLs read AWS settings: an http:// URL says nothing.
    rbag.Reader(f"{server}/multi_lz4.bag")
    with pytest.warns(UserWarning, match="AWS_PROFILE=robots is set, but profiles in ~/.aws are not read"):
        with pytest.raises(rbag.StorageError):
            rbag.Reader("s3://no-such-bucket-rbag-test/a.bag")


def test_a_missing_url_is_a_storage_error(server):
    with pytest.raises(rbag.StorageError, match="nope.bag"):
        rbag.Reader(f"{server}/nope.bag")
