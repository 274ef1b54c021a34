//! The library cache of Python sessions: `DIR/<key>/libmodel.so` (and its
//! header), one directory per content address, with a `lock` file whose
//! modification time is the entry's last use. The cache is bounded
//! (`$ONNXC_CACHE_MAX_BYTES`, default 2 GiB): after each new entry the
//! least recently used ones are removed until it fits. `onnxc cache
//! info|prune` and the Python package's `python -m onnxc cache` read and
//! prune it; the key itself is the Python package's (python/src/cache.rs).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The bound without `$ONNXC_CACHE_MAX_BYTES`.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;
const LOCK: &str = "lock";

/// `$ONNXC_CACHE_DIR`, else `$XDG_CACHE_HOME/onnxc/sessions`, else
/// `~/.cache/onnxc/sessions`.
pub fn default_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ONNXC_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("onnxc").join("sessions")
}

/// `$ONNXC_CACHE_MAX_BYTES` (a size: `512M`, `4G`), else the default.
pub fn max_bytes() -> Result<u64, String> {
    match std::env::var("ONNXC_CACHE_MAX_BYTES") {
        Ok(s) if !s.trim().is_empty() => {
            parse_size(&s).map_err(|e| format!("ONNXC_CACHE_MAX_BYTES: {e}"))
        }
        _ => Ok(DEFAULT_MAX_BYTES),
    }
}

/// `123`, `64K`, `256M`, `2G` (binary multiples; `KiB`/`MiB`/`GiB` too).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| format!("invalid size '{s}'"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("invalid size unit in '{s}' (use K, M or G)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("size '{s}' is too large"))
}

/// An exclusive lock on a cache entry, released on drop (closing the file).
pub struct Lock(#[allow(dead_code)] File);

impl Lock {
    /// Waits for the entry's lock (creating the entry); marks it used.
    pub fn take(entry: &Path) -> std::io::Result<Lock> {
        std::fs::create_dir_all(entry)?;
        let f = open_lock(entry)?;
        flock(&f, libc::LOCK_EX)?;
        let _ = f.set_modified(SystemTime::now());
        Ok(Lock(f))
    }

    /// The lock if nobody holds it (an entry being built is held).
    fn try_take(entry: &Path) -> Option<Lock> {
        let f = open_lock(entry).ok()?;
        flock(&f, libc::LOCK_EX | libc::LOCK_NB).ok()?;
        Some(Lock(f))
    }
}

fn open_lock(entry: &Path) -> std::io::Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(entry.join(LOCK))
}

fn flock(f: &File, op: libc::c_int) -> std::io::Result<()> {
    use std::os::fd::AsRawFd as _;
    loop {
        // SAFETY: flock on a descriptor `f` owns.
        if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// One cached library.
#[derive(Debug)]
pub struct Entry {
    pub path: PathBuf,
    pub bytes: u64,
    pub last_used: SystemTime,
}

/// The entries of `dir`, least recently used first (none if it does not
/// exist).
pub fn entries(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let listing = match std::fs::read_dir(dir) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for item in listing.flatten() {
        let path = item.path();
        if !path.is_dir() {
            continue;
        }
        let files: Vec<_> = std::fs::read_dir(&path)?.flatten().collect();
        let bytes = files
            .iter()
            .filter_map(|f| f.metadata().ok())
            .map(|m| m.len())
            .sum();
        let last_used = std::fs::metadata(path.join(LOCK))
            .or_else(|_| std::fs::metadata(&path))
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        found.push(Entry {
            path,
            bytes,
            last_used,
        });
    }
    found.sort_by_key(|e| e.last_used);
    Ok(found)
}

/// What `prune` did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    pub removed: usize,
    pub freed: u64,
    pub kept: usize,
    pub bytes: u64,
}

/// Removes least recently used entries until the rest take at most
/// `max_bytes`; never `keep` (the entry just built) nor an entry another
/// session holds locked. A library already loaded by a process stays
/// usable there (its file is unlinked, not its mapping).
pub fn prune(dir: &Path, max_bytes: u64, keep: Option<&Path>) -> std::io::Result<Pruned> {
    let all = entries(dir)?;
    let mut total: u64 = all.iter().map(|e| e.bytes).sum();
    let mut done = Pruned::default();
    for e in &all {
        if total <= max_bytes {
            break;
        }
        if keep.is_some_and(|k| k == e.path) {
            continue;
        }
        let Some(_held) = Lock::try_take(&e.path) else {
            continue;
        };
        if std::fs::remove_dir_all(&e.path).is_ok() {
            total = total.saturating_sub(e.bytes);
            done.removed += 1;
            done.freed += e.bytes;
        }
    }
    done.kept = all.len() - done.removed;
    done.bytes = total;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_entries_go_first() {
        let dir = std::env::temp_dir().join(format!("onnxc-session-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let t0 = SystemTime::now() - std::time::Duration::from_secs(100);
        for (k, name) in ["old", "mid", "new"].iter().enumerate() {
            let e = dir.join(name);
            drop(Lock::take(&e).unwrap());
            std::fs::write(e.join("libmodel.so"), vec![0u8; 1000]).unwrap();
            let f = File::options().write(true).open(e.join(LOCK)).unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(10 * k as u64))
                .unwrap();
        }
        let held = Lock::take(&dir.join("mid")).unwrap();
        let names = |d: &Path| -> Vec<String> {
            entries(d)
                .unwrap()
                .iter()
                .map(|e| e.path.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            names(&dir),
            ["old", "new", "mid"],
            "taking a lock marks use"
        );
        let done = prune(&dir, 1500, Some(&dir.join("new"))).unwrap();
        assert_eq!((done.removed, done.freed), (1, 1000));
        assert_eq!(names(&dir), ["new", "mid"]);
        drop(held);
        // A child that another test forks shares the lock's open file (and
        // so its flock) until it execs: wait for that to pass.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while Lock::try_take(&dir.join("mid")).is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let done = prune(&dir, 0, Some(&dir.join("new"))).unwrap();
        assert_eq!((done.removed, done.kept, done.bytes), (1, 1, 1000));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
