//! The GPU's clocks, throttle reasons, temperature and power during a run,
//! sampled from `nvidia-smi` by a background thread about once a second.
//! Without `nvidia-smi` (or when it fails) the log says so; that is never an
//! error of the run.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The query fields after the throttle field's name, in the order parsed.
const FIELDS_AFTER: &str = "temperature.gpu,power.draw";
/// Current drivers name the throttle bitmask `clocks_event_reasons.active`;
/// older ones only `clocks_throttle_reasons.active`. The first that works is used.
const THROTTLE_FIELDS: [&str; 2] = ["clocks_event_reasons.active", "clocks_throttle_reasons.active"];
/// Time between samples.
const PERIOD: Duration = Duration::from_secs(1);

/// The clock-event (throttle) reason bits of NVML, in words.
const REASONS: [(u64, &str); 9] = [
    (0x1, "GPU idle"),
    (0x2, "applications clocks setting"),
    (0x4, "software power cap"),
    (0x8, "hardware slowdown"),
    (0x10, "sync boost"),
    (0x20, "software thermal slowdown"),
    (0x40, "hardware thermal slowdown"),
    (0x80, "hardware power brake slowdown"),
    (0x100, "display clock setting"),
];

/// One reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockSample {
    /// Seconds since the monitor started.
    pub at_s: f64,
    /// SM clock, MHz.
    pub sm_mhz: Option<u32>,
    /// Memory clock, MHz.
    pub mem_mhz: Option<u32>,
    /// Active clock-event (throttle) reason bitmask.
    pub reasons: Option<u64>,
    /// GPU temperature, degrees C.
    pub temperature_c: Option<f64>,
    /// Board power, W.
    pub power_w: Option<f64>,
}

/// Everything sampled during a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockLog {
    /// Why there are no samples (no nvidia-smi, a failed query), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// The throttle field the queries used.
    #[serde(default)]
    pub throttle_field: String,
    /// The readings, in time order.
    #[serde(default)]
    pub samples: Vec<ClockSample>,
}

/// The words of every bit set in `mask` (unknown bits as hex).
pub fn decode_reasons(mask: u64) -> Vec<String> {
    let mut words: Vec<String> =
        REASONS.iter().filter(|(bit, _)| mask & bit != 0).map(|(_, w)| w.to_string()).collect();
    let unknown = REASONS.iter().fold(mask, |m, (bit, _)| m & !bit);
    if unknown != 0 {
        words.push(format!("unknown bits {unknown:#x}"));
    }
    words
}

fn number<T: std::str::FromStr>(field: &str) -> Option<T> {
    field.trim().parse().ok()
}

/// Parses the first line of `nvidia-smi --query-gpu=clocks.sm,clocks.mem,<throttle>,temperature.gpu,power.draw
/// --format=csv,noheader,nounits` (the GPU the query named); `[N/A]` fields become `None`.
pub fn parse_line(line: &str, at_s: f64) -> Option<ClockSample> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let [sm, mem, reasons, temperature, power] = fields.as_slice() else { return None };
    let reasons = reasons.strip_prefix("0x").and_then(|hex| u64::from_str_radix(hex, 16).ok());
    Some(ClockSample {
        at_s,
        sm_mhz: number(sm),
        mem_mhz: number(mem),
        reasons,
        temperature_c: number(temperature),
        power_w: number(power),
    })
}

/// One query of GPU `index` with `throttle_field`: the sample, or why not.
fn query(index: u32, throttle_field: &str, at_s: f64) -> Result<ClockSample, String> {
    let fields = format!("--query-gpu=clocks.sm,clocks.mem,{throttle_field},{FIELDS_AFTER}");
    let output = std::process::Command::new("nvidia-smi")
        .args([fields.as_str(), "--format=csv,noheader,nounits", "-i", &index.to_string()])
        .output()
        .map_err(|e| format!("nvidia-smi could not be run ({e})"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!("nvidia-smi exited with {}: {}", output.status, text.trim()));
    }
    let line = text.lines().next().unwrap_or_default();
    parse_line(line, at_s).ok_or_else(|| format!("unreadable nvidia-smi line {line:?}"))
}

/// A running monitor: [`ClockMonitor::start`], then [`ClockMonitor::finish`].
pub struct ClockMonitor {
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<ClockLog>>,
    thread: Option<JoinHandle<()>>,
}

