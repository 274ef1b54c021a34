//! The LD_PRELOAD probe (probe.c) that makes memory figures the measured
//! process's own: its VmHWM at exit instead of `ru_maxrss` (which starts at
//! the parent's peak), and with the heap variant the peak bytes in use
//! through the C allocator. Built with clang once per bench run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const SOURCE: &str = include_str!("probe.c");

/// The two builds of the probe.
pub struct Probe {
    rss: PathBuf,
    heap: PathBuf,
    dir: PathBuf,
    next: AtomicUsize,
}

/// One attached probe: where its report goes.
pub struct Attached {
    out: PathBuf,
}

/// What the probe reported for a measured process tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// Largest VmHWM of the processes in the tree.
    pub hwm_kib: u64,
    /// Peak heap bytes and allocation count of the spawned process itself
    /// (heap variant only).
    pub heap: Option<(u64, u64)>,
}

impl Probe {
    /// Builds both variants into `dir`; `Err` says why not (the bench then
    /// falls back to `ru_maxrss`).
    pub fn build(clang: &Path, dir: &Path) -> Result<Probe, String> {
        let src = dir.join("probe.c");
        std::fs::write(&src, SOURCE).map_err(|e| format!("cannot write probe.c: {e}"))?;
        let lib = |name: &str, defs: &[&str]| -> Result<PathBuf, String> {
            let out = dir.join(name);
            let r = Command::new(clang)
                .args(["-O2", "-w", "-shared", "-fPIC"])
                .args(defs)
                .arg("-o")
                .arg(&out)
                .arg(&src)
                .output()
                .map_err(|e| format!("cannot run {}: {e}", clang.display()))?;
            if !r.status.success() {
                return Err(format!(
                    "cannot build the probe: {}",
                    String::from_utf8_lossy(&r.stderr).trim()
                ));
            }
            Ok(out)
        };
        Ok(Probe {
            rss: lib("probe-rss.so", &[])?,
            heap: lib("probe-heap.so", &["-DCOUNT_HEAP"])?,
            dir: dir.to_path_buf(),
            next: AtomicUsize::new(0),
        })
    }

    /// Preloads the probe into `cmd` (the heap variant with `heap`).
    pub fn attach(&self, cmd: &mut Command, heap: bool) -> Attached {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let out = self.dir.join(format!("probe-{n}.tsv"));
        let _ = std::fs::remove_file(&out);
        cmd.env("LD_PRELOAD", if heap { &self.heap } else { &self.rss })
            .env("ONNXC_PROBE_OUT", &out);
        Attached { out }
    }
}

impl Attached {
    /// The figures of the process tree rooted at `pid`; `None` when the
    /// process itself did not report (killed, static, or exec'd away).
    pub fn collect(self, pid: u32) -> Option<Figures> {
        let text = std::fs::read_to_string(&self.out).ok()?;
        let _ = std::fs::remove_file(&self.out);
        parse(&text, pid)
    }
}

fn parse(text: &str, pid: u32) -> Option<Figures> {
    let mut hwm = 0u64;
    let mut own = None;
    for line in text.lines() {
        let f: Vec<i64> = line
            .split('\t')
            .map(|s| s.trim().parse().unwrap_or(-1))
            .collect();
        let [p, h, peak, count] = f[..] else { continue };
        hwm = hwm.max(u64::try_from(h).unwrap_or(0));
        if u32::try_from(p).ok() == Some(pid) {
            own = Some((u64::try_from(peak).ok(), u64::try_from(count).ok()));
        }
    }
    let (peak, count) = own?;
    Some(Figures {
        hwm_kib: hwm,
        heap: peak.zip(count),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_process_lines() {
        let f = parse("7\t900\t-1\t-1\n5\t1200\t4096\t3\nbad line\n", 5).unwrap();
        assert_eq!(f.hwm_kib, 1200);
        assert_eq!(f.heap, Some((4096, 3)));
        assert_eq!(parse("7\t900\t-1\t-1\n", 7).unwrap().heap, None);
        // The spawned process itself must report.
        assert_eq!(parse("7\t900\t-1\t-1\n", 5), None);
    }

    #[test]
    fn measures_a_process_of_its_own() {
        let Some(clang) = pipeline::tools::find_tool("clang", None) else {
            panic!("clang is a test dependency (scripts/setup-llvm.sh)");
        };
        let dir = std::env::temp_dir().join(format!("onnxc-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let probe = Probe::build(&clang, &dir).unwrap();
        // Heap: python allocates a 64 MiB bytearray through malloc.
        let mut cmd = Command::new("python3");
        cmd.args(["-c", "b = bytearray(64 << 20); b[-1] = 1"]);
        let a = probe.attach(&mut cmd, true);
        let child = cmd.spawn().unwrap();
        let pid = child.id();
        assert!(child.wait_with_output().unwrap().status.success());
        let f = a.collect(pid).unwrap();
        let (peak, allocs) = f.heap.unwrap();
        assert!((64 << 20..80 << 20).contains(&peak), "{f:?}");
        assert!(allocs > 100, "{f:?}");
        // bytearray zero-fills: the pages are touched, so resident.
        assert!(f.hwm_kib > 64 << 10, "{f:?}");
        // RSS variant: a small process reports a small peak, whatever ours.
        let _ballast = vec![1u8; 256 << 20];
        let mut cmd = Command::new("true");
        let a = probe.attach(&mut cmd, false);
        let child = cmd.spawn().unwrap();
        let pid = child.id();
        assert!(child.wait_with_output().unwrap().status.success());
        let f = a.collect(pid).unwrap();
        assert!(f.hwm_kib < 16 << 10, "{f:?}");
        assert_eq!(f.heap, None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
