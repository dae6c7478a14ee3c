//! The flat representation ([`Decoder`], [`MessageRef`]) against the bytes and the tree: for
//! random messages of every bundled type and for every message of the corpus bags, decoding
//! and encoding the view again gives the same bytes, the view's tree equals [`decode`]'s, and
//! JSON, YAML and CSV rendered from the view equal those rendered from the tree.

use std::path::{Path, PathBuf};

use rbag_msg::codec::allowed_trailing;
use rbag_msg::render::{self, Csv};
use rbag_msg::store::{self, Distro};
use rbag_msg::testgen::{random_message, Rng};
use rbag_msg::{
    decode, decode_counted, encode, Decoder, Dialect, Encoding, MessageRef, PathError, Registry, Schema, Value,
    ValueRef,
};

/// Renders both forms and asserts the text is the same.
fn same_text(schema: &Schema, msg: &MessageRef, value: &Value, csv: Option<&Csv>, what: &str) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    msg.json(&mut a).unwrap();
    render::json_message(schema, value, &mut b).unwrap();
    assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b), "{what}: JSON");
    let (mut a, mut b) = (Vec::new(), Vec::new());
    msg.yaml(Some(3), &mut a).unwrap();
    render::yaml_message(schema, value, Some(3), &mut b).unwrap();
    assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b), "{what}: YAML");
    if let Some(csv) = csv {
        assert_eq!(csv.cells_of(msg), csv.cells(schema, value), "{what}: CSV");
    }
}

#[test]
fn random_messages_of_every_bundled_type_decode_to_views_that_encode_to_the_same_bytes() {
    let mut decoder = Decoder::new();
    let mut checked = 0;
    for distro in [Distro::Noetic, Distro::Humble, Distro::Jazzy] {
        let reg = store::registry(distro);
        for name in reg.names() {
            let schema = Schema::compile(reg, name).unwrap_or_else(|e| panic!("{distro} {name}: {e}"));
            let csv = Csv::new(&schema).ok();
            let mut rng = Rng::new(0xf1a7 ^ name.len() as u64 ^ checked as u64);
            for round in 0..8 {
                let value = random_message(&schema, &mut rng, if round < 4 { 3 } else { 40 });
                for (encoding, big_endian) in [(Encoding::Ros1, false), (Encoding::Cdr, false), (Encoding::Cdr, true)] {
                    let what = format!("{distro} {name} {encoding:?} be={big_endian}");
                    let mut bytes = Vec::new();
                    encode(&schema, &value, encoding, big_endian, &mut bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
                    // A failed decode in between must leave the decoder usable.
                    if bytes.len() > 5 {
                        let _ = decoder.decode(&schema, &bytes[..bytes.len() / 2], encoding);
                    }
                    let (msg, left) =
                        decoder.decode_counted(&schema, &bytes, encoding).unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(left, 0, "{what}");
                    let mut again = Vec::new();
                    msg.encode(encoding, big_endian, &mut again).unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(again, bytes, "{what}: bytes");
                    assert_eq!(msg.to_value(), value, "{what}: tree");
                    assert_eq!(msg.len(), schema.root().fields.len(), "{what}");
                    same_text(&schema, &msg, &value, csv.as_ref(), &what);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 8_000, "{checked}");
    eprintln!("{checked} random messages round-tripped through the flat representation");
}

/// Every field the schema names is reachable by name and by path, and iterating the fields
/// gives the schema's names in order.
#[test]
fn fields_by_name_path_and_iteration_agree_with_the_schema() {
    let reg = store::registry(Distro::Humble);
    let schema = Schema::compile(reg, "tf2_msgs/msg/TFMessage").unwrap();
    let transform = |frame: &str, child: &str, x: f64| {
        let v3 = Value::Message(vec![Value::F64(x), Value::F64(0.0), Value::F64(0.1)]);
        let q = Value::Message(vec![Value::F64(0.0), Value::F64(0.0), Value::F64(0.0), Value::F64(1.0)]);
        let stamp = Value::Message(vec![Value::I32(1_700_000_000), Value::U32(5)]);
        Value::Message(vec![
            Value::Message(vec![stamp, Value::String(frame.as_bytes().to_vec().into())]),
            Value::String(child.as_bytes().to_vec().into()),
            Value::Message(vec![v3, q]),
        ])
    };
    let value = Value::Message(vec![Value::Array(vec![
        transform("odom", "base_link", 1.5),
        transform("base_link", "laser", 0.25),
    ])]);
    let mut bytes = Vec::new();
    encode(&schema, &value, Encoding::Cdr, false, &mut bytes).unwrap();
    let mut decoder = Decoder::new();
    let msg = decoder.decode(&schema, &bytes, Encoding::Cdr).unwrap();
    assert_eq!(msg.type_name(), "tf2_msgs/msg/TFMessage");
    let transforms = msg.field("transforms").and_then(|v| v.as_array()).unwrap();
    assert_eq!(transforms.len(), 2);
    let second = transforms.get(1).and_then(|v| v.as_message()).unwrap();
    assert_eq!(second.type_name(), "geometry_msgs/msg/TransformStamped");
    assert_eq!(second.fields().map(|(n, _)| n).collect::<Vec<_>>(), ["header", "child_frame_id", "transform"]);
    assert_eq!(second.field("child_frame_id").and_then(|v| v.as_str()), Some("laser"));
    assert_eq!(msg.path("transforms[1].child_frame_id").unwrap().and_then(|v| v.as_str()), Some("laser"));
    assert_eq!(msg.path(".transforms[0].transform.translation.x").unwrap().and_then(|v| v.as_f64()), Some(1.5));
    assert!(matches!(msg.path("transforms[0].header.stamp.nanosec").unwrap(), Some(ValueRef::U32(5))));
    assert!(msg.path("transforms[2].child_frame_id").unwrap().is_none(), "past the end is None");
    assert!(msg.field("nope").is_none() && msg.get(1).is_none());

    let e = msg.path("transforms[0].transform.scale").unwrap_err();
    assert!(
        matches!(&e, PathError::NoField { ty, name, .. } if ty == "geometry_msgs/msg/Transform" && name == "scale")
    );
    assert!(e.to_string().contains("(it has: translation, rotation)"), "{e}");
    let e = msg.path("transforms[0].child_frame_id.x").unwrap_err();
    assert!(matches!(e, PathError::NotAMessage { .. }), "{e}");
    let e = msg.path("transforms[0").unwrap_err();
    assert!(matches!(e, PathError::Syntax { .. }), "{e}");
    assert_eq!(render::check_path(&schema, "transforms[0].header.frame_id"), Ok(()));
    assert!(matches!(render::check_path(&schema, "transform"), Err(PathError::NoField { .. })));

    // Selected values render as the tree's selection does.
    for path in ["transforms[1]", "transforms", "transforms[0].transform.rotation.w", "transforms[1].header.frame_id"] {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        msg.path(path).unwrap().unwrap().json(&mut a).unwrap();
        render::select(&schema, &value, path).unwrap().unwrap().json(&schema, &mut b).unwrap();
        assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b), "{path}: JSON");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        msg.path(path).unwrap().unwrap().yaml(None, &mut a).unwrap();
        render::select(&schema, &value, path).unwrap().unwrap().yaml(&schema, None, &mut b).unwrap();
        assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b), "{path}: YAML");
    }
}

