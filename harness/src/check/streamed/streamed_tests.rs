//! Streamed cases against whole ones: the same inputs, parameters and
//! answers for every family of every streamed contract, and the same
//! verdict on the same outputs, judged over host memory.

use super::contracts::{streamed_contracts, Input, StreamedCase};
use super::judge::{judge, Judged};
use super::upload::upload;
use super::DeviceBytes;
use super::{bytes_per_item, case_of, host_bytes, streamed, streams, STREAM_FROM};
use crate::check::extra_sizes::{PAST_2_31, PAST_2_32};
use crate::check::launch::{front_guard_bytes, read_output, Layout, GUARD_ELEMENTS};
use crate::check::poison::{ElementKind, Poison};
use crate::registry::Primitive;
use crate::sweep::case::Verdict;
use crate::sweep::raw::{self, Array, Contract, Len, RawCase, RawSpec};
use crate::sweep::SweepPlan;
use std::collections::BTreeSet;

/// The primitive of `contract`: the registry's whose contracts hold it, or its named rule's.
fn primitive_of(contract: &Contract) -> Primitive {
    if let Some(rule) = crate::cases::rules::rule_of(contract) {
        return rule.primitive;
    }
    Primitive::ALL
        .into_iter()
        .find(|&p| raw::contract(p, contract.name).is_ok_and(|c| c == contract))
        .expect("a streamed contract is a registry contract or a named rule")
}

/// The cases of `contract` at `sizes` as a check makes them (every family;
/// a named rule's answers adjusted to the rule).
fn catalogue(contract: &Contract, sizes: &[usize]) -> Vec<RawSpec> {
    let p = primitive_of(contract);
    crate::cases::rules::with_catalogue(&SweepPlan::of_primitive(p, sizes, 11), p, contract, "user")
}

/// `arrays` end to end, as one array of their type.
fn concat(dtype: raw::Dtype, arrays: &[Array]) -> Array {
    let bytes: Vec<u8> = arrays.iter().flat_map(Array::to_le_bytes).collect();
    Array::from_le_bytes(dtype, &bytes).expect("whole elements")
}

/// The streamed case's inputs, those made in pieces collected in pieces of `piece`.
fn inputs_of(contract: &Contract, case: &StreamedCase, piece: usize) -> Vec<Array> {
    let inputs = case.inputs(piece).expect("made");
    assert_eq!(inputs.len(), contract.inputs.len(), "one per input");
    let whole = |input: Input, dtype| match input {
        Input::Whole(array) => array,
        Input::Pieces(pieces) => {
            let pieces: Vec<Array> = pieces.collect();
            assert!(pieces.iter().all(|a| a.count() <= piece), "pieces of at most {piece}");
            concat(dtype, &pieces)
        }
    };
    inputs.into_iter().zip(contract.inputs).map(|(input, b)| whole(input, b.dtype)).collect()
}

/// The model's answers folded over `inputs` in pieces of `piece`: the appended ones end to end, then the final ones.
fn answers_of(contract: &Contract, case: &StreamedCase, inputs: &[Array], piece: usize) -> Vec<Array> {
    let mut model = case.model();
    let mut appended: Vec<Vec<Array>> = vec![Vec::new(); contract.outputs.len()];
    let n = case.n;
    // The inputs made in pieces: those of n items.
    let streamed: Vec<(raw::Dtype, Vec<u8>)> = inputs
        .iter()
        .zip(contract.inputs)
        .filter(|(_, b)| b.len == Len::N)
        .map(|(a, _)| (a.dtype(), a.to_le_bytes()))
        .collect();
    let pieces: Vec<Vec<Array>> = (0..n)
        .step_by(piece)
        .map(|start| {
            let end = (start + piece).min(n);
            let slice = |(dtype, bytes): &(raw::Dtype, Vec<u8>)| {
                let size = dtype.size();
                Array::from_le_bytes(*dtype, &bytes[start * size..end * size]).expect("slice")
            };
            streamed.iter().map(slice).collect()
        })
        .collect();
    // One piece alone, then batches of three.
    let (first, rest) = pieces.split_at(pieces.len().min(1));
    let mut answers: Vec<Vec<Option<Array>>> = first.iter().map(|p| model.piece(p).expect("folds")).collect();
    for batch in rest.chunks(3) {
        answers.extend(model.batch(batch).expect("folds"));
    }
    for piece_answers in answers {
        for (k, answer) in piece_answers.into_iter().enumerate() {
            appended[k].extend(answer);
        }
    }
    let finals = model.finish().expect("finishes");
    contract
        .outputs
        .iter()
        .zip(finals)
        .zip(appended)
        .map(|((b, last), pieces)| last.unwrap_or_else(|| concat(b.dtype, &pieces)))
        .collect()
}

