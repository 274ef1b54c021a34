//! Content-addressed artifact cache: sha256(model bytes + options) →
//! artifact bytes. Bounded in bytes with LRU eviction; optionally mirrored
//! to a directory (one checksummed file per entry, written atomically) so
//! it survives restarts and crashes.

use dashmap::DashMap;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub type Key = [u8; 32];

pub fn hex(key: &Key) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

const MAGIC: &[u8; 13] = b"ONNXC-CACHE1\n";
const HEADER: usize = MAGIC.len() + 32 + 8 + 32;
const EXT: &str = "entry";

struct Entry {
    data: Arc<Vec<u8>>,
    last_used: AtomicU64,
}

#[derive(Default)]
pub struct CacheStats {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub evictions: AtomicU64,
    pub loaded: AtomicU64,
    pub corrupt: AtomicU64,
    pub persist_errors: AtomicU64,
}

pub struct Cache {
    map: DashMap<Key, Entry>,
    bytes: AtomicU64,
    bound: u64,
    tick: AtomicU64,
    evicting: Mutex<()>,
    dir: Option<PathBuf>,
    pub stats: CacheStats,
}

impl Cache {
    /// Opens the cache, loading and verifying the entries persisted under
    /// `dir`: leftover temp files (a crash mid-write) are removed, corrupt
    /// entries are counted and deleted so they get recompiled.
    pub fn open(bound: u64, dir: Option<PathBuf>) -> std::io::Result<Cache> {
        let cache = Cache {
            map: DashMap::new(),
            bytes: AtomicU64::new(0),
            bound,
            tick: AtomicU64::new(0),
            evicting: Mutex::new(()),
            dir,
            stats: CacheStats::default(),
        };
        if let Some(dir) = &cache.dir {
            create_owned_dir(dir)?;
            take_lock(dir)?;
            cache.load_dir(dir)?;
        }
        Ok(cache)
    }

