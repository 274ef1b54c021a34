//! `onnxc cache info|prune`: the library cache of Python sessions
//! (`pipeline::session_cache`; docs/PYTHON.md, "The library cache").

use super::{CmdResult, Failure};
use pipeline::session_cache;
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum CacheCmd {
    /// Where the cache is, its entries and bytes, and its bound.
    Info(CacheArgs),
    /// Remove least recently used entries until the cache fits a size.
    Prune(PruneArgs),
}

#[derive(clap::Args)]
pub struct CacheArgs {
    /// The cache directory (default: $ONNXC_CACHE_DIR, else
    /// ~/.cache/onnxc/sessions).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct PruneArgs {
    #[command(flatten)]
    pub cache: CacheArgs,
    /// The size to prune to (K/M/G; default: the bound,
    /// $ONNXC_CACHE_MAX_BYTES or 2G); 0 empties the cache.
    #[arg(long, value_parser = session_cache::parse_size)]
    pub max_bytes: Option<u64>,
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

pub fn run(cmd: CacheCmd) -> CmdResult {
    let bound = session_cache::max_bytes().map_err(Failure::Usage)?;
    let dir_of = |a: &CacheArgs| a.dir.clone().unwrap_or_else(session_cache::default_dir);
    let io = |dir: &PathBuf, e: std::io::Error| Failure::Io(format!("{}: {e}", dir.display()));
    match cmd {
        CacheCmd::Info(args) => {
            let dir = dir_of(&args);
            let entries = session_cache::entries(&dir).map_err(|e| io(&dir, e))?;
            let bytes: u64 = entries.iter().map(|e| e.bytes).sum();
            println!("cache: {}", dir.display());
            println!("entries: {}", entries.len());
            println!("size: {:.1} MiB of {:.1} MiB", mib(bytes), mib(bound));
        }
        CacheCmd::Prune(args) => {
            let dir = dir_of(&args.cache);
            let max = args.max_bytes.unwrap_or(bound);
            let done = session_cache::prune(&dir, max, None).map_err(|e| io(&dir, e))?;
            println!(
                "removed {} entries ({:.1} MiB); {} left ({:.1} MiB)",
                done.removed,
                mib(done.freed),
                done.kept,
                mib(done.bytes)
            );
        }
    }
    Ok(())
}
