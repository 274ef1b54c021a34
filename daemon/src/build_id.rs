//! What an artifact's bytes depend on besides the request (part of every
//! cache key, so that a daemon never serves what another build wrote):
//! the crate version, the git revision and rustc it was built from, its
//! target, and the version of the clang it calls.

use std::sync::OnceLock;

/// The build id, computed once (clang runs once).
pub fn build_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        format!(
            "{}\0{}\0{}\0{}\0{}",
            env!("CARGO_PKG_VERSION"),
            env!("ONNXC_GIT_REV"),
            env!("ONNXC_RUSTC"),
            env!("ONNXC_TARGET"),
            clang_version()
        )
    })
}

/// The first line of `clang --version` (what `--emit obj|lib` run).
fn clang_version() -> String {
    let Ok(clang) = pipeline::native::clang(None) else {
        return "no clang".into();
    };
    std::process::Command::new(&clang)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_string)
        })
        .unwrap_or_else(|| format!("{} (no version)", clang.display()))
}
