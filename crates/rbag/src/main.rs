//! `rbag`: record, play, inspect, convert and repair robot bags, with no ROS installed.
//!
//! `main` only parses arguments and maps the outcome to an exit code; each verb lives in its own
//! file under `commands/`.

#[macro_use]
mod output;
mod commands;
mod outcome;

pub use outcome::{Outcome, UsageError};

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Inspect, convert and repair robot bags, with no ROS installed.
///
/// Reads and writes ROS 1 bags (v2.0) and rosbag2 bags (SQLite3 and MCAP directories, or single
/// .db3/.mcap files), with their compressions and splits. Decodes messages with no ROS installed
/// (`echo`), converts between ROS 1 and ROS 2 encodings and migrates old definitions (`convert`).
/// Records live ROS 1 graphs and plays bags back into them (`record`/`play --ros1`, with an
/// embedded master when none runs; `master` stands in for roscore), and live ROS 2 graphs over
/// DDS with no ROS 2 installed (`record`/`play --ros2`, and `rbag burst BAG -n N`).
#[derive(Parser)]
#[command(name = "rbag", version, propagate_version = true, max_term_width = 100)]
#[command(after_help = "Exit codes: 0 ok, 1 error (bad input, I/O), 2 usage error, 3 finished but data was dropped.")]
pub struct Cli {
    /// Decompressed bag data held in memory at once, over every bag read (units allowed:
    /// 256MiB, 2GB). Chunks beyond it are streamed; only a single message larger than it is an
    /// error. Default: RBAG_MEMORY_BUDGET, else 512MiB.
    #[arg(long, global = true, value_name = "SIZE", value_parser = rbag_bag::units::parse_size)]
    memory_budget: Option<u64>,
    /// Print, at the end, how many requests remote reads made and how many bytes they
    /// fetched (on stderr).
    #[arg(long, global = true)]
    stats: bool,
    /// Read a remote file that has no index to read it by (an MCAP file without a summary) by
    /// downloading it whole, instead of refusing it.
    #[arg(long, global = true)]
    allow_remote_scan: bool,
    /// Threads that compress chunks being written and decompress chunks ahead of the one being
    /// read (default: RBAG_THREADS, else one per core); output is byte-identical for any count.
    /// For `catalog`: bags read at once (default 8).
    #[arg(long, global = true, value_name = "N",
          value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u16).range(1..), usize::from))]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

/// Parsed once per run, so the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    Info(commands::info::Args),
    Reindex(commands::reindex::Args),
    Convert(commands::convert::Args),
    Filter(commands::filter::Args),
    Doctor(commands::doctor::Args),
    Du(commands::du::Args),
    Compress(commands::compress::Args),
    Decompress(commands::compress::DecompressArgs),
    Attachment(commands::attachment::Args),
    Metadata(commands::metadata::Args),
    Echo(commands::echo::Args),
    Export(commands::export::Args),
    Plot(commands::plot::Args),
    ExportImages(commands::export_images::Args),
    Catalog(commands::catalog::Args),
    List(commands::list::Args),
    Record(commands::record::Args),
    Play(commands::play::Args),
    Serve(commands::serve::Args),
    Master(commands::master::Args),
    Completions(commands::completions::Args),
    Man(commands::man::Args),
}

/// The live verbs whose flags depend on the middleware: with `--ros2` (or `ROS_VERSION=2`
/// and no `--ros1`) `record` and `play` take `ros2 bag`'s flags, which clash with rosbag's
/// (`-b`, `-d`, `-p`, `-l`), so they are parsed by their own parser.
fn ros2_verb(args: &[std::ffi::OsString]) -> Option<&'static str> {
    let verb = match args.get(1)?.to_str()? {
        "record" => "record",
        "play" => "play",
        // `ros2 bag burst` has no ROS 1 counterpart.
        "burst" => return Some("burst"),
        _ => return None,
    };
    let has = |flag: &str| args[2..].iter().take_while(|a| *a != "--").any(|a| a == flag);
    let env = std::env::var("ROS_VERSION").ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    if has("--ros2") {
        return Some(verb);
    }
    (env.as_deref() == Some("2") && !has("--ros1")).then_some(verb)
}

/// `rbag play` with neither `--ros1`/`--ros2` nor `ROS_VERSION`: the bags say which graph
/// they belong to, and the flag is added for them.
fn choose_play_middleware(args: &mut Vec<std::ffi::OsString>) {
    if args.get(1).and_then(|a| a.to_str()) != Some("play") {
        return;
    }
    let given = args[2..].iter().take_while(|a| *a != "--").any(|a| a == "--ros1" || a == "--ros2");
    if given || std::env::var("ROS_VERSION").is_ok_and(|v| !v.trim().is_empty()) {
        return;
    }
    if let Some(kind) = play_middleware(&args[2..]) {
        args.insert(2, format!("--{kind}").into());
    }
}

