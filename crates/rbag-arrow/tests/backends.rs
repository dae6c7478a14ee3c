//! One suite over every storage: the corpus's mixed ROS 1 bag converted into each storage
//! (ROS 1, a rosbag2 MCAP directory, a single .db3, a single .mcap), then every topic read as
//! record batches and checked against the per-message decode, column by column.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, TimestampNanosecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use rbag_arrow::{TableOptions, TopicBatches};
use rbag_bag::decode::{Decoders, ValueRef};
use rbag_bag::{Bag, ConvertOptions, Filter};

fn types(bag: &Bag) -> rbag_bag::decode::TypeSources {
    rbag_bag::types::sources_for(&bag.storage_info().unwrap().properties, &[]).unwrap()
}

/// Checks one row of a column against the decoded value: numbers, strings and byte arrays
/// exactly; arrays by length.
fn check_cell(column: &dyn Array, row: usize, v: ValueRef<'_>, what: &str) {
    match (column.data_type(), v) {
        (DataType::Float64, ValueRef::F64(x)) => {
            let got = column.as_primitive::<Float64Type>().value(row);
            assert!(got == x || (got.is_nan() && x.is_nan()), "{what}: {got} != {x}");
        }
        (DataType::Utf8, ValueRef::String(s)) => {
            assert_eq!(column.as_string::<i32>().value(row).as_bytes(), s, "{what}")
        }
        (DataType::Binary, ValueRef::Prims(p)) => assert_eq!(column.as_binary::<i32>().value(row), p.le, "{what}"),
        (DataType::List(_), ValueRef::Array(a)) => {
            assert_eq!(column.as_list::<i32>().value(row).len(), a.len(), "{what}")
        }
        (DataType::List(_), ValueRef::Prims(p)) => {
            assert_eq!(column.as_list::<i32>().value(row).len(), p.len(), "{what}")
        }
        (DataType::FixedSizeList(_, n), ValueRef::Prims(p)) => assert_eq!(*n as usize, p.len(), "{what}"),
        (t, v) => {
            // Every other scalar: compare as f64 (the integers of the corpus fit exactly).
            let got = arrow_cast_f64(column, row);
            match (got, v.as_f64()) {
                (Some(g), Some(x)) => assert_eq!(g, x, "{what}"),
                _ => assert!(!matches!(v, ValueRef::Message(_)), "{what}: {t} holds a message"),
            }
        }
    }
}

fn arrow_cast_f64(a: &dyn Array, i: usize) -> Option<f64> {
    use arrow_array::types::*;
    Some(match a.data_type() {
        DataType::UInt8 => a.as_primitive::<UInt8Type>().value(i) as f64,
        DataType::Int8 => a.as_primitive::<Int8Type>().value(i) as f64,
        DataType::UInt16 => a.as_primitive::<UInt16Type>().value(i) as f64,
        DataType::Int16 => a.as_primitive::<Int16Type>().value(i) as f64,
        DataType::UInt32 => a.as_primitive::<UInt32Type>().value(i) as f64,
        DataType::Int32 => a.as_primitive::<Int32Type>().value(i) as f64,
        DataType::UInt64 => a.as_primitive::<UInt64Type>().value(i) as f64,
        DataType::Int64 => a.as_primitive::<Int64Type>().value(i) as f64,
        DataType::Float32 => a.as_primitive::<Float32Type>().value(i) as f64,
        _ => return None,
    })
}

