//! The language on hand-made ROS 1 messages: Python's meaning, errors that say what and where,
//! and the limits.

use std::time::{Duration, Instant};

use rbag_msg::{encode, Decoder, Dialect, Encoding, Registry, Schema, Value};

use super::*;

/// A ROS 1 message with a header, nested fields, arrays of messages and of primitives.
fn sample() -> (Schema, Vec<u8>) {
    let mut reg = Registry::new(Dialect::Ros1);
    reg.add("std_msgs/Header", "uint32 seq\ntime stamp\nstring frame_id\n").unwrap();
    reg.add("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n").unwrap();
    reg.add("test/Item", "string name\nint32 value\n").unwrap();
    reg.add(
        "test/Sample",
        "Header header\ngeometry_msgs/Point position\ntest/Item[] items\nuint8[] data\nfloat32[3] vec\nstring label\nint64 big\nbool flag\nduration span\n",
    )
    .unwrap();
    let schema = Schema::compile(&reg, "test/Sample").unwrap();
    let s = |t: &str| Value::String(t.as_bytes().to_vec().into());
    let item = |n: &str, v: i32| Value::Message(vec![s(n), Value::I32(v)]);
    let f32s: Vec<u8> = [1.5f32, -2.0, 0.25].iter().flat_map(|f| f.to_le_bytes()).collect();
    let value = Value::Message(vec![
        Value::Message(vec![
            Value::U32(7),
            Value::Message(vec![Value::U32(100), Value::U32(500_000_000)]),
            s("base_link"),
        ]),
        Value::Message(vec![Value::F64(1.0), Value::F64(-2.5), Value::F64(0.0)]),
        Value::Array(vec![item("alpha", 3), item("beta", -4)]),
        Value::Prims(rbag_msg::value::PrimArray { prim: rbag_msg::schema::Prim::U8, le: vec![10, 20, 30, 40].into() }),
        Value::Prims(rbag_msg::value::PrimArray { prim: rbag_msg::schema::Prim::F32, le: f32s.into() }),
        s("hello world"),
        Value::I64(-9_000_000_000),
        Value::Bool(true),
        Value::Message(vec![Value::I32(-2), Value::I32(250_000_000)]),
    ]);
    let mut bytes = Vec::new();
    encode(&schema, &value, Encoding::Ros1, false, &mut bytes).unwrap();
    (schema, bytes)
}

/// Evaluates `src` on the sample at topic `/s`, time 1700000000.25 s.
fn eval(src: &str) -> std::result::Result<bool, ExprError> {
    let (schema, bytes) = sample();
    let mut d = Decoder::new();
    let m = d.decode(&schema, &bytes, Encoding::Ros1).unwrap();
    Expression::parse(src)?.matches("/s", 1_700_000_000_250_000_000, Some(m))
}

fn yes(src: &str) {
    assert!(eval(src).unwrap_or_else(|e| panic!("{src}: {e}")), "{src} should be true");
}

fn no(src: &str) {
    assert!(!eval(src).unwrap_or_else(|e| panic!("{src}: {e}")), "{src} should be false");
}

fn fails(src: &str) -> ExprError {
    match eval(src) {
        Ok(v) => panic!("{src} should fail, gave {v}"),
        Err(e) => e,
    }
}

#[test]
fn fields_and_nesting() {
    yes("m.position.x == 1.0");
    yes("m.position.y < -2");
    yes("m.header.frame_id == 'base_link'");
    yes("m.header.seq == 7 and m.flag");
    yes("m.big == -9000000000");
    yes("m._type == 'test/Sample'");
    yes("m.items[1].name == 'beta' and m.items[-1].value == -4");
    yes("m.items[0].value * 2 == 6");
    yes("m.vec[0] == 1.5 and m.vec[-1] == 0.25");
    yes("len(m.data) == 4 and m.data[2] == 30 and 40 in m.data and 50 not in m.data");
    yes("len(m.items) == 2");
    yes("m.data[1:3] == [20, 30]");
}

#[test]
fn time_as_genpy_has_it() {
    yes("t.secs == 1700000000 and t.nsecs == 250000000");
    yes("t.to_sec() == 1700000000.25");
    yes("t.to_nsec() == 1700000000250000000");
    yes("m.header.stamp.secs == 100 and m.header.stamp.to_sec() == 100.5");
    yes("(t - m.header.stamp).to_sec() > 1e9");
    yes("m.span.to_sec() == -1.75 and m.span.secs == -2");
    yes("t > m.header.stamp");
    yes("str(m.header.stamp) == '100500000000'");
    let e = fails("t > 5");
    assert!(e.to_string().contains("to_sec()"), "{e}");
}

