//! k GPUs driven by k threads, one per GPU, joined in one NCCL communicator.
//!
//! Rank r's thread owns `kernels::Gpu::open(GpuOptions { ordinal: r, .. })`,
//! the helper kernels and its [`Communicator`] (on the Gpu's stream), for the
//! life of the [`Cluster`]. Work is sent as a task that every rank runs (the
//! same code, so the ranks' collectives match one for one); the results come
//! back in rank order.
//!
//! **No rank may leave its peers waiting.** A collective waits for every
//! rank, forever. So a task agrees before its collectives
//! ([`RankEnv::agree_on`]: a host barrier that also tells every rank whether
//! any rank's setup failed, so that all skip the collective together), and
//! waits for the GPU by polling ([`RankEnv::wait`]) so that a failure on a
//! peer (which marks the cluster broken) or a timeout ends the wait with an
//! error instead of a hang. A broken cluster answers every later task with
//! the first failure; dropping it aborts the communicators (`ncclCommAbort`).

use super::helper_kernels::Helpers;
use super::nccl::{self, Communicator};
use crate::receipts::MachineInfo;
use anyhow::{anyhow, Context, Result};
use serde::Serialize;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a rank waits at a barrier or for its GPU before it gives up.
pub const WAIT_LIMIT: Duration = Duration::from_secs(120);

/// One GPU of a cluster, for reports and receipts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceSummary {
    /// Ordinal (= rank).
    pub ordinal: usize,
    /// Marketing name.
    pub name: String,
    /// `sm_XY`.
    pub arch: String,
    /// SMs.
    pub sm_count: i32,
    /// Device memory in bytes.
    pub memory_bytes: u64,
}

impl DeviceSummary {
    /// The summary of an open GPU.
    pub fn of(gpu: &kernels::Gpu) -> DeviceSummary {
        let info = gpu.info();
        DeviceSummary {
            ordinal: info.ordinal,
            name: info.name.clone(),
            arch: info.arch.clone(),
            sm_count: info.sm_count,
            memory_bytes: info.total_memory as u64,
        }
    }
}

/// Every rank reached the barrier, but at least one reported a failure: all
/// ranks skipped the collective together, so the communicator stays usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .failures.join("; "))]
pub struct AgreedFailure {
    /// `rank r: reason`, one per failing rank.
    pub failures: Vec<String>,
}

#[derive(Default)]
struct RendezvousState {
    arrived: usize,
    generation: u64,
    round: Vec<String>,
    last_round: Vec<String>,
    broken: Option<String>,
}

/// A reusable host barrier of `world` ranks that carries failures, and the
/// cluster's "broken" flag.
pub struct Rendezvous {
    world: usize,
    limit: Duration,
    state: Mutex<RendezvousState>,
    changed: Condvar,
}