/// Every contract of the registry, with its primitive.
fn registry_contracts() -> Vec<(Primitive, Contract)> {
    let contracts = |p: Primitive| p.raw_cases().map(|(c, _)| c.to_vec()).unwrap_or_default();
    Primitive::ALL.into_iter().flat_map(|p| contracts(p).into_iter().map(move |c| (p, c))).collect()
}

#[test]
fn every_family_a_streamed_contract_meets_past_2_31_is_its_whole_case_in_pieces() {
    let small = [1, 2, 33, 1000, 4099];
    for contract in streamed_contracts() {
        assert_eq!(contract.rule, raw::Rule::Exact, "{}: a streamed comparison is exact", contract.name);
        // The families past 2^31 (their names only: no input is made), each proven at the small sizes.
        let large = catalogue(&contract, &[PAST_2_31]).into_iter().filter(|s| s.id.n == PAST_2_31);
        let mut unproven: BTreeSet<String> = large.map(|s| s.id.family).collect();
        let mut proven = 0;
        for spec in catalogue(&contract, &small) {
            let Some(case) = streamed(&contract, &spec.id) else { continue };
            let whole = (spec.make)().expect("the whole case");
            let at = format!("{} n={} family={}", contract.name, spec.id.n, spec.id.family);
            assert_eq!(case.params, whole.params, "{at}: parameters");
            for (k, input) in whole.inputs.iter().enumerate() {
                assert_eq!(case.input_elements[k], input.count(), "{at}: input {k}'s buffer");
            }
            for k in 0..contract.outputs.len() {
                let elements = contract.outputs[k].len.elements(spec.id.n, whole.model_len(k)).max(whole.model_len(k));
                assert_eq!(case.output_elements[k], elements, "{at}: output {k}'s buffer");
            }
            assert_eq!(super::whole_from_pieces(&contract, &case).as_ref(), Ok(&whole), "{at}: made whole from pieces");
            for piece in [7, 1000] {
                let inputs = inputs_of(&contract, &case, piece);
                assert_eq!(inputs, whole.inputs, "{at}: inputs in pieces of {piece}");
                assert_eq!(
                    answers_of(&contract, &case, &inputs, piece),
                    whole.expected,
                    "{at}: answers, pieces of {piece}"
                );
            }
            unproven.remove(&spec.id.family);
            proven += 1;
        }
        assert!(proven >= small.len(), "{}: {proven} small cases streamed", contract.name);
        assert!(unproven.is_empty(), "{}: families past 2^31 not proven small: {unproven:?}", contract.name);
    }
}

#[test]
fn past_2_31_every_case_of_the_registry_streams_in_a_few_pieces_of_memory() {
    let mut large = 0;
    let rules = crate::cases::rules::RULES.iter().map(|r| (r.primitive, r.contract));
    for (p, contract) in registry_contracts().into_iter().chain(rules) {
        let sizes = [PAST_2_31, PAST_2_32, STREAM_FROM - 1];
        let specs = crate::cases::rules::with_catalogue(&SweepPlan::of_primitive(p, &sizes, 11), p, &contract, "u");
        for spec in specs.iter().filter(|s| s.id.n >= STREAM_FROM) {
            let case = case_of(&contract, &spec.id, STREAM_FROM)
                .unwrap_or_else(|| panic!("{} {:?} streams", contract.name, spec.id));
            assert!(case.n == PAST_2_31 || case.n == PAST_2_32);
            large += 1;
        }
        for spec in specs.iter().filter(|s| s.id.n < STREAM_FROM) {
            assert!(
                case_of(&contract, &spec.id, STREAM_FROM).is_none(),
                "{}: below 2^31 a case is made whole",
                contract.name
            );
        }
        if streams(&contract) {
            let host = host_bytes(bytes_per_item(&contract));
            assert!(host < 2_000_000_000, "{}: {host} bytes of host memory, under 2 GB at any n", contract.name);
        }
    }
    // At each of the two sizes: two families each of reduce, both scans, both compactions and
    // the segmented sum, three histograms and the correctly rounded sum; and the three of the
    // histograms' closed-last-bin rules.
    assert_eq!(large, 2 * (16 + 3), "the cases past 2^31 and past 2^32");
    // A contract outside the table is made whole at any size.
    let softmax = raw::contract(Primitive::Softmax, "rows.f32").expect("exists");
    let specs = catalogue(softmax, &[33]);
    assert!(!streams(softmax) && streamed(softmax, &specs[0].id).is_none());
}

