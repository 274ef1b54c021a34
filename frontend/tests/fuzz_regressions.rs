//! Inputs found by `cargo fuzz run load_import` (fuzz/README.md) and other
//! hostile files: each must load+import to a verified module or to a
//! diagnostic, and imported modules must export.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use std::path::{Path, PathBuf};

#[test]
fn fuzz_regressions_end_in_a_module_or_a_diagnostic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|e| e != "md"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let result = std::panic::catch_unwind(|| {
            let model = frontend::load_model_bytes(
                Bytes::from(data),
                PathBuf::from("/nonexistent/onnxc-fuzz"),
            )?;
            let m = frontend::import_model(&model)?;
            ir::verify(&m)?;
            frontend::export::export_model(&m).map(|_| ())
        });
        assert!(result.is_ok(), "{} panicked", f.display());
    }
}
