//! What `check` does to a user's kernel beyond comparing one run with the
//! model, written out for a runner that calls user code itself (the Python
//! package's `primlab.check`): the two poisons, in run order, as element
//! patterns per type, and the schedule perturbation (the holding kernel's
//! PTX, its launch shape and each case's share of SMs). The runner applies
//! them; it restates none of them, so a change here reaches it unchanged.
//!
//! `harness cases defences` prints [`Defences`] as JSON.

use super::perturb::{self, Perturbation};
use super::poison::{ElementKind, Poison};
use super::worker::PERTURB_MAX_LEN;
use serde::Serialize;

/// The format tag of the JSON (a reader refuses other tags).
pub const FORMAT: &str = "primlab-defences/1";

/// One run's poison: each element type's pattern, little-endian hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoisonPatterns {
    /// `first` or `second`: the run it fills outputs for.
    pub run: &'static str,
    /// Integers, flags and records (one byte, repeated).
    pub bytes: String,
    /// bfloat16 outputs.
    pub bfloat16: String,
    /// float16 outputs.
    pub float16: String,
    /// float32 outputs.
    pub float32: String,
    /// float64 outputs.
    pub float64: String,
}

/// One case's perturbation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CaseShare {
    /// Blocks of the holding kernel (one per SM).
    pub sms_held: u32,
    /// Nanoseconds between two odd blocks' releases.
    pub stagger_ns: u64,
}

/// The holding kernel and how each case uses it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PerturbationPlan {
    /// The kernel's name in `ptx`.
    pub kernel: &'static str,
    /// Its PTX for the asked architecture. Parameters: the release flag's
    /// device address (a 32-bit word the runner sets to 1 once the case ran),
    /// the cap in ns and the stagger in ns (both 64-bit).
    pub ptx: String,
    /// Threads per block.
    pub threads: u32,
    /// Every block's dynamic shared memory: the device's opt-in maximum per block
    /// (the runner reads it from its device), so that one block fills an SM.
    pub shared_memory: &'static str,
    /// The cap passed as the kernel's second parameter.
    pub hold_cap_ns: u64,
    /// Cases of more elements than this run no perturbed run.
    pub max_len: usize,
    /// Case `i` of the export (in its order) gets `cases[i]`.
    pub cases: Vec<CaseShare>,
}

/// Everything `harness cases defences` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Defences {
    /// [`FORMAT`].
    pub format: &'static str,
    /// The runs' poisons, in run order (the perturbed run uses the first).
    pub poison: Vec<PoisonPatterns>,
    /// The perturbation, when an architecture was named and the kernel compiled.
    pub perturbation: Option<PerturbationPlan>,
    /// Why `perturbation` is null.
    pub perturbation_missing: Option<String>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn patterns(poison: Poison, run: &'static str) -> PoisonPatterns {
    PoisonPatterns {
        run,
        bytes: hex(&poison.pattern(ElementKind::Bytes)),
        bfloat16: hex(&poison.pattern(ElementKind::BF16)),
        float16: hex(&poison.pattern(ElementKind::F16)),
        float32: hex(&poison.pattern(ElementKind::F32)),
        float64: hex(&poison.pattern(ElementKind::F64)),
    }
}

/// The defences for `cases` cases on a GPU of `sm_count` SMs, with the
/// holding kernel compiled for `arch` (none when `arch` is None; an arch
/// NVRTC refuses, or no NVRTC, leaves the reason in `perturbation_missing`).
pub fn defences(arch: Option<&str>, sm_count: u32, cases: usize) -> Defences {
    let poison = vec![patterns(Poison::First, "first"), patterns(Poison::Second, "second")];
    let compiled = match arch {
        None => Err("no --arch was given (the holding kernel is compiled for the device's architecture)".to_string()),
        Some(arch) => perturb::ptx(arch).map_err(|e| format!("the holding kernel did not compile for {arch}: {e}")),
    };
    let (perturbation, perturbation_missing) = match compiled {
        Ok(ptx) => (
            Some(PerturbationPlan {
                kernel: perturb::KERNEL,
                ptx,
                threads: perturb::THREADS,
                shared_memory: "max_shared_memory_per_block_optin",
                hold_cap_ns: perturb::HOLD_CAP_NS,
                max_len: PERTURB_MAX_LEN,
                cases: (0..cases)
                    .map(|i| Perturbation::of_case(i, sm_count))
                    .map(|p| CaseShare { sms_held: p.sms_held, stagger_ns: p.stagger_ns })
                    .collect(),
            }),
            None,
        ),
        Err(reason) => (None, Some(reason)),
    };
    Defences { format: FORMAT, poison, perturbation, perturbation_missing }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisons_are_the_checks_own_in_run_order() {
        let d = defences(None, 132, 0);
        assert_eq!(d.poison[0].run, "first");
        assert_eq!(d.poison[0].bytes, "a5");
        assert_eq!(d.poison[1].bytes, "5a");
        // Little-endian hex of the signalling NaNs: 0x7fa5a5a5 and 0xffb55a5a.
        assert_eq!(d.poison[0].float32, "a5a5a57f");
        assert_eq!(d.poison[1].float32, "5a5ab5ff");
        assert_eq!(d.poison[0].bfloat16, "a57f");
        assert_eq!(d.poison[0].float64.len(), 16);
    }

    #[test]
    fn without_an_architecture_the_perturbation_says_why() {
        let d = defences(None, 132, 5);
        assert!(d.perturbation.is_none());
        assert!(d.perturbation_missing.as_deref().unwrap_or("").contains("--arch"), "{d:?}");
    }

    #[test]
    fn every_case_gets_the_checks_perturbation() {
        // NVRTC is installed for the tests (make verify); the PTX is the
        // kernel `check` launches, and case i's share is Perturbation::of_case(i).
        let d = defences(Some("compute_90"), 132, 13);
        let plan = d.perturbation.unwrap_or_else(|| panic!("no plan: {:?}", d.perturbation_missing));
        assert!(plan.ptx.contains(".entry primlab_hold_sms"), "the PTX defines the kernel");
        assert_eq!(plan.cases.len(), 13);
        for (i, share) in plan.cases.iter().enumerate() {
            let p = Perturbation::of_case(i, 132);
            assert_eq!((share.sms_held, share.stagger_ns), (p.sms_held, p.stagger_ns));
        }
        assert_eq!(plan.max_len, PERTURB_MAX_LEN);
    }

    #[test]
    fn an_architecture_nvrtc_refuses_is_named() {
        let d = defences(Some("compute_1"), 132, 1);
        assert!(d.perturbation.is_none());
        assert!(d.perturbation_missing.as_deref().unwrap_or("").contains("compute_1"), "{d:?}");
    }
}
