//! What readers share about reading past damage.

/// What a lenient reader says about the messages it reads on stand-in connections.
pub(crate) fn undeclared_warnings(kind: &str, undeclared: &std::collections::BTreeMap<u32, u64>) -> Vec<String> {
    undeclared
        .iter()
        .map(|(id, n)| {
            let s = if *n == 1 { "" } else { "s" };
            format!(
                "{n} message{s} on {kind} {id}, which the bag never declares: read as topic {}{id}, with no type",
                crate::UNDECLARED_TOPIC_PREFIX
            )
        })
        .collect()
}