/// Primitive arrays are borrowed from the input when it is little-endian, and converted (to
/// little-endian) otherwise; either way they read the same.
#[test]
fn primitive_arrays_are_borrowed_little_endian_slices() {
    let reg = store::registry(Distro::Humble);
    let schema = Schema::compile(reg, "std_msgs/msg/Float64MultiArray").unwrap();
    let layout = Value::Message(vec![Value::Array(Vec::new()), Value::U32(0)]);
    let data: Vec<u8> = [1.5f64, -2.0, 1e300].iter().flat_map(|x| x.to_le_bytes()).collect();
    let value = Value::Message(vec![
        layout,
        Value::Prims(rbag_msg::value::PrimArray { prim: rbag_msg::schema::Prim::F64, le: data.clone().into() }),
    ]);
    let mut decoder = Decoder::new();
    for big_endian in [false, true] {
        let mut bytes = Vec::new();
        encode(&schema, &value, Encoding::Cdr, big_endian, &mut bytes).unwrap();
        let msg = decoder.decode(&schema, &bytes, Encoding::Cdr).unwrap();
        let prims = msg.field("data").and_then(|v| v.as_prims()).unwrap();
        assert_eq!(prims.le, &data[..], "be={big_endian}");
        assert_eq!(prims.to_f64s().collect::<Vec<_>>(), [1.5, -2.0, 1e300]);
        let inside = bytes.as_ptr_range().contains(&prims.le.as_ptr());
        assert_eq!(inside, !big_endian, "borrowed from the input exactly when it was little-endian");
    }
}

