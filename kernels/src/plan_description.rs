//! What one `enqueue` of a plan puts on the stream: its memsets and kernel
//! launches (name, grid, block, dynamic shared bytes) in order, and an
//! estimate of the DRAM bytes they move. Every plan's `describe()` builds it
//! from the fields its `enqueue` reads (the schedule chosen when the plan was
//! made), so bench records and reports name the launches that were timed
//! instead of restating them by hand.

use std::fmt;

/// One operation an `enqueue` puts on the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamOp {
    /// A memset of `bytes` bytes of the buffer named `what`.
    Memset {
        /// The buffer, in words ("output", "tile flags", ...).
        what: String,
        /// Bytes set.
        bytes: u64,
    },
    /// One kernel launch.
    Launch(KernelLaunch),
}

/// One 1-D kernel launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelLaunch {
    /// The kernel's `extern "C"` name.
    pub kernel: String,
    /// Blocks.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Dynamic shared memory, bytes.
    pub shared_bytes: u32,
}

/// The stream operations of one `enqueue`, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanDescription {
    /// The plan type, e.g. `ReducePlan`.
    pub plan: &'static str,
    /// What one enqueue puts on the stream, in order.
    pub ops: Vec<StreamOp>,
    /// Estimated DRAM bytes one enqueue reads and writes (inputs, outputs
    /// and scratch; the memsets included).
    pub bytes_moved: u64,
}

impl PlanDescription {
    /// An empty description of `plan`.
    pub fn new(plan: &'static str) -> Self {
        PlanDescription { plan, ops: Vec::new(), bytes_moved: 0 }
    }

    /// Appends a memset of `bytes` bytes of `what` (its bytes are counted as
    /// moved).
    pub fn memset(mut self, what: &str, bytes: u64) -> Self {
        self.ops.push(StreamOp::Memset { what: what.to_string(), bytes });
        self.bytes_moved += bytes;
        self
    }

    /// Appends a launch of `kernel` `<<<grid, block, shared_bytes>>>`.
    pub fn launch(mut self, kernel: impl Into<String>, grid: u32, block: u32, shared_bytes: u32) -> Self {
        self.ops.push(StreamOp::Launch(KernelLaunch { kernel: kernel.into(), grid, block, shared_bytes }));
        self
    }

    /// Adds `bytes` to the DRAM estimate.
    pub fn moves(mut self, bytes: u64) -> Self {
        self.bytes_moved += bytes;
        self
    }

    /// The kernel launches, in order.
    pub fn launches(&self) -> impl Iterator<Item = &KernelLaunch> {
        self.ops.iter().filter_map(|op| match op {
            StreamOp::Launch(launch) => Some(launch),
            StreamOp::Memset { .. } => None,
        })
    }

    /// Stream operations (memsets and launches) one enqueue issues.
    pub fn stream_ops(&self) -> u32 {
        self.ops.len() as u32
    }
}

impl fmt::Display for KernelLaunch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} <<<{}, {}", self.kernel, self.grid, self.block)?;
        if self.shared_bytes > 0 {
            write!(f, ", {} B", self.shared_bytes)?;
        }
        write!(f, ">>>")
    }
}

impl fmt::Display for StreamOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamOp::Memset { what, bytes } => write!(f, "memset {bytes} B ({what})"),
            StreamOp::Launch(launch) => launch.fmt(f),
        }
    }
}

/// `one ReducePlan::enqueue: memset 8 B (output) + reduce_block_atomic_i32
/// <<<65536, 256>>>`: the timed region of a bench record.
impl fmt::Display for PlanDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "one {}::enqueue: ", self.plan)?;
        if self.ops.is_empty() {
            return write!(f, "nothing");
        }
        for (i, op) in self.ops.iter().enumerate() {
            if i > 0 {
                write!(f, " + ")?;
            }
            write!(f, "{op}")?;
        }
        if !self.ops.iter().any(|op| matches!(op, StreamOp::Memset { .. })) {
            write!(f, "; no memset")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_memsets_launches_and_shared_bytes_in_order() {
        let d = PlanDescription::new("ReducePlan")
            .memset("output", 8)
            .launch("reduce_block_atomic_i32", 65_536, 256, 0)
            .moves(1 << 30);
        assert_eq!(
            d.to_string(),
            "one ReducePlan::enqueue: memset 8 B (output) + reduce_block_atomic_i32 <<<65536, 256>>>"
        );
        assert_eq!((d.stream_ops(), d.launches().count(), d.bytes_moved), (2, 1, 8 + (1 << 30)));
        let d = PlanDescription::new("SoftmaxPlan").launch("softmax_row_in_registers_small_f32", 3, 256, 1024);
        assert_eq!(
            d.to_string(),
            "one SoftmaxPlan::enqueue: softmax_row_in_registers_small_f32 <<<3, 256, 1024 B>>>; no memset"
        );
        assert_eq!(PlanDescription::new("X").to_string(), "one X::enqueue: nothing");
    }
}
