//! Records what the compile daemon's cache key needs to tell builds apart:
//! the git revision (with `-dirty` when tracked files differ from it), the
//! rustc version and the target triple.

use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let rev = output("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = output("git", &["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|s| !s.is_empty());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc = output(&rustc, &["-V"]).unwrap_or_else(|| "unknown".into());
    let target = std::env::var("TARGET").unwrap_or_default();
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=ONNXC_GIT_REV={rev}{suffix}");
    println!("cargo:rustc-env=ONNXC_RUSTC={rustc}");
    println!("cargo:rustc-env=ONNXC_TARGET={target}");
    // A commit moves HEAD's ref and the index; a checkout without .git
    // reruns this each build (the paths are missing).
    for p in ["../.git/HEAD", "../.git/index"] {
        println!("cargo:rerun-if-changed={p}");
    }
}