impl Rendezvous {
    /// A barrier of `world` ranks whose waits give up after `limit`.
    pub fn new(world: usize, limit: Duration) -> Rendezvous {
        Rendezvous { world, limit, state: Mutex::new(RendezvousState::default()), changed: Condvar::new() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RendezvousState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Why the cluster is broken, if it is.
    pub fn broken(&self) -> Option<String> {
        self.lock().broken.clone()
    }

    /// Marks the cluster broken (the first reason is kept) and wakes every waiter.
    pub fn fail(&self, reason: String) {
        let mut state = self.lock();
        if state.broken.is_none() {
            state.broken = Some(reason);
        }
        drop(state);
        self.changed.notify_all();
    }

    /// Rank `rank` arrives with its outcome and waits for the others. Ok if
    /// every rank arrived with Ok; [`AgreedFailure`] (inside the error) if
    /// some arrived with an error; another error if the cluster broke or the
    /// wait ran past the limit (then the cluster is marked broken).
    pub fn agree(&self, rank: usize, outcome: Result<(), String>) -> Result<()> {
        let mut state = self.lock();
        if let Some(reason) = &state.broken {
            return Err(anyhow!("cluster broken earlier: {reason}"));
        }
        if let Err(e) = outcome {
            state.round.push(format!("rank {rank}: {e}"));
        }
        state.arrived += 1;
        if state.arrived == self.world {
            state.arrived = 0;
            state.generation += 1;
            state.last_round = std::mem::take(&mut state.round);
            let failures = state.last_round.clone();
            drop(state);
            self.changed.notify_all();
            return if failures.is_empty() { Ok(()) } else { Err(AgreedFailure { failures }.into()) };
        }
        let generation = state.generation;
        let started = Instant::now();
        loop {
            let (next, _) =
                self.changed.wait_timeout(state, Duration::from_millis(200)).unwrap_or_else(|p| p.into_inner());
            state = next;
            if state.generation != generation {
                let failures = state.last_round.clone();
                return if failures.is_empty() { Ok(()) } else { Err(AgreedFailure { failures }.into()) };
            }
            if let Some(reason) = &state.broken {
                return Err(anyhow!("cluster broken while rank {rank} waited at a barrier: {reason}"));
            }
            if started.elapsed() > self.limit {
                let reason = format!(
                    "rank {rank} waited {:?} at a barrier for {} other rank(s)",
                    self.limit,
                    self.world - state.arrived
                );
                state.broken.get_or_insert(reason.clone());
                drop(state);
                self.changed.notify_all();
                return Err(anyhow!(reason));
            }
        }
    }
}

/// What a rank's task sees: its GPU, helpers, communicator and the barrier.
pub struct RankEnv {
    /// This rank (= GPU ordinal).
    pub rank: usize,
    /// Ranks in the cluster.
    pub world: usize,
    /// The rank's communicator. Declared before `gpu`: dropped (aborted) first.
    pub comm: Communicator,
    /// The multi-GPU helper kernels, loaded in this GPU's context.
    pub helpers: Helpers,
    /// The rank's GPU.
    pub gpu: kernels::Gpu,
    rendezvous: Arc<Rendezvous>,
}

impl RankEnv {
    /// The barrier every collective needs in front of it: passes this
    /// rank's setup outcome to every rank and returns its value only if
    /// every rank's setup succeeded ([`AgreedFailure`] otherwise, on all
    /// ranks alike).
    pub fn agree_on<T>(&self, setup: Result<T>) -> Result<T> {
        let outcome = setup.as_ref().map(|_| ()).map_err(|e| format!("{e:#}"));
        self.rendezvous.agree(self.rank, outcome)?;
        setup
    }

    /// A barrier with nothing to report (to line the ranks up before timing).
    pub fn barrier(&self) -> Result<()> {
        self.rendezvous.agree(self.rank, Ok(()))
    }

    /// Waits until everything enqueued on this rank's stream so far has
    /// completed, polling, so that a peer's failure or [`WAIT_LIMIT`] ends
    /// the wait with an error rather than a hang.
    pub fn wait(&self, what: &str) -> Result<()> {
        let event = self.gpu.stream().record_event(None).with_context(|| format!("{what}: recording an event"))?;
        let started = Instant::now();
        let mut polls = 0u32;
        loop {
            match event.try_is_complete() {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return Err(anyhow!("{what} on GPU {}: {e}", self.rank)),
            }
            if let Some(reason) = self.rendezvous.broken() {
                return Err(anyhow!("{what} on GPU {}: stopped waiting, the cluster broke: {reason}", self.rank));
            }
            if started.elapsed() > WAIT_LIMIT {
                return Err(anyhow!(
                    "{what} on GPU {}: not complete after {WAIT_LIMIT:?} (a peer never joined the collective?)",
                    self.rank
                ));
            }
            polls += 1;
            if polls < 2_000 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }
}

type Job = Box<dyn FnOnce(&RankEnv) + Send>;

enum Startup {
    Opened { rank: usize, result: Result<Box<(DeviceSummary, Option<MachineInfo>)>, String> },
    Joined { rank: usize, result: Result<(), String> },
}

enum Go {
    Join(cudarc::nccl::Id),
    Abort,
}

/// A running cluster of `world` GPUs (ordinals `0..world`).
pub struct Cluster {
    world: usize,
    jobs: Vec<Sender<Job>>,
    exited: Receiver<usize>,
    rendezvous: Arc<Rendezvous>,
    devices: Vec<DeviceSummary>,
    machine: MachineInfo,
    nccl: nccl::NcclInfo,
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

impl Cluster {
    /// Opens GPUs `0..world` (one after another, so that the first compiles
    /// the kernels into the on-disk cache and the rest read it), then joins
    /// them in one NCCL communicator. NCCL must be loadable ([`nccl::probe`]).
    pub fn start(world: usize, mutant: u32) -> Result<Cluster> {
        if world == 0 {
            return Err(anyhow!("a cluster needs at least one GPU"));
        }
        let info = nccl::probe()?;
        let rendezvous = Arc::new(Rendezvous::new(world, WAIT_LIMIT));
        let (startup_tx, startup_rx) = channel::<Startup>();
        let (exited_tx, exited) = channel::<usize>();
        let mut jobs = Vec::with_capacity(world);
        let mut go = Vec::with_capacity(world);
        let mut devices = Vec::with_capacity(world);
        let mut machine = MachineInfo::default();
        let abort_all = |go: &Vec<Sender<Go>>| go.iter().for_each(|g| drop(g.send(Go::Abort)));
        for rank in 0..world {
            let (job_tx, job_rx) = channel::<Job>();
            let (go_tx, go_rx) = channel::<Go>();
            let (startup, exited, rendezvous) = (startup_tx.clone(), exited_tx.clone(), rendezvous.clone());
            std::thread::Builder::new()
                .name(format!("gpu{rank}"))
                .spawn(move || {
                    rank_main(rank, world, mutant, rendezvous, startup, go_rx, job_rx);
                    let _ = exited.send(rank);
                })
                .context("spawning a GPU thread")?;
            jobs.push(job_tx);
            go.push(go_tx);
            match startup_rx.recv_timeout(WAIT_LIMIT) {
                Ok(Startup::Opened { result: Ok(opened), .. }) => {
                    let (device, rank_machine) = *opened;
                    devices.push(device);
                    if let Some(m) = rank_machine {
                        machine = m;
                    }
                }
                Ok(Startup::Opened { rank, result: Err(e) }) => {
                    abort_all(&go);
                    return Err(anyhow!("GPU {rank}: {e}"));
                }
                Ok(Startup::Joined { .. }) => unreachable!("no rank joins before Go"),
                Err(_) => {
                    abort_all(&go);
                    return Err(anyhow!("GPU {rank} did not open within {WAIT_LIMIT:?}"));
                }
            }
        }
        let id = match nccl::new_id() {
            Ok(id) => id,
            Err(e) => {
                abort_all(&go);
                return Err(e);
            }
        };
        go.iter().for_each(|g| drop(g.send(Go::Join(id))));
        let mut failures = Vec::new();
        let deadline = Instant::now() + WAIT_LIMIT;
        for _ in 0..world {
            match startup_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Startup::Joined { result: Ok(()), .. }) => {}
                Ok(Startup::Joined { rank, result: Err(e) }) => failures.push(format!("GPU {rank}: {e}")),
                Ok(Startup::Opened { .. }) => unreachable!("every rank opened already"),
                Err(_) => {
                    failures.push(format!("ncclCommInitRank did not complete on every GPU within {WAIT_LIMIT:?}"));
                    break;
                }
            }
        }
        let cluster = Cluster { world, jobs, exited, rendezvous, devices, machine, nccl: info };
        if !failures.is_empty() {
            let reason = failures.join("; ");
            cluster.rendezvous.fail(reason.clone());
            return Err(anyhow!("joining {world} GPU(s) in one NCCL communicator failed: {reason}"));
        }
        Ok(cluster)
    }

    /// GPUs in the cluster.
    pub fn world(&self) -> usize {
        self.world
    }

    /// The GPUs, in rank order.
    pub fn devices(&self) -> &[DeviceSummary] {
        &self.devices
    }

    /// GPU 0's machine facts (for receipts).
    pub fn machine(&self) -> &MachineInfo {
        &self.machine
    }

    /// The NCCL that was loaded.
    pub fn nccl(&self) -> &nccl::NcclInfo {
        &self.nccl
    }

    /// Why the cluster is broken, if it is.
    pub fn broken(&self) -> Option<String> {
        self.rendezvous.broken()
    }

    /// Runs `task` on every rank (each on its own thread and GPU) and
    /// returns the results in rank order, or the failures (an
    /// [`AgreedFailure`] leaves the cluster usable; any other failure, or a
    /// panic, breaks it).
    pub fn run<T, F>(&self, task: F) -> Result<Vec<T>>
    where
        T: Send + 'static,
        F: Fn(&RankEnv) -> Result<T> + Send + Sync + 'static,
    {
        if let Some(reason) = self.broken() {
            return Err(anyhow!("the {}-GPU cluster broke earlier: {reason}", self.world));
        }
        let task = Arc::new(task);
        let (reply_tx, reply_rx) = channel::<(usize, Result<T, anyhow::Error>)>();
        for (rank, jobs) in self.jobs.iter().enumerate() {
            let (task, reply) = (task.clone(), reply_tx.clone());
            let job: Job = Box::new(move |env: &RankEnv| {
                let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| task(env)))
                    .unwrap_or_else(|p| Err(anyhow!("GPU {} panicked: {}", env.rank, panic_text(p.as_ref()))));
                if let Err(e) = &outcome {
                    if e.downcast_ref::<AgreedFailure>().is_none() {
                        env.rendezvous.fail(format!("GPU {}: {e:#}", env.rank));
                    }
                }
                let _ = reply.send((env.rank, outcome));
            });
            if jobs.send(job).is_err() {
                self.rendezvous.fail(format!("GPU {rank}'s thread has exited"));
            }
        }
        drop(reply_tx);
        let mut results: Vec<Option<Result<T>>> = (0..self.world).map(|_| None).collect();
        let deadline = Instant::now() + WAIT_LIMIT + Duration::from_secs(30);
        for _ in 0..self.world {
            match reply_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok((rank, result)) => results[rank] = Some(result),
                Err(RecvTimeoutError::Timeout) => {
                    self.rendezvous.fail("a GPU thread did not answer in time".into());
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let mut values = Vec::with_capacity(self.world);
        let mut agreed = Vec::new();
        let mut other = Vec::new();
        for (rank, result) in results.into_iter().enumerate() {
            match result {
                Some(Ok(v)) => values.push(v),
                Some(Err(e)) => match e.downcast_ref::<AgreedFailure>() {
                    Some(a) => agreed = a.failures.clone(),
                    None => other.push(format!("GPU {rank}: {e:#}")),
                },
                None => other.push(format!("GPU {rank}: no answer")),
            }
        }
        if !other.is_empty() {
            return Err(anyhow!(other.join("; ")));
        }
        if !agreed.is_empty() {
            return Err(AgreedFailure { failures: agreed }.into());
        }
        Ok(values)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Closing the job channels ends every rank's loop; each drops its
        // communicator (ncclCommAbort) and its GPU. A rank stuck in a driver
        // call is left behind (the process exit ends it).
        self.jobs.clear();
        let deadline = Instant::now() + Duration::from_secs(20);
        for _ in 0..self.world {
            if self.exited.recv_timeout(deadline.saturating_duration_since(Instant::now())).is_err() {
                break;
            }
        }
    }
}

fn rank_main(
    rank: usize,
    world: usize,
    mutant: u32,
    rendezvous: Arc<Rendezvous>,
    startup: Sender<Startup>,
    go: Receiver<Go>,
    jobs: Receiver<Job>,
) {
    let opened = std::panic::catch_unwind(|| -> Result<(kernels::Gpu, Helpers)> {
        let gpu = kernels::Gpu::open(kernels::GpuOptions { ordinal: rank, mutant })?;
        gpu.module(kernels::KernelFamily::Reduce)?;
        gpu.module(kernels::KernelFamily::Scan)?;
        let helpers = Helpers::load(&gpu)?;
        Ok((gpu, helpers))
    })
    .unwrap_or_else(|p| Err(anyhow!("panicked while opening: {}", panic_text(p.as_ref()))));
    let (gpu, helpers) = match opened {
        Ok(v) => v,
        Err(e) => {
            let _ = startup.send(Startup::Opened { rank, result: Err(format!("{e:#}")) });
            return;
        }
    };
    let machine = (rank == 0).then(|| MachineInfo::collect(&gpu));
    let _ = startup.send(Startup::Opened { rank, result: Ok(Box::new((DeviceSummary::of(&gpu), machine))) });
    let id = match go.recv() {
        Ok(Go::Join(id)) => id,
        Ok(Go::Abort) | Err(_) => return,
    };
    let comm = match Communicator::join(&gpu, rank, world, id) {
        Ok(c) => c,
        Err(e) => {
            let _ = startup.send(Startup::Joined { rank, result: Err(format!("{e:#}")) });
            return;
        }
    };
    let _ = startup.send(Startup::Joined { rank, result: Ok(()) });
    let env = RankEnv { rank, world, comm, helpers, gpu, rendezvous };
    while let Ok(job) = jobs.recv() {
        if let Err(e) = env.gpu.context().bind_to_thread() {
            env.rendezvous.fail(format!("GPU {rank}: binding its context: {e}"));
        }
        job(&env);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_barrier_tells_every_rank_about_any_failure() {
        let r = Arc::new(Rendezvous::new(3, Duration::from_secs(10)));
        let outcomes: Vec<Result<(), String>> = vec![Ok(()), Err("out of memory".into()), Ok(())];
        let handles: Vec<_> = outcomes
            .into_iter()
            .enumerate()
            .map(|(rank, o)| {
                let r = r.clone();
                std::thread::spawn(move || r.agree(rank, o))
            })
            .collect();
        for h in handles {
            let e = h.join().unwrap().unwrap_err();
            let agreed = e.downcast_ref::<AgreedFailure>().expect("an agreed failure");
            assert_eq!(agreed.failures, vec!["rank 1: out of memory".to_string()]);
        }
        assert_eq!(r.broken(), None, "an agreed failure leaves the cluster usable");
        // The next round is clean again.
        let handles: Vec<_> = (0..3)
            .map(|rank| {
                let r = r.clone();
                std::thread::spawn(move || r.agree(rank, Ok(())))
            })
            .collect();
        assert!(handles.into_iter().all(|h| h.join().unwrap().is_ok()));
    }

    #[test]
    fn a_broken_cluster_releases_waiters_and_a_missing_rank_times_out() {
        let r = Arc::new(Rendezvous::new(2, Duration::from_secs(30)));
        let waiter = {
            let r = r.clone();
            std::thread::spawn(move || r.agree(0, Ok(())))
        };
        std::thread::sleep(Duration::from_millis(50));
        r.fail("GPU 1: launch failed".into());
        let e = waiter.join().unwrap().unwrap_err();
        assert!(e.to_string().contains("GPU 1: launch failed"), "{e}");
        assert!(r.agree(1, Ok(())).unwrap_err().to_string().contains("broken earlier"));

        let lonely = Rendezvous::new(2, Duration::from_millis(300));
        let e = lonely.agree(0, Ok(())).unwrap_err();
        assert!(e.to_string().contains("waited") && e.to_string().contains("1 other rank"), "{e}");
        assert!(lonely.broken().is_some());
    }

    #[test]
    fn agreed_failures_read_as_one_line() {
        let a = AgreedFailure { failures: vec!["rank 0: a".into(), "rank 2: b".into()] };
        assert_eq!(a.to_string(), "rank 0: a; rank 2: b");
    }
}