    fn load_dir(&self, dir: &Path) -> std::io::Result<()> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') && name.contains(".tmp") {
                tracing::info!(file = %path.display(), "removing leftover temp file");
                let _ = std::fs::remove_file(&path);
                continue;
            }
            if path.extension().is_some_and(|e| e == EXT) {
                let mtime = entry.metadata().and_then(|m| m.modified()).ok();
                found.push((mtime, path));
            }
        }
        // Oldest first, so the newest entries win the bound and the LRU order.
        found.sort();
        for (_, path) in found {
            match read_entry(&path) {
                Ok((key, data)) => {
                    self.stats.loaded.fetch_add(1, Ordering::Relaxed);
                    self.insert_memory(key, Arc::new(data));
                }
                Err(why) => {
                    tracing::warn!(file = %path.display(), %why, "corrupt cache entry removed");
                    self.stats.corrupt.fetch_add(1, Ordering::Relaxed);
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        Ok(())
    }

    pub fn get(&self, key: &Key) -> Option<Arc<Vec<u8>>> {
        let found = self.map.get(key).map(|e| {
            e.last_used.store(self.next_tick(), Ordering::Relaxed);
            e.data.clone()
        });
        let counter = if found.is_some() {
            &self.stats.hits
        } else {
            &self.stats.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Stores an artifact (persisting it first when there is a directory).
    pub fn insert(&self, key: Key, data: Arc<Vec<u8>>) {
        if data.len() as u64 > self.bound {
            return;
        }
        if let Some(dir) = &self.dir {
            if let Err(e) = write_entry(dir, &key, &data) {
                tracing::warn!(error = %e, "cannot persist cache entry");
                self.stats.persist_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.insert_memory(key, data);
    }

    fn insert_memory(&self, key: Key, data: Arc<Vec<u8>>) {
        let size = data.len() as u64;
        if size > self.bound {
            self.remove_file(&key);
            return;
        }
        let entry = Entry {
            data,
            last_used: AtomicU64::new(self.next_tick()),
        };
        if let Some(old) = self.map.insert(key, entry) {
            self.bytes
                .fetch_sub(old.data.len() as u64, Ordering::Relaxed);
        }
        if self.bytes.fetch_add(size, Ordering::Relaxed) + size > self.bound {
            self.evict(key);
        }
    }

    /// Drops least recently used entries until the cache is at 90% of its
    /// bound (so that eviction passes are rare), never `keep`.
    fn evict(&self, keep: Key) {
        let Ok(_guard) = self.evicting.lock() else {
            return;
        };
        let target = self.bound - self.bound / 10;
        if self.bytes.load(Ordering::Relaxed) <= self.bound {
            return;
        }
        let mut order: Vec<(u64, Key)> = self
            .map
            .iter()
            .map(|e| (e.last_used.load(Ordering::Relaxed), *e.key()))
            .collect();
        order.sort_unstable();
        for (_, key) in order {
            if self.bytes.load(Ordering::Relaxed) <= target {
                break;
            }
            if key == keep {
                continue;
            }
            if let Some((_, e)) = self.map.remove(&key) {
                self.bytes.fetch_sub(e.data.len() as u64, Ordering::Relaxed);
                self.stats.evictions.fetch_add(1, Ordering::Relaxed);
                self.remove_file(&key);
            }
        }
    }

    fn remove_file(&self, key: &Key) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_file(entry_path(dir, key));
        }
    }

    fn next_tick(&self) -> u64 {
        self.tick.fetch_add(1, Ordering::Relaxed)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    pub fn bound(&self) -> u64 {
        self.bound
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_file(dir.join(LOCK));
        }
    }
}

const LOCK: &str = "lock.pid";

/// One daemon per cache directory: a pid file, taken over when its owner
/// is gone (e.g. killed).
fn take_lock(dir: &Path) -> std::io::Result<()> {
    let lock = dir.join(LOCK);
    let me = std::process::id();
    if let Ok(text) = std::fs::read_to_string(&lock) {
        if let Ok(pid) = text.trim().parse::<u32>() {
            if pid != me && Path::new(&format!("/proc/{pid}")).exists() {
                return Err(std::io::Error::other(format!(
                    "cache directory '{}' is in use by process {pid}",
                    dir.display()
                )));
            }
        }
    }
    let tmp = dir.join(format!(".{LOCK}.tmp{me}"));
    std::fs::write(&tmp, format!("{me}\n"))?;
    std::fs::rename(&tmp, &lock)
}

fn entry_path(dir: &Path, key: &Key) -> PathBuf {
    dir.join(format!("{}.{EXT}", hex(key)))
}

/// Header (magic, key, length, sha256 of the payload) then the payload;
/// written to a temp file, synced, then renamed: a crash leaves either
/// the old state or the whole entry, never a torn one.
fn write_entry(dir: &Path, key: &Key, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let path = entry_path(dir, key);
    let tmp = dir.join(format!(
        ".{}.tmp{}-{}",
        hex(key),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(MAGIC)?;
        f.write_all(key)?;
        f.write_all(&(data.len() as u64).to_le_bytes())?;
        f.write_all(&Sha256::digest(data))?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn read_entry(path: &Path) -> Result<(Key, Vec<u8>), String> {
    let mut bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if bytes.len() < HEADER || !bytes.starts_with(MAGIC) {
        return Err("bad header".into());
    }
    let field = |range: std::ops::Range<usize>| bytes.get(range).unwrap_or_default().to_vec();
    let key: Key = field(MAGIC.len()..MAGIC.len() + 32)
        .try_into()
        .map_err(|_| "bad key")?;
    let len_bytes: [u8; 8] = field(MAGIC.len() + 32..MAGIC.len() + 40)
        .try_into()
        .map_err(|_| "bad length")?;
    let sum = field(MAGIC.len() + 40..HEADER);
    if u64::from_le_bytes(len_bytes) != (bytes.len() - HEADER) as u64 {
        return Err("length mismatch (truncated?)".into());
    }
    let data = bytes.split_off(HEADER);
    if Sha256::digest(&data).as_slice() != sum.as_slice() {
        return Err("checksum mismatch".into());
    }
    if path.file_stem().map(|s| s.to_string_lossy().into_owned()) != Some(hex(&key)) {
        return Err("file name does not match its key".into());
    }
    Ok((key, data))
}

/// Creates `dir` (mode 700) or checks the one there: whoever can write
/// into it chooses the code this daemon serves, so it must be this user's
/// and not writable by group or others.
fn create_owned_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::metadata(dir)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me || meta.mode() & 0o022 != 0 {
        return Err(std::io::Error::other(format!(
            "--cache-dir '{}' is writable by others (owner {}, mode {:o}): whoever can write there chooses the code the daemon serves; use a directory of this user with chmod go-w",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o777
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> Key {
        [n; 32]
    }

    #[test]
    fn lru_bound() {
        let c = Cache::open(100, None).unwrap();
        for n in 0..5u8 {
            c.insert(key(n), Arc::new(vec![n; 30]));
            if n == 2 {
                assert!(c.get(&key(0)).is_some()); // 0 becomes recent
            }
        }
        assert!(c.bytes() <= 100);
        assert!(c.get(&key(0)).is_some(), "recently used entry kept");
        assert!(
            c.get(&key(1)).is_none(),
            "least recently used entry evicted"
        );
        assert!(c.get(&key(4)).is_some());
        c.insert(key(9), Arc::new(vec![0; 101]));
        assert!(
            c.get(&key(9)).is_none(),
            "larger than the bound: not cached"
        );
    }

    #[test]
    fn persists_and_detects_corruption() {
        let dir = std::env::temp_dir().join(format!("onnxc-cache-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let c = Cache::open(1 << 20, Some(dir.clone())).unwrap();
            c.insert(key(1), Arc::new(b"one".to_vec()));
            c.insert(key(2), Arc::new(b"two".to_vec()));
        }
        std::fs::write(dir.join(".leftover.tmp1-0"), b"x").unwrap();
        let p = entry_path(&dir, &key(2));
        let mut b = std::fs::read(&p).unwrap();
        *b.last_mut().unwrap() ^= 1;
        std::fs::write(&p, b).unwrap();
        let c = Cache::open(1 << 20, Some(dir.clone())).unwrap();
        assert_eq!(c.stats.loaded.load(Ordering::Relaxed), 1);
        assert_eq!(c.stats.corrupt.load(Ordering::Relaxed), 1);
        assert_eq!(c.get(&key(1)).unwrap().as_slice(), b"one");
        assert!(c.get(&key(2)).is_none());
        assert!(!p.exists() && !dir.join(".leftover.tmp1-0").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
