//! Regression tests from the `filter_expr` fuzz target (`fuzz/`): `replay` runs exactly what the
//! target does with an input (`fuzz/fuzz_targets/expr_check.rs`, included below): parse it as a
//! filter expression and run an `ExprFilter` over the messages of two small bags.
//!
//! A crash that is not fixed yet is `#[ignore = "bug: ..."]`, so the suite stays green.

#[path = "../../../fuzz/fuzz_targets/expr_check.rs"]
mod expr_check;

use rbag_bag::expr::Expression;

/// What `filter_expr` does with `input`.
fn replay(input: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = expr_check::Fixture::new(dir.path());
    assert!(fixture.message_count() > 20);
    fixture.run(input);
}

fn eval(src: &str) -> bool {
    Expression::parse(src).unwrap().matches("/x", expr_check::START, None).unwrap()
}

/// The fixture's seeds run clean (the harness itself works).
#[test]
fn seeds_replay() {
    for seed in ["topic == '/imu' and m.linear_acceleration.z > 9", "m.transforms[0].child_frame_id == 'base_link'"] {
        replay(seed.as_bytes());
    }
    replay(b"\xff\xfe m.data");
}

/// Found while reading the evaluator for the target: floor division by a negative int rounded
/// the wrong way (`7 // -2` gave -2; Python gives -4).
#[test]
fn floor_division_by_a_negative_int_rounds_down() {
    assert!(eval("7 // -2 == -4 and -7 // -2 == 3 and 6 // -2 == -3 and -7 // 2 == -4 and 7 // 2 == 3"));
    assert!(eval("7 % -2 == -1 and -7 % -2 == -1 and 7.0 // -2 == -4.0"));
}