#[test]
fn strings_and_regex() {
    yes("m.label.startswith('hello') and m.label.endswith(('x', 'world'))");
    yes("'lo wo' in m.label and 'xyz' not in m.label");
    yes("m.label.upper() == 'HELLO WORLD'");
    yes("m.label.split()[1] == 'world'");
    yes("m.label[0] == 'h' and m.label[-1] == 'd' and m.label[:5] == 'hello'");
    yes("re.match(r'hel+o', m.label)");
    no("re.match('world', m.label)");
    yes("re.search('wor.d$', m.label) is not None");
    yes("__import__('re').search(r'\\bworld', m.label)");
    yes("re.fullmatch('[a-z ]+', m.label)");
    yes("topic in ['/a', '/s'] and topic.startswith('/')");
    yes("m.label + '!' == 'hello world!'");
    yes("'ab' * 3 == 'ababab'");
    yes("str(3) + str(1.5) + str(True) == '31.5True'");
    yes("int('42') == 42 and float('2.5') == 2.5");
}

#[test]
fn python_arithmetic_and_logic() {
    yes("7 // 2 == 3 and -7 // 2 == -4 and -7 % 3 == 2 and 7 / 2 == 3.5");
    yes("2 ** 10 == 1024 and -2 ** 2 == -4 and 2 ** -1 == 0.5");
    yes("abs(m.position.y) == 2.5 and min(1, 2, 0.5) == 0.5 and max(m.vec) == 1.5");
    yes("1 < m.position.x + 1 <= 2 < 3");
    no("1 < 2 > 3");
    yes("not m.position.z");
    yes("(m.position.z or 'fallback') == 'fallback'");
    yes("True + 1 == 2");
    yes("round(2.5) == 2 and round(3.5) == 4 and round(1.2345, 2) == 1.23");
    yes("sum(m.data) == 100 and any(m.data) and all([1, 2])");
    yes("'yes' if m.flag else ''");
    yes("0x10 | 1 == 17 and (6 & 3) == 2 and 1 << 4 == 16");
    yes("m.header.frame_id != None and None is None");
}

#[test]
fn short_circuit_keeps_fields_of_other_types_away() {
    // `m` is never reached when the topic test is false.
    let e = Expression::parse("topic == '/imu' and m.nothing.here > 0").unwrap();
    assert!(!e.matches("/s", 0, None).unwrap());
    assert!(e.uses_message());
    assert!(!Expression::parse("topic == '/a' or t.secs > 3").unwrap().uses_message());
}

#[test]
fn errors_name_the_field_and_the_place() {
    let e = fails("m.position.w > 0");
    let text = e.to_string();
    assert!(text.contains("topic /s"), "{text}");
    assert!(text.contains("geometry_msgs/Point has no field w"), "{text}");
    assert!(text.contains("`m.position.w`"), "{text}");
    assert!(text.contains("x, y, z"), "{text}");
    assert!(matches!(e, ExprError::Eval { kind: FaultKind::UnknownField, field: Some(ref f), .. } if f == "w"));

    let e = fails("m.label < 3");
    assert!(matches!(e, ExprError::Eval { kind: FaultKind::Type, .. }), "{e}");
    assert!(e.to_string().contains("str and int"), "{e}");
    let e = fails("m.items[5].name == 'x'");
    assert!(matches!(e, ExprError::Eval { kind: FaultKind::Index, ref at, .. } if at == "m.items[5]"), "{e}");
    let e = fails("1 / (m.position.z)");
    assert!(e.to_string().contains("division by zero"), "{e}");
}

#[test]
fn parse_errors_point_at_the_column() {
    let cases = [
        ("m.x = 1", 5, "=="),
        ("m.x >", 6, "unexpected end"),
        ("foo.bar", 1, "unknown name foo"),
        ("(m.x", 5, "expected `)`"),
        ("m.x ! 1", 5, "`not`"),
        ("os.system('x')", 1, "unknown name os"),
        ("m.data[::2]", 9, "step"),
        ("lambda: 1", 1, "lambda"),
        ("", 1, "empty"),
        ("re.match('(', m.x)", 10, "bad regular expression"),
        ("__import__('os').system('ls')", 1, "only the re module"),
    ];
    for (src, column, what) in cases {
        match Expression::parse(src) {
            Err(ExprError::Parse { column: c, reason, .. }) => {
                assert_eq!(c, column, "{src}: {reason}");
                assert!(reason.contains(what), "{src}: {reason}");
            }
            other => panic!("{src}: {other:?}"),
        }
    }
    let text = Expression::parse("m.x >= 1 and and").unwrap_err().to_string();
    assert!(text.contains("column 14") && text.contains("\n  m.x >= 1 and and\n               ^"), "{text}");
}

