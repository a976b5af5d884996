use super::*;
use crate::exact::{exact_sum_f64, gamma, tree_error_bound, U_F32};
use crate::generators::{ill_conditioned_f32, uniform_bf16, uniform_f32};

const P25: f32 = 33_554_432.0; // 2^25: ulp 4 above, 2 below
const P24: f32 = 16_777_216.0; // 2^24: 2^24 + 1 ties to 2^24

fn fixed(input: FloatInput<'_>) -> f32 {
    replay_float_sum_planned(FloatTreeSchedule::FixedTree, input).unwrap()
}

/// `n` zeros with `values` at the given indices.
fn sparse(n: usize, values: &[(usize, f32)]) -> Vec<f32> {
    let mut x = vec![0.0f32; n];
    for &(i, v) in values {
        x[i] = v;
    }
    x
}

#[test]
fn the_kernels_geometry() {
    let grids = |s, n| FloatLaunch::of(s, n).unwrap().grids;
    assert_eq!(grids(FloatTreeSchedule::FixedTree, 1), vec![1]);
    assert_eq!(grids(FloatTreeSchedule::FixedTree, 4096), vec![1]);
    assert_eq!(grids(FloatTreeSchedule::Compensated, 4097), vec![2, 1]);
    assert_eq!(grids(FloatTreeSchedule::FixedTree, 4096 * 4096 + 1), vec![4097, 2, 1]);
    assert_eq!(grids(FloatTreeSchedule::TwoPass, 1), vec![1, 1]);
    assert_eq!(grids(FloatTreeSchedule::TwoPass, 1 << 24), vec![1024, 1]);
    assert_eq!(
        FloatLaunch::of(FloatTreeSchedule::TwoPass, 0),
        Err(ModelError::EmptyInput { primitive: "float_reduce" })
    );
}

#[test]
fn four_f32_inputs_are_one_pairwise_thread() {
    let x = [P25, 1.0, -P25, 1.0];
    let expected = (x[0] + x[1]) + (x[2] + x[3]);
    assert_eq!(expected, 0.0);
    assert_eq!(((x[0] + x[1]) + x[2]) + x[3], 1.0, "a sequential sum differs");
    for schedule in [FloatTreeSchedule::FixedTree, FloatTreeSchedule::TwoPass] {
        assert_eq!(replay_float_sum_planned(schedule, FloatInput::F32(&x)).unwrap().to_bits(), expected.to_bits());
    }
    let narrow: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
    assert_eq!(fixed(FloatInput::Bf16(&narrow)).to_bits(), expected.to_bits());
}

#[test]
fn f32_and_bf16_tiles_place_element_1024_differently() {
    // Nonzero: 0 -> 2^25, 1 -> 1, 4 -> 1, 1024 -> -2^25.
    let x = sparse(1025, &[(0, P25), (1, 1.0), (4, 1.0), (1024, -P25)]);
    // f32: thread 0 items 0, 1 and (item 4) element 1024; thread 1 item 0 is element 4.
    let f32_tree = ((P25 + 1.0) + -P25) + 1.0;
    // bf16: thread 0 items 0, 1, 4 (elements 0, 1, 4); element 1024 is thread 128 (warp 4).
    let bf16_tree = ((P25 + 1.0) + 1.0) + -P25;
    assert_ne!(f32_tree.to_bits(), bf16_tree.to_bits());
    assert_eq!(fixed(FloatInput::F32(&x)).to_bits(), f32_tree.to_bits());
    let narrow: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
    assert_eq!(fixed(FloatInput::Bf16(&narrow)).to_bits(), bf16_tree.to_bits());
}

#[test]
fn the_second_pass_is_a_tile_over_the_partials() {
    // n = 5 * 4096 + 1: grids [6, 1]; partial b is x[4096 b] (the only nonzero of tile b).
    let p = [3.0f32, 3.0, P25, -P25, 1.0, 1.0];
    let x = sparse(5 * 4096 + 1, &p.iter().enumerate().map(|(b, &v)| (4096 * b, v)).collect::<Vec<_>>());
    // Pass 1, Vector4: thread 0 holds p0..p3, thread 1 holds p4, p5.
    let expected = ((p[0] + p[1]) + (p[2] + p[3])) + (p[4] + p[5]);
    let sequential = p.iter().fold(0.0f32, |a, b| a + b);
    assert_ne!(expected.to_bits(), sequential.to_bits());
    assert_eq!(fixed(FloatInput::F32(&x)).to_bits(), expected.to_bits());
    // TwoPass: 6 blocks of one tile each (acc = +0 + value), then the same second pass.
    assert_eq!(
        replay_float_sum_planned(FloatTreeSchedule::TwoPass, FloatInput::F32(&x)).unwrap().to_bits(),
        expected.to_bits()
    );
}

#[test]
fn two_pass_adds_a_threads_tiles_in_sequence() {
    // One block over 4 tiles (launch [1, 1]): thread 0's acc = (((0 + a) + b) + c) + d.
    let v = [3.0f32, 3.0, P25, -P25];
    let x = sparse(4 * 4096, &v.iter().enumerate().map(|(b, &v)| (4096 * b, v)).collect::<Vec<_>>());
    let one_block = FloatLaunch { grids: vec![1, 1] };
    let expected = (((0.0f32 + v[0]) + v[1]) + v[2]) + v[3];
    let tree = (v[0] + v[1]) + (v[2] + v[3]);
    assert_ne!(expected.to_bits(), tree.to_bits());
    let got = replay_float_sum(FloatTreeSchedule::TwoPass, FloatInput::F32(&x), &one_block).unwrap();
    assert_eq!(got.to_bits(), expected.to_bits());
    assert_eq!(fixed(FloatInput::F32(&x)).to_bits(), tree.to_bits());
}

