//! The inputs made side by side against the model's generators, piece for piece.

use super::*;
use model::generators as reference;

#[test]
fn the_stream_is_the_models_and_a_jump_is_that_many_draws() {
    for seed in [0u64, 1, 42, 0x5eed] {
        let (mut ours, mut theirs) = (Xoshiro::new(seed), reference::Rng::new(seed));
        for _ in 0..1000 {
            assert_eq!(ours.next_u64(), theirs.next_u64());
        }
        for bound in [1u64, 2, 4, 5, 19, 1000, u64::MAX] {
            assert_eq!(ours.below(bound), theirs.below(bound), "below({bound})");
        }
        for k in [0u64, 1, 2, 3, 63, 64, 65, 1000, 65_537] {
            let mut stepped = Xoshiro::new(seed);
            (0..k).for_each(|_| {
                stepped.next_u64();
            });
            assert_eq!(jump(Xoshiro::new(seed), k), stepped, "seed {seed}, {k} draws");
        }
    }
}

/// The sizes and piece lengths tried: empty, one value, a piece's edges, several windows.
fn shapes() -> Vec<(usize, usize)> {
    let mut shapes: Vec<(usize, usize)> = [0, 1, 2, 3, 16, 17, 100].iter().map(|&n| (n, 1)).collect();
    for n in [1, 5, 999, 1000, 1001, 40_000] {
        shapes.extend([(n, 7), (n, 1000)]);
    }
    shapes
}

fn int_reference(family: DataFamily, n: usize, seed: u64, piece: usize) -> Vec<Vec<i32>> {
    reference::int_pieces(family, n, seed).expect("an integer family").with_piece(piece).collect()
}

#[test]
fn integer_families_are_the_models_piece_for_piece() {
    for family in [DataFamily::SmallInts, DataFamily::ManyTies, DataFamily::FullRangeI32] {
        for (n, piece) in shapes() {
            for seed in [3u64, 0x5eed] {
                let ours: Vec<Vec<i32>> = int_pieces(family, n, seed, piece).expect("made side by side").collect();
                assert_eq!(ours, int_reference(family, n, seed, piece), "{} n={n} piece={piece}", family.name());
            }
        }
    }
    assert!(int_pieces(DataFamily::Sorted, 10, 1, 4).is_none(), "the sorted families are made whole");
}

#[test]
fn never_all_zeros_is_the_models() {
    // One or two small ints are all zero for some seeds: element 0 becomes 1, as the model's.
    let mut fixed = 0;
    for seed in 0..200u64 {
        for n in [1, 2] {
            let ours: Vec<Vec<i32>> = int_pieces(DataFamily::SmallInts, n, seed, 1).expect("made").collect();
            assert_eq!(ours, int_reference(DataFamily::SmallInts, n, seed, 1), "seed {seed} n={n}");
            fixed += usize::from(n == 1 && ours[0][0] == 1 && Xoshiro::new(seed).below(19) == 9);
        }
    }
    assert!(fixed > 0, "some seed drew an all-zero input");
}

#[test]
fn a_window_with_a_draw_that_might_be_rejected_is_made_again_one_draw_after_another() {
    // Every draw whose low half is under 2^62 counts as one that might be rejected: about one
    // in four, so nearly every window is remade, and the stream goes on from where it left.
    for family in [DataFamily::SmallInts, DataFamily::ManyTies] {
        for (n, piece) in [(1000, 7), (40_000, 1000), (5, 1)] {
            let mut ours = int_pieces(family, n, 9, piece).expect("made");
            ours.suspicious = 1 << 62;
            let ours: Vec<Vec<i32>> = ours.collect();
            assert_eq!(ours, int_reference(family, n, 9, piece), "{} n={n} piece={piece}", family.name());
        }
    }
    // Nothing is remade at the real bound with these seeds: the side-by-side path is the one proven above.
    let draws: Vec<u64> = (0..10_000).scan(Xoshiro::new(3), |r, _| Some(r.next_u64())).collect();
    assert!(draws.iter().all(|&x| i32::of(Draw::Range { lo: -9, bound: 19 }, x, 0).is_some()));
}

#[test]
fn uniform_floats_and_flags_are_the_models_piece_for_piece() {
    for (n, piece) in shapes() {
        for seed in [3u64, 0x5eed] {
            let ours: Vec<Vec<f32>> = uniform_f32_pieces(n, seed, piece).collect();
            let theirs: Vec<Vec<f32>> = reference::uniform_f32_pieces(n, seed).with_piece(piece).collect();
            let bits =
                |v: &[Vec<f32>]| v.iter().map(|p| p.iter().map(|x| x.to_bits()).collect()).collect::<Vec<Vec<u32>>>();
            assert_eq!(bits(&ours), bits(&theirs), "uniform n={n} piece={piece}");
            let ours: Vec<Vec<u8>> = compaction_flag_pieces(n, seed, piece).collect();
            let theirs: Vec<Vec<u8>> = reference::compaction_flag_pieces(n, seed).with_piece(piece).collect();
            assert_eq!(ours, theirs, "flags n={n} piece={piece}");
        }
    }
}

#[test]
fn a_chunk_of_flag_draws_decodes_from_either_start() {
    // Draws with top bits 3, 2, 0 then 3: from a value's first draw, the 3 takes the 2 as its
    // second draw (its top bit 1: 255), then 0 is flag 0, and the last 3 waits for the next chunk.
    let draws = [3u64 << 62, 2 << 62, 0, 3 << 62];
    assert_eq!(decode_flags(&draws, false), (vec![255, 0], true));
    // From a value's second draw: the first 3 completes the previous chunk's value (top bit 1).
    assert_eq!(decode_flags(&draws, true), (vec![255, 1, 0], true));
}