/// The corpus bags' messages, each decoded by the definition the bag carries (or the bundled
/// store's): the view encodes back to the bytes read (CDR: up to the alignment padding rmw
/// leaves uninitialised), and agrees with the tree.
#[test]
fn every_corpus_message_round_trips_through_the_flat_representation() {
    let test = "every_corpus_message_round_trips_through_the_flat_representation";
    let Some(root) = rbag_testkit::corpus(test, "") else { return };
    let mut decoder = Decoder::new();
    let (mut checked, mut padding_differs, mut no_schema) = (0, 0, Vec::new());
    for bag in bags(&root) {
        let Ok(reader) = rbag_storage::open(&bag) else { continue };
        let mut schemas = std::collections::HashMap::new();
        for m in reader.messages(&rbag_storage::Filter::default()).unwrap() {
            let m = m.unwrap();
            let c = reader.connection(m.connection).unwrap();
            let encoding = if c.encoding == "ros1" { Encoding::Ros1 } else { Encoding::Cdr };
            let big_endian = encoding == Encoding::Cdr && m.data.get(1) == Some(&0);
            let what = format!("{} {} at {}", bag.display(), c.topic, m.log_time);
            // The bag's definition first, the store's if the message does not fit it (as rbag
            // echo does: some recorders wrote an older definition than the bytes).
            let candidates = schemas.entry(m.connection).or_insert_with(|| schemas_for(c));
            let fits = |s: &Schema| {
                decode_counted(s, &m.data, encoding).is_ok_and(|(_, left)| left <= allowed_trailing(encoding))
            };
            let Some(schema) = candidates.iter().find(|s| fits(s)) else {
                no_schema.push(format!("{} {} ({})", bag.display(), c.topic, c.message_type));
                continue;
            };
            let value = decode(schema, &m.data, encoding).unwrap_or_else(|e| panic!("{what}: {e}"));
            let msg = decoder.decode(schema, &m.data, encoding).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(msg.to_value(), value, "{what}");
            let mut out = Vec::new();
            msg.encode(encoding, big_endian, &mut out).unwrap();
            if out[..] != m.data[..] {
                assert_eq!(encoding, Encoding::Cdr, "{what}: ROS 1 bytes differ");
                assert_only_padding_differs(&m.data, &out, &what);
                padding_differs += 1;
            }
            same_text(schema, &msg, &value, None, &what);
            checked += 1;
        }
    }
    no_schema.dedup();
    assert!(checked > 10_000, "{checked}; without a schema: {no_schema:#?}");
    eprintln!("{checked} corpus messages round-trip ({padding_differs} differ only in CDR padding); topics without a schema here: {no_schema:#?}");
}

fn bags(root: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for sub in ["ros1", "ros2/mcap", "ros2/sqlite3"] {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(root.join(sub)).into_iter().flatten().flatten().map(|e| e.path()).collect();
        entries.sort();
        v.extend(entries);
    }
    v
}

/// The connection's type compiled from its own definition, then from the bundled store (with
/// the ROS 2 `test_msgs` interface files where the system has them).
fn schemas_for(c: &rbag_storage::Connection) -> Vec<Schema> {
    let ros1 = c.encoding == "ros1";
    let dialect = if ros1 { Dialect::Ros1 } else { Dialect::Ros2 };
    let fallback = || {
        let mut reg = Registry::new(dialect);
        if ros1 {
            reg.fill_from(store::registry(Distro::Noetic));
        } else {
            let test_msgs = Path::new("/usr/share/test_interface_files");
            if test_msgs.is_dir() {
                let _ = rbag_msg::msg_path::load_as(&mut reg, test_msgs, "test_msgs");
            }
            reg.fill_from(store::registry(Distro::Jazzy));
        }
        reg
    };
    let mut out = Vec::new();
    if !c.definition.trim().is_empty() {
        let mut reg = Registry::new(dialect);
        let added = if ros1 {
            reg.add_concatenated(&c.message_type, &c.definition)
        } else {
            reg.add_ros2_concatenated(&c.message_type, &c.definition)
        };
        if added.is_ok() {
            reg.fill_from(&fallback());
            out.extend(Schema::compile(&reg, &c.message_type));
        }
    }
    out.extend(Schema::compile(&fallback(), &c.message_type));
    out
}

/// rmw leaves CDR alignment padding uninitialised and rbag writes zeros there: every differing
/// byte must be a zero in rbag's output, and the input with those bytes zeroed must be rbag's
/// output.
fn assert_only_padding_differs(input: &[u8], out: &[u8], what: &str) {
    assert!(
        input.len() >= out.len() && input.len() - out.len() <= 3,
        "{what}: {} bytes in, {} out",
        input.len(),
        out.len()
    );
    let mut zeroed = input[..out.len()].to_vec();
    for (i, (a, b)) in input.iter().zip(out).enumerate() {
        if a != b {
            assert_eq!(*b, 0, "{what}: byte {i} differs and is not padding");
            zeroed[i] = 0;
        }
    }
    assert_eq!(zeroed, out, "{what}");
}
