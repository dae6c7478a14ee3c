//! What a topic offers to plot: the numeric field paths of its messages, found by decoding its
//! first message (so variable-length arrays offer the elements that message has).

use rbag_bag::decode::{first_message, Decoders, MessageRef, TypeSources, ValueRef};
use rbag_bag::Bag;

use crate::{Error, Result};

/// Elements of a numeric array offered one by one, at most (a covariance has 9 or 36; an image
/// has millions, and none of them is offered).
pub const MAX_ELEMENTS: usize = 36;
/// Field paths offered per topic, at most.
pub const MAX_FIELDS: usize = 500;

/// The numeric field paths of `topic` (`/imu.angular_velocity.x`, `/array.data[2]`), in
/// definition order, from the topic's first message in `bag`. A topic with no messages, or
/// whose type cannot be decoded, offers none.
pub fn numeric_fields(bag: &Bag, topic: &str, types: &TypeSources) -> Result<Vec<String>> {
    let Some(c) = bag.connections().iter().find(|c| c.topic == topic) else {
        return Err(Error::Path { field: topic.into(), reason: "no such topic in the bag".into() });
    };
    let Some(data) = first_message(bag.reader(), c).map_err(rbag_bag::Error::from)? else {
        return Ok(Vec::new());
    };
    let mut decoders = Decoders::new(types.clone());
    let Ok(message) = decoders.view(c, 0, &data) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    walk(message, topic, &mut out);
    Ok(out)
}

fn walk(m: MessageRef, prefix: &str, out: &mut Vec<String>) {
    for (name, v) in m.fields() {
        if out.len() >= MAX_FIELDS {
            return;
        }
        let path = format!("{prefix}.{name}");
        value(v, path, out);
    }
}

fn value(v: ValueRef, path: String, out: &mut Vec<String>) {
    match v {
        ValueRef::Message(m) => walk(m, &path, out),
        ValueRef::Prims(p) if p.len() <= MAX_ELEMENTS => {
            for (i, e) in p.iter().enumerate() {
                if e.as_f64().is_some() || matches!(e, ValueRef::Bool(_)) {
                    out.push(format!("{path}[{i}]"));
                }
            }
        }
        ValueRef::Array(a) => {
            // Arrays of messages: the fields of the first few elements.
            for (i, e) in a.iter().take(4).enumerate() {
                value(e, format!("{path}[{i}]"), out);
            }
        }
        ValueRef::String(_) | ValueRef::Prims(_) => {}
        scalar => {
            if scalar.as_f64().is_some() || matches!(scalar, ValueRef::Bool(_)) {
                out.push(path);
            }
        }
    }
}
