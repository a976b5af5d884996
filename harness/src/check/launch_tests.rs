use super::*;
use crate::sweep::raw::{Dtype, Len};

const OUT_F32: Buffer = Buffer { role: "out", dtype: Dtype::Float32, len: Len::N };
const OUT_I64: Buffer = Buffer { role: "out", dtype: Dtype::Int64, len: Len::N };

/// A downloaded buffer of `elements` outputs between guards, all poisoned,
/// with `values` (little-endian elements) written at the output's start.
fn buffer(poison: Poison, out: &Buffer, elements: usize, values: &[u8]) -> (Vec<u8>, Layout) {
    let size = out.dtype.size();
    let front = front_guard_bytes(size);
    let mut bytes = poison.fill(ElementKind::of_dtype(out.dtype), front + (elements + GUARD_ELEMENTS) * size);
    bytes[front..front + values.len()].copy_from_slice(values);
    (bytes, Layout { front, elements, model: elements })
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn the_front_guard_keeps_the_output_aligned_and_holds_at_least_the_guard_elements() {
    for size in [1, 2, 4, 8] {
        let bytes = front_guard_bytes(size);
        assert_eq!(bytes % 256, 0, "size {size}");
        assert!(bytes >= GUARD_ELEMENTS * size);
    }
}

#[test]
fn a_fully_written_output_is_read_under_either_poison() {
    for poison in Poison::ALL {
        let (bytes, layout) = buffer(poison, &OUT_F32, 3, &f32_bytes(&[1.0, -0.0, 2.5]));
        assert_eq!(read_output(poison, &OUT_F32, layout, &bytes), Ok(Array::Float32(vec![1.0, -0.0, 2.5])));
    }
}

#[test]
fn an_unwritten_float_element_reads_as_nan_so_no_tolerance_accepts_it() {
    let (bytes, layout) = buffer(Poison::First, &OUT_F32, 3, &f32_bytes(&[1.0]));
    let Ok(Array::Float32(got)) = read_output(Poison::First, &OUT_F32, layout, &bytes) else { panic!("read") };
    assert!(got[1].is_nan() && got[2].is_nan());
    let error = (got[1] as f64 - 0.0).abs();
    assert_eq!(error.partial_cmp(&1e30), None, "a NaN is within no bound: every |error| <= bound test fails");
}

#[test]
fn a_write_before_the_output_fails_as_guard_before() {
    let (mut bytes, layout) = buffer(Poison::Second, &OUT_I64, 2, &[0; 16]);
    bytes[layout.front - 8..layout.front].copy_from_slice(&7i64.to_le_bytes());
    let v = read_output(Poison::Second, &OUT_I64, layout, &bytes).unwrap_err();
    assert_eq!(v, Verdict::fail("untouched", "written 1 element(s) before out", "guard before"));
}

#[test]
fn a_write_past_the_output_fails_as_guard_after_and_one_past_the_model_as_poison_tail() {
    let (mut bytes, layout) = buffer(Poison::First, &OUT_I64, 2, &[0; 16]);
    let after = layout.front + 2 * 8;
    bytes[after..after + 8].copy_from_slice(&0i64.to_le_bytes());
    let Err(Verdict::Fail(m)) = read_output(Poison::First, &OUT_I64, layout, &bytes) else { panic!("caught") };
    assert_eq!((m.index, m.what.as_str()), (Some(2), "guard after"));
    let shorter = Layout { model: 1, ..layout };
    let Err(Verdict::Fail(m)) = read_output(Poison::First, &OUT_I64, shorter, &bytes) else { panic!("caught") };
    assert_eq!((m.index, m.what.as_str()), (Some(1), "poison tail"));
}