/// A case's buffers in host memory: inputs as uploaded, outputs with their guards.
struct HostBuffers {
    inputs: Vec<Vec<u8>>,
    outputs: Vec<Vec<u8>>,
}

fn range(buffer: &[u8], at: usize, len: usize) -> Result<std::ops::Range<usize>, Verdict> {
    (at + len <= buffer.len()).then_some(at..at + len).ok_or_else(|| Verdict::fail("in range", at + len, "copy"))
}

impl DeviceBytes for HostBuffers {
    fn write_input(&mut self, k: usize, at: usize, bytes: &[u8]) -> Result<(), Verdict> {
        let r = range(&self.inputs[k], at, bytes.len())?;
        self.inputs[k][r].copy_from_slice(bytes);
        Ok(())
    }

    fn read_input(&mut self, k: usize, at: usize, len: usize) -> Result<Vec<u8>, Verdict> {
        Ok(self.inputs[k][range(&self.inputs[k], at, len)?].to_vec())
    }

    fn read_output(&mut self, k: usize, at: usize, len: usize) -> Result<Vec<u8>, Verdict> {
        Ok(self.outputs[k][range(&self.outputs[k], at, len)?].to_vec())
    }

    fn whole_input(&mut self, k: usize) -> Result<Vec<u8>, Verdict> {
        Ok(self.inputs[k].clone())
    }

    fn whole_output(&mut self, k: usize) -> Result<Vec<u8>, Verdict> {
        Ok(self.outputs[k].clone())
    }
}

/// Host buffers whose copies by range are off by `shift` bytes (writes
/// land later, reads start later): what the self-test must catch.
struct Shifted {
    host: HostBuffers,
    shift: usize,
    outputs_only: bool,
}

impl DeviceBytes for Shifted {
    fn write_input(&mut self, k: usize, at: usize, bytes: &[u8]) -> Result<(), Verdict> {
        let at = if self.outputs_only { at } else { at + self.shift };
        self.host.write_input(k, at.min(self.host.inputs[k].len() - bytes.len()), bytes)
    }

    fn read_input(&mut self, k: usize, at: usize, len: usize) -> Result<Vec<u8>, Verdict> {
        self.host.read_input(k, at, len)
    }

    fn read_output(&mut self, k: usize, at: usize, len: usize) -> Result<Vec<u8>, Verdict> {
        let at = (at + self.shift).min(self.host.outputs[k].len() - len);
        self.host.read_output(k, at, len)
    }

    fn whole_input(&mut self, k: usize) -> Result<Vec<u8>, Verdict> {
        self.host.whole_input(k)
    }

    fn whole_output(&mut self, k: usize) -> Result<Vec<u8>, Verdict> {
        self.host.whole_output(k)
    }
}

/// One case of `contract` at `n` (its first family), streamed and whole.
fn one_case(contract: &Contract, n: usize) -> (StreamedCase, RawCase) {
    let spec = catalogue(contract, &[n]).into_iter().find(|s| s.id.n == n).expect("a case at n");
    (streamed(contract, &spec.id).expect("streams"), (spec.make)().expect("made"))
}

/// Buffers holding `whole`'s answer as a correct kernel leaves them under `poison`.
fn correct_run(contract: &Contract, case: &StreamedCase, whole: &RawCase, poison: Poison) -> HostBuffers {
    let inputs =
        contract.inputs.iter().zip(&case.input_elements).map(|(b, &e)| vec![0u8; e * b.dtype.size()]).collect();
    let outputs = contract
        .outputs
        .iter()
        .zip(&case.output_elements)
        .zip(&whole.expected)
        .map(|((b, &elements), expected)| {
            let size = b.dtype.size();
            let pattern = poison.pattern(ElementKind::of_dtype(b.dtype));
            let front = front_guard_bytes(size);
            let mut bytes = pattern.repeat((front + (elements + GUARD_ELEMENTS) * size) / pattern.len());
            let answer = expected.to_le_bytes();
            bytes[front..front + answer.len()].copy_from_slice(&answer);
            bytes
        })
        .collect();
    HostBuffers { inputs, outputs }
}

