//! A budget of elements that concurrent workers take before making an
//! input and give back when they are done with it, so that the inputs held
//! at once stay within what the host's memory allows.

use std::sync::{Condvar, Mutex};

/// A count of elements that workers take before preparing an input and
/// give back after its cases ran (a request above the whole budget waits
/// for all of it).
pub struct Budget {
    free: Mutex<usize>,
    freed: Condvar,
    total: usize,
}

impl Budget {
    /// A budget of `total` elements.
    pub fn new(total: usize) -> Budget {
        Budget { free: Mutex::new(total), freed: Condvar::new(), total }
    }

    /// Waits for `want` elements (at most the total) and returns how many it took.
    pub fn take(&self, want: usize) -> usize {
        let want = want.min(self.total);
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free < want {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= want;
        want
    }

    /// Gives back what [`Budget::take`] took.
    pub fn give(&self, taken: usize) {
        *self.free.lock().unwrap_or_else(|p| p.into_inner()) += taken;
        self.freed.notify_all();
    }
}
