"""A static file server for the remote benchmark: HTTP/1.1 keep-alive, `Range: bytes=a-b`,
ETag, and bodies sent with sendfile, so that neither curl nor rbag waits on Python.

    python bench/py/range_server.py ROOT PORT
"""
import email.utils
import http.server
import os
import socketserver
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _head(self):
        path = os.path.join(ROOT, self.path.split("?")[0].lstrip("/"))
        if not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        st = os.stat(path)
        size, start, end = st.st_size, 0, st.st_size
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            start, end = int(a), min(int(b) + 1, size) if b else size
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{st.st_mtime_ns:x}-{size}"')
        self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
        self.end_headers()
        return path, start, end

    def do_HEAD(self):
        self._head()

    def do_GET(self):
        got = self._head()
        if got:
            path, start, end = got
            with open(path, "rb") as f:
                self.wfile.flush()
                self.connection.sendfile(f, offset=start, count=end - start)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


if __name__ == "__main__":
    ROOT, port = sys.argv[1], int(sys.argv[2])
    Server(("127.0.0.1", port), Handler).serve_forever()
