//! Every `tests/filetests/**/*.mlir` parses, prints, parses again and prints
//! the same text (pretty and generic), and verifies unless it expects an
//! error. Files marked `// NO-ROUNDTRIP` are expected not to parse.

use ir::text::{parse_module, print_module, PrintOptions};
use std::path::{Path, PathBuf};

fn mlir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            mlir_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "mlir") {
            out.push(p);
        }
    }
}

/// The first line where two texts differ, for a readable failure.
fn first_diff(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  first:  {x}\n  second: {y}", i + 1);
        }
    }
    format!(
        "line counts differ: {} vs {}",
        a.lines().count(),
        b.lines().count()
    )
}

fn check(src: &str, name: &str) -> Result<(), String> {
    let m = parse_module(src, name).map_err(|e| format!("parse: {e}"))?;
    if !src.contains("expected-error") {
        ir::verify(&m).map_err(|e| format!("verify: {e}"))?;
    }
    let pretty = PrintOptions::default();
    let generic = PrintOptions {
        generic: true,
        ..PrintOptions::default()
    };
    let p1 = print_module(&m, &pretty);
    for opts in [&pretty, &generic] {
        let text = print_module(&m, opts);
        let m2 = parse_module(&text, "printed")
            .map_err(|e| format!("re-parse ({opts:?}): {e}\n{text}"))?;
        let again = print_module(&m2, opts);
        if again != text {
            return Err(format!(
                "print differs after re-parse ({opts:?}) at {}",
                first_diff(&text, &again)
            ));
        }
        let p2 = print_module(&m2, &pretty);
        if p2 != p1 {
            return Err(format!(
                "module changed through {opts:?} text at {}",
                first_diff(&p1, &p2)
            ));
        }
    }
    let with_locs = PrintOptions {
        debug_info: true,
        ..PrintOptions::default()
    };
    let text = print_module(&m, &with_locs);
    let m3 = parse_module(&text, "locs").map_err(|e| format!("re-parse with locations: {e}"))?;
    if print_module(&m3, &with_locs) != text {
        return Err("locations do not round-trip".into());
    }
    Ok(())
}

#[test]
fn filetests_roundtrip() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/filetests"));
    let mut files = Vec::new();
    mlir_files(root, &mut files);
    assert!(!files.is_empty(), "no .mlir files under {}", root.display());
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if src.lines().any(|l| l.trim() == "// NO-ROUNDTRIP") {
            continue;
        }
        checked += 1;
        if let Err(msg) = check(&src, &f.display().to_string()) {
            failures.push(format!("{}: {msg}", f.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} files failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