impl ClockMonitor {
    /// Starts sampling nvidia-smi's GPU `index` (the device the run opened)
    /// every [`PERIOD`]: the first query settles the throttle field's name;
    /// if none works the log records why and the thread ends.
    pub fn start(index: u32) -> ClockMonitor {
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(ClockLog::default()));
        let (thread_stop, thread_log) = (stop.clone(), log.clone());
        let thread = std::thread::Builder::new()
            .name("clock-monitor".into())
            .spawn(move || sample_until_stopped(index, &thread_stop, &thread_log))
            .ok();
        if thread.is_none() {
            if let Ok(mut l) = log.lock() {
                l.unavailable = Some("the sampling thread could not be started".into());
            }
        }
        ClockMonitor { stop, log, thread }
    }

    /// Takes one last sample's worth of time, stops the thread and returns the log.
    pub fn finish(mut self) -> ClockLog {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

fn sample_until_stopped(index: u32, stop: &AtomicBool, log: &Mutex<ClockLog>) {
    let started = Instant::now();
    let mut field = None;
    let mut errors = Vec::new();
    for candidate in THROTTLE_FIELDS {
        match query(index, candidate, 0.0) {
            Ok(sample) => {
                field = Some(candidate);
                if let Ok(mut l) = log.lock() {
                    l.throttle_field = candidate.to_string();
                    l.samples.push(sample);
                }
                break;
            }
            Err(e) => errors.push(format!("{candidate}: {e}")),
        }
    }
    let Some(field) = field else {
        if let Ok(mut l) = log.lock() {
            l.unavailable = Some(errors.join("; "));
        }
        return;
    };
    let mut next = started + PERIOD;
    while !stop.load(Ordering::Relaxed) {
        // Short sleeps, so that finishing waits at most about 50 ms.
        if Instant::now() < next {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        next += PERIOD;
        if let Ok(sample) = query(index, field, started.elapsed().as_secs_f64()) {
            if let Ok(mut l) = log.lock() {
                l.samples.push(sample);
            }
        }
    }
}

/// The report's summary lines of `log`: SM and memory clock ranges,
/// temperature and power maxima, and every throttle reason seen (decoded).
pub fn summary(log: &ClockLog) -> Vec<String> {
    if let Some(why) = &log.unavailable {
        return vec![format!("Clocks during the run: unavailable ({why}).")];
    }
    if log.samples.is_empty() {
        return vec!["Clocks during the run: not recorded (receipt predates clock sampling).".into()];
    }
    let range = |values: Vec<f64>, unit: &str| {
        let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        if values.is_empty() {
            "n/a".to_string()
        } else {
            format!("{lo:.0}-{hi:.0} {unit}")
        }
    };
    let s = &log.samples;
    let mut lines = vec![format!(
        "Clocks during the run ({} samples over {:.0} s): SM {}, memory {}, temperature {}, power {}.",
        s.len(),
        s.last().map(|x| x.at_s).unwrap_or(0.0),
        range(s.iter().filter_map(|x| x.sm_mhz.map(f64::from)).collect(), "MHz"),
        range(s.iter().filter_map(|x| x.mem_mhz.map(f64::from)).collect(), "MHz"),
        range(s.iter().filter_map(|x| x.temperature_c).collect(), "C"),
        range(s.iter().filter_map(|x| x.power_w).collect(), "W"),
    )];
    // "GPU idle" between entries is expected, not a slowdown of a timed call.
    let mask = s.iter().filter_map(|x| x.reasons).fold(0, |m, r| m | r) & !0x1;
    let seen = decode_reasons(mask);
    lines.push(if seen.is_empty() {
        "No clock-limiting reason was active in any sample (GPU idle aside).".into()
    } else {
        format!("**Clock-limiting reasons seen:** {}.", seen.join(", "))
    });
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_line_parses_and_not_available_fields_are_none() {
        let s = parse_line("1980, 3201, 0x0000000000000004, 51, 402.17", 2.0).unwrap();
        assert_eq!((s.sm_mhz, s.mem_mhz, s.reasons), (Some(1980), Some(3201), Some(4)));
        assert_eq!((s.temperature_c, s.power_w), (Some(51.0), Some(402.17)));
        let na = parse_line("1980, 3201, [N/A], 51, [N/A]", 0.0).unwrap();
        assert_eq!((na.reasons, na.power_w), (None, None));
        assert!(parse_line("Field is not valid", 0.0).is_none());
    }

    #[test]
    fn throttle_bits_decode_to_words() {
        assert_eq!(decode_reasons(0x44), ["software power cap", "hardware thermal slowdown"]);
        assert_eq!(decode_reasons(0x1000), ["unknown bits 0x1000"]);
        assert!(decode_reasons(0).is_empty());
    }

    #[test]
    fn the_summary_gives_ranges_and_reasons_or_says_unavailable() {
        let sample = |at_s, sm, reasons| ClockSample {
            at_s,
            sm_mhz: Some(sm),
            mem_mhz: Some(3201),
            reasons: Some(reasons),
            temperature_c: Some(50.0),
            power_w: Some(400.0),
        };
        let log = ClockLog {
            unavailable: None,
            throttle_field: THROTTLE_FIELDS[0].into(),
            samples: vec![sample(0.0, 1980, 0x1), sample(1.0, 1755, 0x4)],
        };
        let lines = summary(&log);
        assert!(lines[0].contains("SM 1755-1980 MHz"), "{lines:?}");
        assert!(lines[1].contains("software power cap") && !lines[1].contains("idle"), "{lines:?}");
        let absent = ClockLog { unavailable: Some("nvidia-smi could not be run".into()), ..Default::default() };
        assert!(summary(&absent)[0].contains("unavailable (nvidia-smi could not be run)"));
        assert!(summary(&ClockLog::default())[0].contains("not recorded"));
    }
}
