//! `rbag filter`: `rbag convert` that keeps only the messages an expression is true for.

use std::path::PathBuf;

use anyhow::Result;
use rbag_bag::expr::{ExprFilter, Expression, FaultKind, Unmatched};

use crate::{Outcome, UsageError};

/// Keep the messages for which a Python-like expression is true, as `rosbag filter` does,
/// writing any storage `rbag convert` writes (with all of its options).
///
/// EXPR sees `topic`, `m` (the message) and `t` (its log time, with `t.secs`, `t.nsecs`,
/// `t.to_sec()` and `t.to_nsec()`). It is a small, safe language, not Python: field access and
/// indexing (`m.pose.position.x`, `m.transforms[0].child_frame_id`, `m.data[-1]`, `len(m.data)`),
/// comparisons (chained too), and/or/not, arithmetic, `in`, string methods
/// (m.data.startswith('x')), re.match, re.search and re.fullmatch, abs, min, max, round, sum,
/// int, float, str, literals, lists (`topic in ['/a', '/b']`) and `a if c else b`. See
/// docs/filter.md.
///
/// Messages the expression fails on (a field their type lacks, a type error, an index past the
/// end) are left out and reported once per topic; --keep-unmatched writes them instead, and
/// --strict stops at the first one, as `rosbag filter` does.
///
/// Every `rbag convert` output flag applies (storage, compression, splitting, topics, types,
/// time window, --throttle); a --start cut keeps the latched messages from before it that the
/// expression accepts.
///
/// The inputs and output are given as `rbag filter IN… -o OUT EXPR`, or rosbag's way,
/// `rbag filter IN OUT EXPR`.
#[derive(clap::Args)]
#[command(override_usage = "rbag filter [OPTIONS] IN… -o OUT EXPR\n       rbag filter [OPTIONS] IN OUT EXPR")]
#[command(after_help = "Examples:
  rbag filter in.bag -o out.bag \"topic == '/odom' and m.twist.twist.linear.x > 0.5\"
  rbag filter in.bag out.bag \"m.header.frame_id.startswith('base')\"     (rosbag's argument order)
  rbag filter a.bag b.bag -o out.mcap \"t.to_sec() > 1700000000 and topic in ['/imu', '/tf']\"
  rbag filter in.bag -o out.bag --keep-unmatched \"len(m.transforms) > 1\"
  rbag filter in.bag -o out.bag \"re.search(r'error|fatal', m.msg)\" --topics /rosout")]
pub struct Args {
    /// The input bags (merged in time order), then OUT when -o is not given, then EXPR.
    #[arg(required = true, value_name = "IN… [OUT] EXPR")]
    args: Vec<PathBuf>,
    /// The bag to write.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Write the messages the expression fails on (a field their type lacks, a type error)
    /// instead of leaving them out.
    #[arg(long, conflicts_with = "strict")]
    keep_unmatched: bool,
    /// Stop at the first message the expression fails on (nothing is written).
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    out: super::convert::OutputArgs,
}

fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// Splits the positionals into inputs, output and expression.
fn positionals(args: &mut Args) -> Result<(Vec<PathBuf>, PathBuf, String)> {
    let mut pos = std::mem::take(&mut args.args);
    let expr = pos.pop().ok_or_else(|| usage("give the input bags, the output and the expression"))?;
    let expr = expr.into_os_string().into_string().map_err(|_| usage("the expression is not UTF-8"))?;
    let output = match args.output.take() {
        Some(o) => o,
        None if pos.len() >= 2 => pos.pop().unwrap_or_default(),
        None => {
            return Err(usage(
                "give the output bag: `rbag filter IN… -o OUT EXPR` or `rbag filter IN OUT EXPR` (the expression comes last)",
            ))
        }
    };
    if pos.is_empty() {
        return Err(usage("give at least one input bag"));
    }
    Ok((pos, output, expr))
}

pub fn run(mut args: Args) -> Result<Outcome> {
    let (input_paths, out, src) = positionals(&mut args)?;
    let expr = Expression::parse(&src).map_err(|e| usage(e.to_string()))?;
    let inputs = super::convert::open_inputs(&input_paths, &args.out.read)?;
    let output = args.out.output(&out, &inputs)?;
    let policy = if args.strict {
        Unmatched::Fail
    } else if args.keep_unmatched {
        Unmatched::Keep
    } else {
        Unmatched::Drop
    };
    let mut select = ExprFilter::new(expr, policy, output.options.types.clone());
    let outcome = super::convert::write_outputs("filter", &inputs, &[output], &mut select)?;
    let f = select.report();
    note!("kept {} of {} messages ({} left out)", f.kept, f.kept + f.dropped, f.dropped);
    for u in &f.unmatched {
        let done = if policy == Unmatched::Keep { "kept" } else { "left out" };
        let why = match u.kind {
            FaultKind::UnknownField => "the expression does not apply to its type",
            _ => "the expression fails on them",
        };
        note!(
            "unmatched: {}: {} message(s) {done} ({why}); the first, at {} ns: in `{}`: {}",
            u.topic,
            u.messages,
            u.log_time,
            u.at,
            u.reason
        );
    }
    Ok(outcome)
}
