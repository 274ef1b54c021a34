//! The test harnesses of onnxc, apart from the crates they test (as
//! cranelift's filetests are): the filetest runner, the ONNX backend
//! node data and its comparisons, zoo models against onnxruntime, and the
//! daemon's child processes and line client. The conformance harnesses
//! themselves are this crate's integration tests (`tests/`), with their
//! allowlists in `allowlists/`. Entry points that drive the `onnxc`
//! binary stay in `cli/tests`, where cargo builds the binary first.
#![allow(clippy::expect_used, clippy::unwrap_used)] // harness: setup failures abort

pub mod daemon;
pub mod filetests;
pub mod node_data;
pub mod zoo;

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// An allowlist of `allowlists/` by file name.
pub fn allowlist(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("allowlists")
        .join(name)
}

/// The profile directory the running test executable was built into
/// (`target/<profile>`: test executables live in its `deps/`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("a test executable under target/<profile>/deps")
        .to_path_buf()
}

/// The `onnxc` binary of the same build: `ONNXC_BIN` when set, else
/// beside the test executable (cargo builds it for `cli`'s tests).
pub fn onnxc_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("ONNXC_BIN") {
        return PathBuf::from(p);
    }
    let p = profile_dir().join("onnxc");
    assert!(
        p.is_file(),
        "{} is missing: run the test through `cargo test -p onnxc`, or set ONNXC_BIN",
        p.display()
    );
    p
}

/// Scratch space for tests: `target/tmp`, as cargo's `CARGO_TARGET_TMPDIR`.
pub fn target_tmp() -> PathBuf {
    let d = profile_dir()
        .parent()
        .map_or_else(std::env::temp_dir, |t| t.join("tmp"));
    std::fs::create_dir_all(&d).expect("create target/tmp");
    d
}
