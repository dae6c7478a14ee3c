//! XML-RPC bodies as peers send them: parse, and what parses must write and parse back to the
//! same message (NaN compared as NaN: its payload is not kept). A call is then answered by the
//! embedded master (each entry of a `system.multicall` too), twice, on one fresh state: it must
//! reply, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rbag_ros1::master::MasterState;
use rbag_ros1::xmlrpc::{parse, write_message, Message, Value};

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Struct(x), Value::Struct(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((ka, a), (kb, b))| ka == kb && same(a, b))
        }
        _ => a == b,
    }
}

fn same_message(a: &Message, b: &Message) -> bool {
    match (a, b) {
        (Message::Call { method: m, params: p }, Message::Call { method: n, params: q }) => {
            m == n && p.len() == q.len() && p.iter().zip(q).all(|(a, b)| same(a, b))
        }
        (Message::Response(x), Message::Response(y)) | (Message::Fault(x), Message::Fault(y)) => same(x, y),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(msg) = parse(data) else { return };
    let text = write_message(&msg);
    let back = parse(text.as_bytes()).unwrap_or_else(|e| panic!("rbag cannot parse what it wrote: {e}\n{text}"));
    assert!(same_message(&msg, &back), "round trip changed the message:\n{msg:?}\n{back:?}");
    if let Message::Call { method, params } = msg {
        let mut master = MasterState::new("http://127.0.0.1:11311/");
        let calls = match (method.as_str(), params.first()) {
            ("system.multicall", Some(Value::Array(entries))) => entries
                .iter()
                .filter_map(|e| {
                    let m = e.member("methodName")?.as_str()?.to_string();
                    Some((m, e.member("params")?.as_array()?.to_vec()))
                })
                .collect(),
            _ => vec![(method, params)],
        };
        for _ in 0..2 {
            for (m, p) in &calls {
                let _ = master.call(m, p.clone());
            }
        }
    }
});