/// Every topic of `path` as batches equals the per-message decode; returns the rows checked.
fn check_bag(path: &Path) -> usize {
    let bag = Bag::open(path).unwrap();
    let types = types(&bag);
    let bags = std::slice::from_ref(&bag);
    let mut rows = 0;
    for topic in bag.info().unwrap().topics.iter().map(|t| t.name.clone()) {
        // Small batches, so that rows cross batch boundaries.
        let options = TableOptions { batch_rows: 7, ..TableOptions::default() };
        let batches: Vec<RecordBatch> =
            TopicBatches::new(bags, std::slice::from_ref(&types), &topic, options).unwrap().collect_batches().unwrap();
        let mut decoders = Decoders::new(types.clone());
        let filter = Filter { topics: vec![topic.clone()], ..Filter::default() };
        let mut cells = batches.iter().flat_map(|b| (0..b.num_rows()).map(move |r| (b, r)));
        for m in bag.messages(&filter).unwrap() {
            let m = m.unwrap();
            let c = bag.connection(m.connection).unwrap();
            let decoded = decoders.view(c, m.log_time, &m.data).unwrap();
            let (batch, row) = cells.next().unwrap_or_else(|| panic!("{topic}: fewer rows than messages"));
            let times = batch.column(0).as_primitive::<TimestampNanosecondType>();
            assert_eq!(times.value(row) as u64, m.log_time, "{topic}: log time");
            for (field, column) in batch.schema().fields().iter().zip(batch.columns()).skip(1) {
                let v = decoded.path(field.name()).unwrap().unwrap();
                check_cell(column.as_ref(), row, v, &format!("{} {topic} {}", path.display(), field.name()));
            }
            rows += 1;
        }
        assert!(cells.next().is_none(), "{topic}: more rows than messages");
    }
    rows
}

#[test]
fn every_storage_gives_the_same_columns_as_the_decode() {
    let Some(src) = rbag_testkit::corpus("every_storage_gives_the_same_columns_as_the_decode", "ros1/multi_none.bag")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = Bag::open(&src).unwrap();
    let direct = check_bag(&src);
    assert!(direct > 700, "{direct}");
    for out in ["out.bag", "dir", "one.db3", "one.mcap"] {
        let output = dir.path().join(out);
        let storage = rbag_bag::storage_for(&output, None).unwrap();
        let targets = rbag_bag::types::targets(None, &[], None).unwrap();
        let options = ConvertOptions { types: types(&input), targets, ..ConvertOptions::default() };
        rbag_bag::convert(std::slice::from_ref(&input), &output, &storage, &options, &mut |_| {}).unwrap();
        assert_eq!(check_bag(&output), direct, "{out}");
    }
}

#[test]
fn a_topic_of_several_bags_is_merged_in_time_order() {
    let Some(a) = rbag_testkit::corpus("a_topic_of_several_bags_is_merged_in_time_order", "ros1/multi_none.bag") else {
        return;
    };
    let Some(b) = rbag_testkit::corpus("a_topic_of_several_bags_is_merged_in_time_order", "ros1/small_chunks.bag")
    else {
        return;
    };
    let bags = [Bag::open(a).unwrap(), Bag::open(b).unwrap()];
    let types: Vec<_> = bags.iter().map(types).collect();
    let options = TableOptions { columns: Some(vec!["header.stamp".into()]), ..TableOptions::default() };
    let t = TopicBatches::new(&bags, &types, "/imu", options).unwrap();
    assert_eq!(t.column_names(), ["header.stamp.secs", "header.stamp.nsecs"]);
    let batches = t.collect_batches().unwrap();
    let times: Vec<i64> =
        batches.iter().flat_map(|b| b.column(0).as_primitive::<TimestampNanosecondType>().values().to_vec()).collect();
    let counts: u64 =
        bags.iter().map(|b| b.info().unwrap().topics.iter().find(|t| t.name == "/imu").unwrap().message_count).sum();
    assert_eq!(times.len() as u64, counts);
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn unknown_topics_and_columns_are_named() {
    let Some(src) = rbag_testkit::corpus("unknown_topics_and_columns_are_named", "ros1/multi_none.bag") else {
        return;
    };
    let bags = [Bag::open(src).unwrap()];
    let types = [types(&bags[0])];
    let e = TopicBatches::new(&bags, &types, "/nope", TableOptions::default()).err().unwrap().to_string();
    assert!(e.contains("/nope") && e.contains("multi_none.bag"), "{e}");
    let options = TableOptions { columns: Some(vec!["linear".into()]), ..TableOptions::default() };
    let e = TopicBatches::new(&bags, &types, "/imu", options).err().unwrap().to_string();
    assert!(e.contains("topic /imu: no column linear") && e.contains("linear_acceleration.x"), "{e}");
}