/// The verdict of the whole path on the same output buffers.
fn whole_verdict(
    contract: &Contract,
    case: &StreamedCase,
    whole: &RawCase,
    buffers: &HostBuffers,
    poison: Poison,
) -> Verdict {
    let mut got = Vec::new();
    for (k, out) in contract.outputs.iter().enumerate() {
        let layout = Layout {
            front: front_guard_bytes(out.dtype.size()),
            elements: case.output_elements[k],
            model: whole.model_len(k),
        };
        match read_output(poison, out, layout, &buffers.outputs[k]) {
            Ok(array) => got.push(array),
            Err(verdict) => return verdict,
        }
    }
    crate::cases::rules::compare(contract, whole, &got)
}

/// Sets the bytes of element `index` of output `k` (past its front guard) to `byte`.
fn write_element(contract: &Contract, buffers: &mut HostBuffers, k: usize, index: usize, byte: u8) {
    let size = contract.outputs[k].dtype.size();
    let at = front_guard_bytes(size) + index * size;
    buffers.outputs[k][at..at + size].fill(byte);
}

#[test]
fn a_streamed_run_gets_the_whole_runs_verdict_on_the_same_outputs() {
    // Pieces of 100 items: 50 pieces, four batches of read-back.
    let (n, piece) = (5000, 100);
    for contract in streamed_contracts() {
        let (case, whole) = one_case(&contract, n);
        for poison in [Poison::First, Poison::Second] {
            let judged = |buffers: &mut HostBuffers, uploaded| {
                judge(&Judged { contract: &contract, case: &case, uploaded }, poison, buffers)
            };
            let mut buffers = correct_run(&contract, &case, &whole, poison);
            let uploaded = upload(&contract, &case, piece, &mut buffers).expect("uploaded");
            assert_eq!(
                buffers.inputs,
                whole.inputs.iter().map(Array::to_le_bytes).collect::<Vec<_>>(),
                "uploaded whole"
            );
            assert_eq!(judged(&mut buffers, &uploaded), Verdict::Pass, "{}: a correct run passes", contract.name);
            // One wrong element at a time, at each end and across a piece boundary, then
            // a write into the guard before, past the answer and into the guard after.
            let model = whole.model_len(0);
            let last = (case.output_elements[0] + GUARD_ELEMENTS - 1) as isize;
            let batch = 16 * piece;
            let at = [
                0,
                piece - 1,
                piece,
                batch - 1,
                batch,
                model / 2,
                model.saturating_sub(1),
                model,
                case.output_elements[0],
            ];
            let mut writes: Vec<(usize, isize)> =
                at.map(|i| (0, i as isize)).into_iter().filter(|w| w.1 <= last).collect();
            writes.extend([(0, -1), (0, last)]);
            for (k, index) in writes {
                let mut run = correct_run(&contract, &case, &whole, poison);
                run.inputs = buffers.inputs.clone();
                if index < 0 {
                    let front = front_guard_bytes(contract.outputs[k].dtype.size());
                    run.outputs[k][front - 1] ^= 0xff;
                } else {
                    write_element(&contract, &mut run, k, index as usize, 0x11);
                }
                let streamed = judged(&mut run, &uploaded);
                assert!(!streamed.passed(), "{}: a write at {index} of output {k} fails", contract.name);
                assert_eq!(
                    streamed,
                    whole_verdict(&contract, &case, &whole, &run, poison),
                    "{}: at {index}",
                    contract.name
                );
            }
        }
    }
}

/// A correct run of the first case of `contract` at 5000 items, uploaded in pieces of `piece`.
fn uploaded_run(contract: &Contract, piece: usize) -> (StreamedCase, RawCase, HostBuffers, super::upload::Uploaded) {
    let (case, whole) = one_case(contract, 5000);
    let mut buffers = correct_run(contract, &case, &whole, Poison::First);
    let uploaded = upload(contract, &case, piece, &mut buffers).expect("uploaded");
    (case, whole, buffers, uploaded)
}

