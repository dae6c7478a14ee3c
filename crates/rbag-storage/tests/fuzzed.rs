use rbag_storage::ros1::Ros1Reader;
#[test]
fn probe() {
    let d = std::fs::read("/tmp/ip.bag").unwrap();
    let p = std::env::temp_dir().join("probe.bag");
    std::fs::write(&p, &d).unwrap();
    let r = Ros1Reader::open(&p);
    println!("{:?}", r.as_ref().err());
}