/// The middleware of the bags among `args` (existing paths rbag detects as bags): `ros1` for
/// ROS 1 bags, `ros2` for rosbag2 ones, said on stderr; mixed inputs are a usage error naming
/// both flags (exit 2 here, before any parsing).
fn play_middleware(args: &[std::ffi::OsString]) -> Option<&'static str> {
    let kinds: std::collections::BTreeSet<&'static str> = args
        .iter()
        .take_while(|a| *a != "--")
        .map(std::path::Path::new)
        .filter(|p| p.exists())
        .filter_map(|p| rbag_bag::detect_backend(p).ok())
        .map(|b| if b.name() == "ros1" { "ros1" } else { "ros2" })
        .collect();
    match kinds.len() {
        0 => None,
        1 => {
            let kind = kinds.into_iter().next()?;
            let (graph, other) = if kind == "ros1" { ("ROS 1", "--ros2") } else { ("ROS 2", "--ros1") };
            note!(
                "playing into {graph}, as the bag is a {} bag ({other} to choose the other)",
                if kind == "ros1" { "ROS 1" } else { "rosbag2" }
            );
            Some(kind)
        }
        _ => {
            eprintln!("error: the bags mix ROS 1 and rosbag2: give --ros1 or --ros2 to say which graph to play into");
            std::process::exit(2);
        }
    }
}

/// The flags `rbag play` takes in one dialect: long names and short letters, aliases included.
fn dialect_flags(cmd: &clap::Command) -> (Vec<String>, Vec<char>) {
    let (mut long, mut short) = (Vec::new(), Vec::new());
    for a in cmd.get_arguments() {
        long.extend(a.get_long_and_visible_aliases().into_iter().flatten().map(String::from));
        long.extend(a.get_all_aliases().into_iter().flatten().map(String::from));
        short.extend(a.get_short_and_visible_aliases().into_iter().flatten());
        short.extend(a.get_all_short_aliases().into_iter().flatten());
    }
    long.extend(["help".into(), "version".into()]);
    short.extend(['h', 'V']);
    (long, short)
}

/// `rbag play` in one dialect given a flag of the other (rosbag's `-u` with `--ros2`, or
/// `ros2 bag play`'s `--start-paused` with `--ros1`), or `-s` with a value of the other's
/// (rosbag's start offset in seconds, ros2's storage id): a usage error naming both dialects,
/// before clap's plainer "unexpected argument".
fn check_play_dialect(args: &[std::ffi::OsString]) -> Result<(), String> {
    if args.get(1).and_then(|a| a.to_str()) != Some("play") {
        return Ok(());
    }
    let ros2 = ros2_verb(args).is_some();
    let ros1_cmd = <Cli as clap::CommandFactory>::command();
    let Some(ros1_cmd) = ros1_cmd.find_subcommand("play").cloned() else { return Ok(()) };
    #[cfg(feature = "ros2")]
    let ros2_cmd = <commands::play_ros2::Args as clap::CommandFactory>::command();
    #[cfg(not(feature = "ros2"))]
    let ros2_cmd = clap::Command::new("play");
    let (mine, other) = if ros2 { (&ros2_cmd, &ros1_cmd) } else { (&ros1_cmd, &ros2_cmd) };
    let ((my_long, my_short), (other_long, other_short)) = (dialect_flags(mine), dialect_flags(other));
    let (me, them) = if ros2 {
        ("ros2 bag play's (--ros2)", "rosbag play's (--ros1)")
    } else {
        ("rosbag play's (--ros1)", "ros2 bag play's (--ros2)")
    };
    let (my_flag, their_flag) = if ros2 { ("--ros2", "--ros1") } else { ("--ros1", "--ros2") };
    let args: Vec<&str> = args[2..].iter().take_while(|a| *a != "--").filter_map(|a| a.to_str()).collect();
    for (k, a) in args.iter().enumerate() {
        // `-s`: a start offset in seconds for rosbag, a storage id for ros2 bag.
        if *a == "-s" {
            let value = args.get(k + 1).copied().unwrap_or("");
            match (ros2, value.parse::<f64>().is_ok()) {
                (true, true) => {
                    return Err(format!(
                        "-s {value}: in {me} dialect -s is the storage id; {them} -s, a start offset, is \
                         --start-offset {value} here"
                    ))
                }
                (false, false) if !value.is_empty() => {
                    return Err(format!(
                        "-s {value}: in {me} dialect -s is a start offset in seconds; {them} -s is the storage \
                         id, which rbag detects (give {their_flag} for that dialect)"
                    ))
                }
                _ => continue,
            }
        }
        let foreign = if let Some(long) = a.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            (!my_long.iter().any(|l| l == name) && other_long.iter().any(|l| l == name)).then(|| format!("--{name}"))
        } else if let Some(c) = a.strip_prefix('-').and_then(|s| s.chars().next()).filter(|c| c.is_alphabetic()) {
            (!my_short.contains(&c) && other_short.contains(&c)).then(|| format!("-{c}"))
        } else {
            None
        };
        if let Some(flag) = foreign {
            return Err(format!(
                "{flag} is a flag of {them} dialect, but this play takes {me} flags; give {their_flag} to play \
                 into that graph with its flags, or see `rbag play {my_flag} --help`"
            ));
        }
    }
    Ok(())
}

