//! Interop with upstream MLIR: what we print for `tests/filetests/text/`
//! (pretty and generic) is accepted by `mlir-opt` 19, and reading
//! mlir-opt's own output back gives the module we started from.

use ir::text::{parse_module, print_module, PrintOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `$MLIR_OPT`, the Debian LLVM 19 path, or `mlir-opt-19`/`mlir-opt` on PATH.
fn find_mlir_opt() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MLIR_OPT") {
        return Some(PathBuf::from(p));
    }
    let fixed = PathBuf::from("/usr/lib/llvm-19/bin/mlir-opt");
    if fixed.is_file() {
        return Some(fixed);
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["mlir-opt-19", "mlir-opt"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Runs mlir-opt on `text`; returns its output or why it failed.
fn run_mlir_opt(tool: &Path, text: &str, tag: &str) -> Result<String, String> {
    let tmp =
        std::env::temp_dir().join(format!("onnxc-mlir-opt-{}-{tag}.mlir", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    // Unregistered `test.*` ops need the flag; it changes nothing else.
    let out = Command::new(tool)
        .arg("--allow-unregistered-dialect")
        .arg(&tmp)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tool.display()));
    let _ = std::fs::remove_file(&tmp);
    let out = out?;
    if !out.status.success() {
        return Err(format!(
            "mlir-opt rejected it:\n{}\n--- input ---\n{text}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("mlir-opt printed non-UTF-8: {e}"))
}

#[test]
fn mlir_opt_accepts_printed_filetests() {
    let Some(tool) = find_mlir_opt() else {
        panic!("mlir-opt (LLVM 19) not found: run scripts/setup-test-deps.sh, or set MLIR_OPT=/path/to/mlir-opt");
    };
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/filetests/text"
    ));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for f in &files {
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let src = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if src.lines().any(|l| l.trim() == "// NO-ROUNDTRIP") {
            continue;
        }
        let m = match parse_module(&src, &f.display().to_string()) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let ours = print_module(&m, &PrintOptions::default());
        let generic = print_module(
            &m,
            &PrintOptions {
                generic: true,
                ..PrintOptions::default()
            },
        );
        for (text, tag) in [(&ours, "pretty"), (&generic, "generic")] {
            let result = run_mlir_opt(&tool, text, &format!("{name}-{tag}")).and_then(|theirs| {
                let back = parse_module(&theirs, "mlir-opt-output")
                    .map_err(|e| format!("cannot parse mlir-opt's output: {e}\n{theirs}"))?;
                let reprinted = print_module(&back, &PrintOptions::default());
                if reprinted != ours {
                    return Err(format!("mlir-opt's output reads back differently:\n{reprinted}\n--- expected ---\n{ours}"));
                }
                Ok(())
            });
            if let Err(e) = result {
                failures.push(format!("{name} ({tag}): {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