#[test]
fn a_run_that_writes_into_its_input_fails_and_names_the_piece() {
    let contract = raw::scan::CONTRACTS[0];
    let (case, _, mut buffers, uploaded) = uploaded_run(&contract, 1000);
    buffers.inputs[0][4 * 2500] ^= 1;
    let Verdict::Fail(m) =
        judge(&Judged { contract: &contract, case: &case, uploaded: &uploaded }, Poison::First, &mut buffers)
    else {
        panic!("a changed input fails")
    };
    assert_eq!((m.what.as_str(), m.expected.as_str()), ("input untouched", "in[2000..3000) as uploaded"));
}

#[test]
fn a_run_that_writes_into_an_input_held_whole_fails_too() {
    let contract = raw::segmented_reduce::CONTRACTS[0];
    let (case, _, mut buffers, uploaded) = uploaded_run(&contract, 1000);
    let on = Judged { contract: &contract, case: &case, uploaded: &uploaded };
    assert_eq!(judge(&on, Poison::First, &mut buffers), Verdict::Pass);
    buffers.inputs[1][8] ^= 1;
    let Verdict::Fail(m) = judge(&on, Poison::First, &mut buffers) else { panic!("changed offsets fail") };
    assert_eq!((m.what.as_str(), m.expected.as_str()), ("input untouched", "offsets as uploaded"));
}

#[test]
fn a_failed_piece_is_summarised_with_its_indices_in_the_whole_output() {
    let contract = raw::scan::CONTRACTS[1];
    let (case, whole, mut buffers, uploaded) = uploaded_run(&contract, 100);
    write_element(&contract, &mut buffers, 0, 1650, 0x11);
    let _ = super::judge::take_detail();
    let verdict = judge(&Judged { contract: &contract, case: &case, uploaded: &uploaded }, Poison::First, &mut buffers);
    assert!(matches!(verdict, Verdict::Fail(ref m) if m.index == Some(1650)), "{verdict:?}");
    let detail = super::judge::take_detail();
    assert_eq!(detail[0], "mismatched elements of out [1600..1700): 1 / 100 (1.0%)", "{detail:?}");
    // The element as the whole case's summary lists it.
    let layout = Layout { front: front_guard_bytes(8), elements: 5000, model: 5000 };
    let got = read_output(Poison::First, &contract.outputs[0], layout, &buffers.outputs[0]).expect("read");
    let whole_lines =
        crate::sweep::raw::mismatch::lines(&crate::sweep::raw::mismatch::summarize(&contract, &whole, &[got]));
    assert_eq!(detail[1], whole_lines[1], "the first mismatch");
    assert!(super::judge::take_detail().is_empty(), "taken once");
}

#[test]
fn where_streaming_starts_is_a_size_the_environment_may_move() {
    use super::stream_from_value as from;
    assert_eq!(from(None), Ok(STREAM_FROM));
    assert_eq!(from(Some("2^24".into())), Ok(1 << 24));
    assert_eq!(from(Some(" 16777216 ".into())), Ok(1 << 24));
    let e = from(Some("lots".into())).unwrap_err();
    assert!(e.starts_with("PRIMLAB_STREAM_FROM=\"lots\" is not a size"), "{e}");
    // Below the start a case is made whole; from it on, a streamed contract's case streams.
    let contract = raw::scan::CONTRACTS[0];
    let spec = catalogue(&contract, &[4099]).into_iter().find(|s| s.id.n == 4099).expect("a case");
    assert!(case_of(&contract, &spec.id, 4100).is_none() && case_of(&contract, &spec.id, 4099).is_some());
}

#[test]
fn a_case_whose_answer_the_contract_cannot_hold_could_not_run() {
    // Every skewed sample in one bin: past 2^31 its count does not fit the int32 counts. No
    // input is made, and the case is not the kernel's failure.
    let contract = raw::histogram::CONTRACTS[0];
    let spec =
        catalogue(&contract, &[PAST_2_31]).into_iter().find(|s| s.id.family.ends_with(".skewed")).expect("a case");
    let case = streamed(&contract, &spec.id).expect("streams");
    let mut nothing = HostBuffers { inputs: vec![Vec::new()], outputs: Vec::new() };
    let Err(Verdict::Skipped { reason }) = upload(&contract, &case, super::PIECE, &mut nothing) else {
        panic!("could not run")
    };
    assert!(
        reason.starts_with("could not run: the case could not be made (a bin count does not fit int32"),
        "{reason}"
    );
}