#[test]
fn compensated_keeps_the_units_the_plain_tree_loses() {
    // Thread 0: items (2^24, 0), (1, 0), (1, 0), (0, 0). Width 1: (2^24, 1) and (1, 0);
    // width 2: t = 2^24, e = 1, c = 1 + 1 = 2; identity levels keep (2^24, 2); fl(s + c).
    let x = [P24, 1.0, 1.0];
    assert_eq!(fixed(FloatInput::F32(&x)), P24);
    let got = replay_float_sum_planned(FloatTreeSchedule::Compensated, FloatInput::F32(&x)).unwrap();
    assert_eq!(got, 16_777_218.0);
    let narrow: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
    let got = replay_float_sum_planned(FloatTreeSchedule::Compensated, FloatInput::Bf16(&narrow)).unwrap();
    assert_eq!(got, 16_777_218.0);
}

#[test]
fn compensated_later_passes_read_pairs() {
    // n = 4097: partial 0 = (2^24, 1) (elements 0, 1), partial 1 = (1, 0) (element 4096).
    // Pass 1, Strided: thread 0 holds partial 0, thread 1 partial 1; lanes 0 + 1 give
    // t = 2^24, e = 1, c = (1 + 0) + 1 = 2.
    let x = sparse(4097, &[(0, P24), (1, 1.0), (4096, 1.0)]);
    let got = replay_float_sum_planned(FloatTreeSchedule::Compensated, FloatInput::F32(&x)).unwrap();
    assert_eq!(got, 16_777_218.0);
}

#[test]
fn launches_that_cannot_cover_the_input_are_refused() {
    let x = vec![1.0f32; 5000];
    let input = FloatInput::F32(&x);
    for grids in [vec![], vec![2], vec![1], vec![2, 0, 1]] {
        let launch = FloatLaunch { grids: grids.clone() };
        let e = replay_float_sum(FloatTreeSchedule::FixedTree, input, &launch).unwrap_err();
        assert!(matches!(e, ModelError::InvalidWidth { primitive: "float_reduce", .. }), "{grids:?}: {e}");
    }
    let e = replay_float_sum(FloatTreeSchedule::TwoPass, input, &FloatLaunch { grids: vec![2, 1, 1] }).unwrap_err();
    assert!(matches!(e, ModelError::InvalidWidth { .. }), "{e}");
    assert!(replay_float_sum_planned(FloatTreeSchedule::FixedTree, FloatInput::F32(&[])).is_err());
}

/// The deepest addition chain, written out from the module docs: a tile pass is 4 + 5 + 3
/// levels; TwoPass adds its `ceil(tiles / G)` sequential tile values before its 5 + 3.
fn depth(schedule: FloatTreeSchedule, n: usize) -> u32 {
    let passes = if n <= 4096 { 1 } else { 2 }; // the sizes below stay under 4096^2
    match schedule {
        FloatTreeSchedule::FixedTree | FloatTreeSchedule::Compensated => 12 * passes,
        FloatTreeSchedule::TwoPass => 1 + 4 + 5 + 3 + 12, // every size below has tiles <= 1024
    }
}

#[test]
fn replays_stay_within_the_declared_bounds() {
    for n in [1usize, 31, 4095, 4097, 70_000] {
        let uniform = uniform_f32(n, 7 + n as u64);
        let narrow: Vec<f32> = uniform_bf16(n, 11 + n as u64).iter().map(|v| v.to_f32()).collect();
        let ill = ill_conditioned_f32(n.max(2), 1e10, 13).unwrap().0;
        for (family, x) in [("uniform", &uniform), ("bf16", &narrow), ("ill 1e10", &ill)] {
            let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
            let exact = exact_sum_f64(&wide).unwrap();
            for schedule in FloatTreeSchedule::ALL {
                let got = if family == "bf16" {
                    let b: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
                    replay_float_sum_planned(schedule, FloatInput::Bf16(&b)).unwrap()
                } else {
                    replay_float_sum_planned(schedule, FloatInput::F32(x)).unwrap()
                };
                let mut with_got = wide.clone();
                with_got.push(-f64::from(got));
                let error = exact_sum_f64(&with_got).unwrap().rounded_f64.abs();
                let d = depth(schedule, x.len());
                let bound = match schedule {
                    FloatTreeSchedule::Compensated => {
                        let tail = 2.0 * gamma(2 * u64::from(d), U_F32) * gamma(u64::from(d), U_F32) * exact.sum_abs;
                        U_F32 * (exact.rounded_f64.abs() + tail) + tail
                    }
                    _ => tree_error_bound(d, U_F32, exact.sum_abs),
                } * (1.0 + 1e-9);
                assert!(
                    error <= bound,
                    "{} {family} n={}: error {error:e} > bound {bound:e}",
                    schedule.name(),
                    x.len()
                );
            }
        }
    }
}
