//! Whole-process measurements: wall time and peak RSS of a child process
//! (VmHWM from the preloaded probe; `wait4`'s `ru_maxrss`, which starts at
//! our own peak, only without it), and the median/min/max summary every
//! reported figure uses.

use super::probe::Probe;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Median, min and max of repeated measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Stat {
    pub fn of(xs: &[f64]) -> Stat {
        let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            return Stat::default();
        }
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Stat {
            median,
            min: v[0],
            max: v[n - 1],
            n,
        }
    }
}

/// One finished child process.
pub struct Run {
    pub wall_s: f64,
    /// User plus system CPU time of the child (less sensitive than wall
    /// time to other work on the machine).
    pub cpu_s: f64,
    pub peak_rss_kib: u64,
    /// `peak_rss_kib` is the process's own VmHWM (else `ru_maxrss`).
    pub rss_own: bool,
    /// (peak heap bytes, allocations), with the heap probe.
    pub heap: Option<(u64, u64)>,
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to completion, capturing its output, and measures it; with
/// `probe`, preloaded (its heap variant when `heap`).
pub fn run(mut cmd: Command, probe: Option<&Probe>, heap: bool) -> std::io::Result<Run> {
    let attached = probe.map(|p| p.attach(&mut cmd, heap));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    // Drain the pipes on threads so a chatty child cannot block on them.
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let (status, rss, cpu_s) = wait4(child.id())?;
    let wall_s = start.elapsed().as_secs_f64();
    let pid = child.id();
    // The pid is reaped; keep std from waiting on it again.
    std::mem::forget(child);
    let own = attached.and_then(|a| a.collect(pid));
    Ok(Run {
        wall_s,
        cpu_s,
        peak_rss_kib: own.map_or(rss, |f| f.hwm_kib),
        rss_own: own.is_some(),
        heap: own.and_then(|f| f.heap),
        ok: status == 0,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// Waits for `pid`; returns (exit code or 128 + signal, ru_maxrss in KiB,
/// user + system CPU seconds).
fn wait4(pid: u32) -> std::io::Result<(i32, u64, f64)> {
    let pid = libc::pid_t::try_from(pid).map_err(std::io::Error::other)?;
    let mut status: libc::c_int = 0;
    // SAFETY: zeroed rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own unreaped child; both pointers are valid
        // for the duration of the call.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    let cpu = secs(usage.ru_utime) + secs(usage.ru_stime);
    // Linux reports ru_maxrss in KiB.
    Ok((code, u64::try_from(usage.ru_maxrss).unwrap_or(0), cpu))
}

/// Another process that keeps one core busy while it lives (`--busy-core`):
/// a shell's endless loop, killed on drop.
pub struct BusyCore(std::process::Child);

impl BusyCore {
    /// The busy process when `on`, else None.
    pub fn start(on: bool) -> Result<Option<BusyCore>, String> {
        if !on {
            return Ok(None);
        }
        Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .map(|c| Some(BusyCore(c)))
            .map_err(|e| format!("--busy-core: cannot start sh: {e}"))
    }
}

impl Drop for BusyCore {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_median_min_max() {
        let s = Stat::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        assert_eq!(Stat::of(&[4.0, 1.0]).median, 2.5);
        assert_eq!(Stat::of(&[]).n, 0);
    }

    #[test]
    fn measures_a_child() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo hi; exit 3"]);
        let r = run(cmd, None, false).unwrap();
        assert!(!r.ok);
        assert_eq!(r.stdout, "hi\n");
        assert!(r.peak_rss_kib > 0);
        assert!(r.wall_s > 0.0);
    }
}