#[test]
fn the_self_test_passes_true_copies_by_range_and_fails_shifted_ones() {
    for contract in streamed_contracts() {
        let (case, whole) = one_case(&contract, 4099);
        let mut buffers = correct_run(&contract, &case, &whole, Poison::Second);
        assert_eq!(super::judge::self_test(&contract, &case, &whole, &mut buffers), Ok(()), "{}", contract.name);
        // Pieces written one byte late: the inputs do not read back whole.
        let host = correct_run(&contract, &case, &whole, Poison::Second);
        let mut late = Shifted { host, shift: 1, outputs_only: false };
        let e = super::judge::self_test(&contract, &case, &whole, &mut late).unwrap_err();
        assert!(e.contains("does not read back whole"), "{}: {e}", contract.name);
        // Outputs read one element late: a range differs from the buffer read whole.
        let mut host = correct_run(&contract, &case, &whole, Poison::Second);
        host.outputs.iter_mut().for_each(|o| o.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8));
        let mut late = Shifted { host, shift: 8, outputs_only: true };
        let e = super::judge::self_test(&contract, &case, &whole, &mut late).unwrap_err();
        assert!(e.starts_with("output 0: bytes 0..7 read as a range differ"), "{}: {e}", contract.name);
    }
}

#[test]
fn the_closed_last_bin_rules_stream_and_count_the_samples_at_upper() {
    let names: Vec<&str> = streamed_contracts().iter().map(|c| c.name).collect();
    assert!(names.contains(&"even.i32.last_bin_closed") && names.contains(&"even.f32.last_bin_closed"), "{names:?}");
    // The full-range shape plants i32::MAX, its upper: the rule's last bin holds one more.
    let rule = crate::cases::rules::contract(Primitive::Histogram, "even.i32.last_bin_closed").expect("a rule");
    let base = raw::histogram::CONTRACTS[0];
    let at = |c: &Contract| catalogue(c, &[4099]).into_iter().find(|s| s.id.family.ends_with("bins4096_full_range"));
    let (rule_spec, base_spec) = (at(rule).expect("a case"), at(&base).expect("a case"));
    let answer = |c: &Contract, spec: &RawSpec| {
        let case = streamed(c, &spec.id).expect("streams");
        let inputs = inputs_of(c, &case, 1000);
        answers_of(c, &case, &inputs, 1000)
    };
    let (Array::Int32(closed), Array::Int32(open)) = (&answer(rule, &rule_spec)[0], &answer(&base, &base_spec)[0])
    else {
        panic!("int32 counts")
    };
    assert_eq!(closed[..4095], open[..4095]);
    assert_eq!(closed[4095], open[4095] + 1, "i32::MAX counted in the last bin");
}

#[test]
fn a_large_case_made_whole_from_its_pieces_is_the_catalogues() {
    // Two pieces and a part (several batches' worth of work in one), the first family of each
    // streamed contract; below the threshold the catalogue's own make is used.
    let n = super::WHOLE_FROM_PIECES + 1000;
    for contract in streamed_contracts() {
        let spec = catalogue(&contract, &[n]).into_iter().find(|s| s.id.n == n).expect("a case at n");
        let made = super::whole_case(&contract, &spec.id).expect("made from pieces");
        let at = format!("{} n={n} family={}", contract.name, spec.id.family);
        let case = made.as_ref().unwrap_or_else(|e| panic!("{at}: {e}"));
        // Every piece collected: the input made in pieces holds all n items, past the first piece.
        let pieced = contract.inputs.iter().position(|b| b.len == Len::N).expect("an input of n items");
        assert_eq!(case.inputs[pieced].count(), n, "{at}: every piece");
        assert!(n > super::PIECE, "{at}: more than one piece");
        assert_eq!(made, (spec.make)(), "{at}");
        // The threshold is where it says: its first size is made from pieces, the one below is not.
        let at_threshold = |size: usize| {
            let spec = catalogue(&contract, &[size]).into_iter().find(|s| s.id.n == size).expect("a case");
            super::whole_case(&contract, &spec.id).is_some()
        };
        assert!(at_threshold(super::WHOLE_FROM_PIECES), "{at}: made from pieces at the threshold");
        assert!(!at_threshold(super::WHOLE_FROM_PIECES - 1), "{at}: below the threshold the catalogue makes it");
    }
}
