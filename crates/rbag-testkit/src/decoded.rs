//! Comparing decoded messages as JSON with an independent decoder's: NDJSON lines of
//! `{"topic", "log_time", "message"}`, compared per topic in order.

use std::collections::BTreeMap;

use serde_json::Value;

/// NDJSON lines grouped by topic, each `(log_time, message)` in the order given.
pub fn by_topic(ndjson: &[u8]) -> BTreeMap<String, Vec<(u64, Value)>> {
    let mut out: BTreeMap<String, Vec<(u64, Value)>> = BTreeMap::new();
    for line in ndjson.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("bad NDJSON line ({e}): {}", String::from_utf8_lossy(line)));
        let topic = v["topic"].as_str().expect("topic").to_string();
        let t = v["log_time"].as_u64().expect("log_time");
        out.entry(topic).or_default().push((t, v["message"].clone()));
    }
    out
}

/// Whether two decoded values are equal; floats may differ by `f32` rounding (one side may
/// print a `float32` widened to `f64`). Returns the path of the first difference.
pub fn diff(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let kx: Vec<&String> = x.keys().collect();
            let ky: Vec<&String> = y.keys().collect();
            if kx != ky {
                return Some(format!("{path}: fields {kx:?} vs {ky:?}"));
            }
            x.iter().find_map(|(k, v)| diff(v, &y[k], &format!("{path}.{k}")))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} vs {} elements", x.len(), y.len()));
            }
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| diff(p, q, &format!("{path}[{i}]")))
        }
        (Value::Number(x), Value::Number(y)) => {
            if x == y || x.as_f64() == y.as_f64() {
                return None;
            }
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) if (p as f32) == (q as f32) && (x.is_f64() || y.is_f64()) => None,
                _ => Some(format!("{path}: {x} vs {y}")),
            }
        }
        _ if a == b => None,
        _ => Some(format!("{path}: {a} vs {b}")),
    }
}

/// Asserts both decoders saw the same topics with the same messages in the same order; returns
/// how many messages were compared.
pub fn assert_same(
    what: &str,
    ours: &BTreeMap<String, Vec<(u64, Value)>>,
    theirs: &BTreeMap<String, Vec<(u64, Value)>>,
) -> usize {
    let ot: Vec<&String> = ours.keys().collect();
    let tt: Vec<&String> = theirs.keys().collect();
    assert_eq!(ot, tt, "{what}: topics differ");
    let mut n = 0;
    for (topic, a) in ours {
        let b = &theirs[topic];
        assert_eq!(a.len(), b.len(), "{what} {topic}: message counts differ");
        for (i, ((ta, ma), (tb, mb))) in a.iter().zip(b).enumerate() {
            assert_eq!(ta, tb, "{what} {topic} message {i}: log times differ");
            if let Some(d) = diff(ma, mb, "") {
                panic!("{what} {topic} message {i}: {d}\n ours:   {ma}\n theirs: {mb}");
            }
            n += 1;
        }
    }
    n
}
