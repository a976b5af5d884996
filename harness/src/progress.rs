//! Progress bars for long runs: a live bar on a terminal, periodic plain
//! lines otherwise (CI logs, `$OUT` files on the GPU machine).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A progress bar over `total` steps with a message per step.
pub struct Progress {
    bar: ProgressBar,
    plain: bool,
    label: String,
    total: u64,
    last_line: std::sync::Mutex<Instant>,
}

impl Progress {
    /// Starts a bar labelled `label` (e.g. "sweep") over `total` steps.
    pub fn new(label: &str, total: u64) -> Progress {
        let plain = !std::io::stderr().is_terminal();
        let bar = if plain {
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden())
        } else {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("{prefix:>9} [{bar:32}] {pos}/{len} {elapsed_precise} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_prefix(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        };
        Progress {
            bar,
            plain,
            label: label.to_string(),
            total,
            last_line: std::sync::Mutex::new(Instant::now() - Duration::from_secs(60)),
        }
    }

    /// Marks one step done; `message` names what just finished.
    pub fn step(&self, message: &str) {
        self.bar.inc(1);
        if self.plain {
            let position = self.bar.position();
            let mut last = self.last_line.lock().unwrap_or_else(|p| p.into_inner());
            if last.elapsed() >= Duration::from_secs(5) || position == self.total {
                *last = Instant::now();
                // "done": the message names what just finished, not what runs now.
                eprintln!("[{}] {position}/{} done: {message}", self.label, self.total);
            }
        } else {
            self.bar.set_message(message.to_string());
        }
    }

    /// What the bar counts (the label its plain lines start with).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Prints a line above the bar (e.g. a failure) without breaking it.
    pub fn println(&self, line: &str) {
        if self.plain {
            eprintln!("{line}");
        } else {
            self.bar.suspend(|| eprintln!("{line}"));
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
