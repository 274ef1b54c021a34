//! Finding the LLVM tools (clang, llc, opt) on this machine.

use std::path::{Path, PathBuf};

/// Looks for `name-19`, then `name`, in `override_dir`, the LLVM 19 install
/// directory, and PATH.
pub fn find_tool(name: &str, override_dir: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = override_dir {
        return [dir.join(format!("{name}-19")), dir.join(name)]
            .into_iter()
            .find(|p| p.is_file());
    }
    let fixed = Path::new("/usr/lib/llvm-19/bin").join(name);
    if fixed.is_file() {
        return Some(fixed);
    }
    let path = std::env::var_os("PATH")?;
    for cand in [format!("{name}-19"), name.to_string()] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(&cand);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}
