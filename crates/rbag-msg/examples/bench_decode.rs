//! Decode benchmark (bench/decode.sh): decodes every payload of a manifest written by
//! `bench/decode_gen.py` with a reused [`rbag_msg::Decoder`] (the flat representation, no
//! allocation per message) and prints the median time per message, next to the time of the
//! [`Value`](rbag_msg::Value) tree ([`rbag_msg::decode`], one `Vec` per nested message) and of
//! copying the payload into a preallocated `Vec` (a memcpy floor for large messages).
//!
//! ```text
//! cargo run --release -p rbag-msg --example bench_decode -- MANIFEST [ROUNDS] [ROUND_MS]
//! ```
//!
//! Manifest lines are `LABEL ENC TYPE FILE PATH=VALUE...` (ENC `cdr`: the humble store, `ros1`:
//! noetic). Before timing, every payload is decoded once and checked: each PATH (`a.b[3].c`)
//! must hold VALUE, encoding the decoded message again must give back the payload's bytes, and
//! the tree built from the view must equal the tree [`rbag_msg::decode`] gives. Then a loop count
//! is picked so that one round takes about ROUND_MS (default 50) ms, and ROUNDS (default 7)
//! rounds are timed. Prints one line per payload:
//! `LABEL ENC bytes=B decode_ns=MEDIAN tree_ns=MEDIAN memcpy_ns=MEDIAN` (ns per message).

use std::hint::black_box;
use std::time::Instant;

use rbag_msg::store::{registry, Distro};
use rbag_msg::{decode, Decoder, Encoding, Schema, ValueRef};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_decode: {e}");
        std::process::exit(1);
    }
}

fn run() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let manifest = args.first().ok_or("usage: bench_decode MANIFEST [ROUNDS] [ROUND_MS]")?;
    let rounds: usize = args.get(1).map_or(Ok(7), |s| s.parse())?;
    let round_ns: u128 = args.get(2).map_or(Ok(50), |s| s.parse::<u128>())? * 1_000_000;
    let mut decoder = Decoder::new();
    for line in std::fs::read_to_string(manifest)?.lines() {
        let [label, enc, ty, file, checks @ ..] = &line.split_whitespace().collect::<Vec<_>>()[..] else {
            return Err(format!("bad manifest line {line:?}").into());
        };
        let (encoding, distro) = match *enc {
            "cdr" => (Encoding::Cdr, Distro::Humble),
            "ros1" => (Encoding::Ros1, Distro::Noetic),
            other => return Err(format!("unknown encoding {other}").into()),
        };
        let schema = Schema::compile(registry(distro), ty)?;
        let bytes = std::fs::read(file)?;
        check(&mut decoder, &schema, &bytes, encoding, checks).map_err(|e| format!("{label} {enc}: {e}"))?;

        let decode_ns = bench(rounds, round_ns, || {
            let m = decoder.decode(&schema, black_box(&bytes), encoding);
            black_box(m.map(|m| m.len()).ok());
        });
        let tree_ns = bench(rounds, round_ns, || drop(black_box(decode(&schema, black_box(&bytes), encoding))));
        let mut dst = vec![0u8; bytes.len()];
        let memcpy_ns = bench(rounds, round_ns, || black_box(&mut dst).copy_from_slice(black_box(&bytes)));
        println!(
            "{label} {enc} bytes={} decode_ns={decode_ns:.1} tree_ns={tree_ns:.1} memcpy_ns={memcpy_ns:.1}",
            bytes.len()
        );
    }
    Ok(())
}

/// Median nanoseconds per call of `f` over `rounds` rounds of about `round_ns` each.
fn bench(rounds: usize, round_ns: u128, mut f: impl FnMut()) -> f64 {
    let mut time = |n: u64| {
        let t0 = Instant::now();
        for _ in 0..n {
            f();
        }
        t0.elapsed().as_nanos() as f64 / n as f64
    };
    let mut n = 1;
    while time(n) * (n as f64) < round_ns as f64 / 10.0 {
        n *= 10;
    }
    let n = ((round_ns as f64 / time(n)) as u64).max(1);
    let mut v: Vec<f64> = (0..rounds.max(1)).map(|_| time(n)).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Decodes once; checks the PATH=VALUE fields, that encoding the decoded message reproduces the
/// bytes, and that the view's tree equals the tree decoder's.
fn check(decoder: &mut Decoder, schema: &Schema, bytes: &[u8], encoding: Encoding, checks: &[&str]) -> Res<()> {
    let msg = decoder.decode(schema, bytes, encoding)?;
    for c in checks {
        let (path, want) = c.split_once('=').ok_or("check without '='")?;
        let got = msg.path(path)?.ok_or_else(|| format!("no element {path}"))?;
        let ok = match got {
            ValueRef::String(s) => s == want.as_bytes(),
            v => v.as_f64().is_some_and(|x| Some(x) == want.parse::<f64>().ok()),
        };
        if !ok {
            return Err(format!("{path} is {got:?}, expected {want}").into());
        }
    }
    let mut again = Vec::new();
    msg.encode(encoding, false, &mut again)?;
    if again != bytes {
        return Err(format!("re-encoding gives {} bytes that differ from the {} read", again.len(), bytes.len()).into());
    }
    if msg.to_value() != decode(schema, bytes, encoding)? {
        return Err("the view's tree differs from decode()'s".into());
    }
    Ok(())
}
