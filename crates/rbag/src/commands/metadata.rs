//! `rbag metadata add|get|list`: named string maps stored in an MCAP bag, as `mcap add
//! metadata`, `mcap get metadata` and `mcap list metadata` handle them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::{Outcome, UsageError};

/// Add, print or list the metadata records of an MCAP bag (rosbag2 keeps its metadata.yaml in
/// one named `rosbag2`).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rbag metadata add run.mcap -n robot -k id=r2 -k site=lab\n  rbag metadata list run.mcap\n  rbag metadata get run.mcap -n robot"
)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Add a metadata record to an MCAP bag (a .mcap file, or the first file of a rosbag2
    /// MCAP directory). The bag is rewritten under a temporary name and renamed into place
    /// only when complete.
    Add {
        /// The MCAP bag.
        bag: PathBuf,
        /// Name of the record.
        #[arg(short, long)]
        name: String,
        /// An entry, `key=value` (repeatable).
        #[arg(short = 'k', long = "key", value_name = "KEY=VALUE")]
        entries: Vec<String>,
    },
    /// Print the entries of the records named NAME as JSON (several records of one name are
    /// merged in file order).
    Get {
        /// The bag.
        bag: PathBuf,
        /// Name of the record.
        #[arg(short, long)]
        name: String,
    },
    /// List the metadata records (as `rbag list metadata`).
    List {
        /// The bag.
        bag: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `key=value` entries, as `mcap add metadata` takes them: no empty key, no key twice.
fn parse_entries(values: &[String]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for v in values {
        let Some((k, val)) = v.split_once('=') else {
            return Err(UsageError(format!("-k {v}: expected key=value")).into());
        };
        if k.is_empty() {
            return Err(UsageError(format!("-k {v}: the key is empty")).into());
        }
        if out.insert(k.to_string(), val.to_string()).is_some() {
            return Err(UsageError(format!("-k {v}: key {k:?} is given twice")).into());
        }
    }
    Ok(out)
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.command {
        Sub::Add { bag, name, entries } => {
            let record = rbag_bag::MetadataRecord { name, metadata: parse_entries(&entries)?, ..Default::default() };
            if record.name == rbag_bag::extras::ROSBAG2_METADATA {
                bail!("`rosbag2` is the record in which rosbag2 keeps the bag's metadata.yaml; choose another name");
            }
            let (target, offsets) = rbag_bag::attachments::add(&bag, &[], std::slice::from_ref(&record))
                .with_context(|| format!("cannot add metadata to {} (it is left unchanged)", bag.display()))?;
            note!("{}: added metadata {:?} at offset {}", target.display(), record.name, offsets[0]);
        }
        Sub::Get { bag, name } => {
            let opened = super::open_with(&bag, &super::ReadArgs::default())?;
            let map = rbag_bag::attachments::metadata(&opened, &name)?;
            println!("{}", serde_json::to_string_pretty(&map)?);
        }
        Sub::List { bag, json } => return super::list::run(super::list::Args::for_bag("metadata", bag, json)),
    }
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use super::parse_entries;

    #[test]
    fn entries_are_checked() {
        let m = parse_entries(&["a=1".into(), "b=x=y".into(), "c=".into()]).unwrap();
        assert_eq!((m["a"].as_str(), m["b"].as_str(), m["c"].as_str()), ("1", "x=y", ""));
        assert!(parse_entries(&["novalue".into()]).is_err());
        assert!(parse_entries(&["=v".into()]).is_err());
        assert!(parse_entries(&["a=1".into(), "a=2".into()]).is_err());
    }
}