#[cfg(feature = "ros2")]
fn run_ros2(verb: &str, args: Vec<std::ffi::OsString>) -> anyhow::Result<Outcome> {
    let rest = args.into_iter().skip(2);
    let name = if verb == "burst" { "rbag burst".to_string() } else { format!("rbag {verb} --ros2") };
    let argv = std::iter::once(std::ffi::OsString::from(name)).chain(rest);
    match verb {
        "record" => commands::record_ros2::run(commands::record_ros2::Args::parse_from(argv)),
        "burst" => commands::play_ros2::burst(commands::play_ros2::Args::parse_from(argv)),
        _ => commands::play_ros2::run(commands::play_ros2::Args::parse_from(argv)),
    }
}

#[cfg(not(feature = "ros2"))]
fn run_ros2(verb: &str, _args: Vec<std::ffi::OsString>) -> anyhow::Result<Outcome> {
    anyhow::bail!("rbag {verb} --ros2: this rbag was built without the `ros2` feature")
}

/// Verbs other tools have that rbag spells differently: `rbag VERB` says what does the job,
/// instead of clap's nearest-spelling guess.
fn other_tools_verb(args: &[std::ffi::OsString]) -> Option<&'static str> {
    Some(match args.get(1)?.to_str()? {
        "merge" => "rbag has no `merge`: `rbag convert IN1 IN2… -o OUT` merges bags in time order",
        "split" => "rbag has no `split`: `rbag convert IN -o OUT -b SIZE` or `-d SECONDS` splits a bag (rosbag2 output)",
        "cat" => "rbag has no `cat`: `rbag echo BAG [TOPIC…]` prints messages (--json for NDJSON)",
        "check" => "rbag has no `check`: `rbag doctor BAG…` checks a bag (--decode for every payload)",
        "fix" | "repair" => "rbag has no `fix`: `rbag reindex BAG` repairs a bag its recorder never closed; `rbag doctor` says what is wrong",
        "slice" | "cut" => "rbag has no `slice`: `rbag convert IN -o OUT --start T --end T` cuts a time window",
        _ => return None,
    })
}

fn main() -> ExitCode {
    rbag_storage_jsonl::register();
    #[cfg(feature = "remote")]
    rbag_remote::register();
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    choose_play_middleware(&mut argv);
    if let Err(e) = check_play_dialect(&argv) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if let Some(pointer) = other_tools_verb(&argv) {
        eprintln!("error: {pointer}");
        return ExitCode::from(2);
    }
    let result = match ros2_verb(&argv) {
        Some(verb) => memory_budget(None).and_then(|()| run_ros2(verb, argv)),
        None => {
            let cli = Cli::parse_from(argv);
            let stats = cli.stats;
            commands::remote::allow_scan(cli.allow_remote_scan);
            if let Some(n) = cli.threads {
                rbag_bag::pool::set_default_threads(n);
            }
            let result = memory_budget(cli.memory_budget).and_then(|()| run(cli));
            if stats {
                remote_stats();
            }
            result
        }
    };
    finish(result)
}

/// `--stats`: the remote requests and bytes of the run.
fn remote_stats() {
    #[cfg(feature = "remote")]
    {
        let t = rbag_remote::totals();
        note!("stats: {} remote request(s), {} byte(s) fetched", t.requests, t.bytes);
    }
    #[cfg(not(feature = "remote"))]
    note!("stats: this rbag was built without remote reading");
}