/// Each malicious expression fails fast, with a message that says what is wrong.
#[test]
fn malicious_expressions_are_refused_quickly() {
    let deep = format!("{}1{}", "(".repeat(3000), ")".repeat(3000));
    let nots = format!("{}True", "not ".repeat(2000));
    let minus = format!("{}1", "-".repeat(9000));
    let attrs = format!("m{}", ".a".repeat(3000));
    let sums = format!("1{}", "+1".repeat(3000));
    let lists = format!("{}1{}", "[".repeat(3000), "]".repeat(3000));
    let pows = format!("2{}", "**2".repeat(3000));
    let long = format!("m.label == '{}'", "a".repeat(20_000));
    let literal = format!("m.label == '{}'", "a".repeat(5000));
    let number = format!("m.x == {}", "9".repeat(200));
    let cases: Vec<(&str, &str)> = vec![
        (&deep, "nests deeper than 64"),
        (&nots, "nests deeper than 64"),
        (&minus, "nests deeper than 64"),
        (&attrs, "nests deeper than 64"),
        (&sums, "nests deeper than 64"),
        (&lists, "nests deeper than 64"),
        (&pows, "nests deeper than 64"),
        (&long, "longer than 10000 bytes"),
        (&literal, "string literal longer than 4096"),
        (&number, "number literal longer than 64"),
        ("re.search('a{1000}{1000}', m.label)", "compiles to more than"),
        ("re.search('(a{100}){100}{100}', m.label)", "compiles to more than"),
        ("re.search(r'(\\w+)\\1', m.label)", "bad regular expression"),
    ];
    for (src, what) in cases {
        let start = Instant::now();
        let e = Expression::parse(src).expect_err(&src[..src.len().min(60)]).to_string();
        assert!(e.contains(what), "{}: {e}", &src[..src.len().min(60)]);
        assert!(start.elapsed() < Duration::from_secs(2), "{what}: {:?}", start.elapsed());
    }
}

#[test]
fn evaluation_is_bounded() {
    let start = Instant::now();
    for (src, what) in [
        ("'a' * 10 ** 9", "larger than 1048576 bytes"),
        ("len('ab' * 400000 + 'cd' * 400000) > 0", "larger than"),
        ("2 ** 200 > 0", "beyond ±2**127"),
        ("10 ** 10 ** 10 > 0", "beyond"),
        ("1 << 200 > 0", "beyond"),
        ("len(('x' * 1000000).replace('x', 'yy')) > 0", "larger than"),
        ("[('x' * 1000000) for_ in 1]", ""),
    ] {
        if what.is_empty() {
            assert!(Expression::parse(src).is_err());
            continue;
        }
        let e = fails(src).to_string();
        assert!(e.contains(what), "{src}: {e}");
    }
    // Many large values together run out of fuel rather than memory.
    let many = format!("[{}]", vec!["'y' * 1000000"; 100].join(", "));
    let e = fails(&many).to_string();
    assert!(e.contains("units of work"), "{e}");
    // A catastrophic-backtracking pattern for backtracking engines is linear here.
    yes(&format!("re.match('(a+)+$', '{}') is None or True", "a".repeat(4000) + "!"));
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
}

#[test]
fn substrings_of_bytes_that_are_not_utf8() {
    let e = Expression::parse("'\\xff\\xfe' in m.label").unwrap();
    let mut reg = Registry::new(Dialect::Ros1);
    reg.add("test/S", "string label\n").unwrap();
    let schema = Schema::compile(&reg, "test/S").unwrap();
    let mut d = Decoder::new();
    for (bytes, want) in [(&b"ab\xc3\xbf\xc3\xbezz"[..], true), (&b"ab\xff\xfe"[..], false), (&b"\xc3\xbf"[..], false)]
    {
        let mut data = Vec::new();
        encode(&schema, &Value::Message(vec![Value::String(bytes.to_vec().into())]), Encoding::Ros1, false, &mut data)
            .unwrap();
        let m = d.decode(&schema, &data, Encoding::Ros1).unwrap();
        assert_eq!(e.matches("/s", 0, Some(m)).unwrap(), want, "{bytes:?}");
    }
    // A needle of raw bytes (from a message) in a haystack that is not UTF-8.
    let e = Expression::parse("m.label[1:2] in m.label").unwrap();
    let mut data = Vec::new();
    encode(
        &schema,
        &Value::Message(vec![Value::String(b"\xff\xfe\xfd".to_vec().into())]),
        Encoding::Ros1,
        false,
        &mut data,
    )
    .unwrap();
    let m = d.decode(&schema, &data, Encoding::Ros1).unwrap();
    assert!(e.matches("/s", 0, Some(m)).unwrap());
}

#[test]
fn unparsed_python_is_refused() {
    for src in ["[x for x in m.data]", "m.x := 1", "f'{m.x}'", "m.data[0](1)", "{1: 2}", "print(1)", "a.b"] {
        assert!(Expression::parse(src).is_err(), "{src}");
    }
}