/// Sets the memory budget from `--memory-budget`, or checks `RBAG_MEMORY_BUDGET` (a usage error
/// when it is not a size).
fn memory_budget(flag: Option<u64>) -> anyhow::Result<()> {
    match flag {
        Some(bytes) => rbag_bag::budget::set_limit(bytes),
        None => {
            rbag_bag::budget::limit_from_env().map_err(|e| anyhow::Error::new(UsageError(e.to_string())))?;
        }
    }
    Ok(())
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Info(a) => commands::info::run(a),
        Command::Reindex(a) => commands::reindex::run(a),
        Command::Convert(a) => commands::convert::run(a),
        Command::Filter(a) => commands::filter::run(a),
        Command::Doctor(a) => commands::doctor::run(a),
        Command::Du(a) => commands::du::run(a),
        Command::Compress(a) => commands::compress::run(a, true),
        Command::Decompress(a) => commands::compress::run_decompress(a),
        Command::Attachment(a) => commands::attachment::run(a),
        Command::Metadata(a) => commands::metadata::run(a),
        Command::Echo(a) => commands::echo::run(a),
        Command::Export(a) => commands::export::run(a),
        Command::Plot(a) => commands::plot::run(a),
        Command::ExportImages(a) => commands::export_images::run(a),
        Command::Catalog(a) => commands::catalog::run(a),
        Command::List(a) => commands::list::run(a),
        Command::Record(a) => commands::record::run(a),
        Command::Play(a) => commands::play::run(a),
        Command::Serve(a) => commands::serve::run(a),
        Command::Master(a) => commands::master::run(a),
        Command::Completions(a) => commands::completions::run(a),
        Command::Man(a) => commands::man::run(a),
    }
}

fn finish(result: anyhow::Result<Outcome>) -> ExitCode {
    if std::env::var_os("RBAG_REPORT_PEAK_RSS").is_some() {
        output::report_peak_rss();
    }
    // Under --lenient, messages on undeclared connections were read (and said at open).
    let undeclared = commands::undeclared::read();
    match result {
        Ok(Outcome::Ok) if undeclared > 0 => {
            note!("warning: {undeclared} message(s) on undeclared connections were read on stand-in topics (/rbag/undeclared/<id>)");
            ExitCode::from(3)
        }
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Dropped) => ExitCode::from(3),
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.is::<UsageError>() => {
            output::error(&e);
            ExitCode::from(2)
        }
        Err(e) => {
            output::error(&e);
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod help_examples {
    //! Every verb's `--help` ends with examples, and every example parses: help that shows a
    //! flag rbag does not take would teach the wrong thing.
    use clap::CommandFactory;

    /// The example command lines of a help text: the lines after `Examples:` that start with
    /// `rbag `, without a trailing `(comment)` or shell redirection.
    fn examples(help: &str) -> Vec<Vec<String>> {
        let Some((_, after)) = help.split_once("Examples:") else { return Vec::new() };
        after
            .lines()
            .skip(1)
            .map(str::trim)
            .take_while(|l| !l.is_empty())
            .filter(|l| l.starts_with("rbag "))
            .map(|l| {
                let l = l.split("  (").next().unwrap_or(l);
                let l = l.split(" > ").next().unwrap_or(l);
                let l = l.split(" && ").next().unwrap_or(l);
                shell_words(l)
            })
            .collect()
    }

    /// Splits on spaces, keeping "double-quoted" words whole.
    fn shell_words(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ' ' if !quoted => {
                    if !cur.is_empty() {
                        words.push(std::mem::take(&mut cur));
                    }
                }
                _ => cur.push(c),
            }
        }
        if !cur.is_empty() {
            words.push(cur);
        }
        words
    }

    fn parses(words: &[String]) -> Result<(), String> {
        let argv: Vec<std::ffi::OsString> = words.iter().map(Into::into).collect();
        match super::ros2_verb(&argv) {
            #[cfg(feature = "ros2")]
            Some(verb) => {
                let name = std::iter::once(std::ffi::OsString::from("rbag"));
                let rest = argv.iter().skip(2).cloned();
                let r = match verb {
                    "record" => {
                        <super::commands::record_ros2::Args as clap::Parser>::try_parse_from(name.chain(rest)).map(drop)
                    }
                    _ => <super::commands::play_ros2::Args as clap::Parser>::try_parse_from(name.chain(rest)).map(drop),
                };
                r.map_err(|e| e.to_string())
            }
            _ => <super::Cli as clap::Parser>::try_parse_from(argv).map(drop).map_err(|e| e.to_string()),
        }
    }

    #[test]
    fn every_example_in_help_parses() {
        let mut cli = super::Cli::command();
        let mut checked = 0;
        let mut without = Vec::new();
        for sub in cli.get_subcommands_mut() {
            let name = sub.get_name().to_string();
            let help = sub.render_long_help().to_string();
            let found = examples(&help);
            if found.is_empty() {
                without.push(name.clone());
            }
            for words in found {
                parses(&words).unwrap_or_else(|e| panic!("`{}` in `rbag {name} --help`: {e}", words.join(" ")));
                checked += 1;
            }
        }
        assert!(checked >= 20, "only {checked} examples");
        assert!(without.is_empty(), "verbs whose help has no examples: {without:?}");
    }
}
