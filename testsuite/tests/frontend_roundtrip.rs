#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! Import → export round trip of every backend test model we import (node,
//! simple, light_*): the exported model must run in onnxruntime with the
//! outputs of the original. Cases in `testsuite/allowlists/frontend_roundtrip.txt`
//! must pass; `ONNXC_BLESS=1` rewrites that list with today's passes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use testsuite::node_data::{backend_data, cases, parallel_map, python, repo_root};

/// Light models are also written with external data above this size.
const EXTERNAL_THRESHOLD: usize = 1024;

enum Prepared {
    /// (case name, original, exported, inputs) pairs to compare.
    Pairs(Vec<[String; 4]>),
    /// Not imported: nothing to round-trip.
    NotImported,
    ExportFailed(String),
}

fn prepare(data: &Path, out: &Path, case: &str) -> Prepared {
    let src = data.join(case).join("model.onnx");
    let Ok(m) = frontend::load_model(&src).and_then(|l| frontend::import_model(&l)) else {
        return Prepared::NotImported;
    };
    let dir = out.join(case);
    std::fs::create_dir_all(&dir).unwrap();
    let inputs = data.join(case).join("test_data_set_0");
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut pairs = Vec::new();
    let mut variants = vec![(case.to_string(), "model.onnx", None)];
    if case.starts_with("light/") {
        variants.push((
            format!("{case}#external"),
            "model_ext.onnx",
            Some(EXTERNAL_THRESHOLD),
        ));
    }
    for (name, file, threshold) in variants {
        let dst = dir.join(file);
        if let Err(d) = frontend::export::write_model(&m, &dst, threshold) {
            return Prepared::ExportFailed(d.to_string());
        }
        pairs.push([name, s(&src), s(&dst), s(&inputs)]);
    }
    Prepared::Pairs(pairs)
}

fn expected_path() -> PathBuf {
    testsuite::allowlist("frontend_roundtrip.txt")
}

fn read_expected() -> BTreeSet<String> {
    std::fs::read_to_string(expected_path())
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Runs scripts/ort_compare.py on the pairs, in one process per core.
fn compare(pairs: &[[String; 4]], work: &Path) -> BTreeMap<String, (String, String)> {
    let procs = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(pairs.len().max(1));
    let script = repo_root().join("scripts").join("ort_compare.py");
    let lists: Vec<PathBuf> = (0..procs)
        .map(|p| {
            let list = work.join(format!("pairs_{p}.tsv"));
            let text: String = pairs
                .iter()
                .skip(p)
                .step_by(procs)
                .map(|f| f.join("\t") + "\n")
                .collect();
            std::fs::write(&list, text).unwrap();
            list
        })
        .collect();
    let outputs = parallel_map(&lists, |list| {
        Command::new(python())
            .arg(&script)
            .arg(list)
            .output()
            .expect("run ort_compare.py")
    });
    let mut results = BTreeMap::new();
    for out in outputs {
        assert!(
            out.status.success(),
            "ort_compare.py failed (python3 + onnxruntime needed: scripts/setup-test-deps.sh):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let mut f = line.splitn(3, '\t');
            let (Some(name), Some(status)) = (f.next(), f.next()) else {
                continue;
            };
            let detail = f.next().unwrap_or("").to_string();
            results.insert(name.to_string(), (status.to_string(), detail));
        }
    }
    results
}

#[test]
fn import_export_round_trip_runs_in_onnxruntime() {
    let data = backend_data();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("frontend-roundtrip");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let all = cases(&data);
    let prepared = parallel_map(&all, |case| prepare(&data, &work, case));

    let mut pairs = Vec::new();
    let mut export_failures = Vec::new();
    let mut not_imported = 0;
    for (case, p) in all.iter().zip(prepared) {
        match p {
            Prepared::Pairs(p) => pairs.extend(p),
            Prepared::NotImported => not_imported += 1,
            Prepared::ExportFailed(e) => export_failures.push(format!("{case}: export: {e}")),
        }
    }
    let results = compare(&pairs, &work);

    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = export_failures.clone();
    let mut passing = BTreeSet::new();
    for [name, ..] in &pairs {
        let (status, detail) = results
            .get(name)
            .cloned()
            .unwrap_or_else(|| ("fail".into(), "no result from ort_compare.py".into()));
        let key = match (status.as_str(), detail.as_str()) {
            ("pass", "reference") => "pass-reference",
            ("pass", _) => "pass",
            ("skip", _) => "skip",
            _ => "fail",
        };
        *by_status.entry(key).or_default() += 1;
        match status.as_str() {
            "pass" => {
                passing.insert(name.clone());
            }
            "fail" => failures.push(format!("{name}: {detail}")),
            _ => {}
        }
    }
    eprintln!(
        "round trip: {} pairs from {} imported models ({not_imported} not imported): {} pass in onnxruntime, {} pass in the onnx reference evaluator (onnxruntime cannot run the original), {} fail, {} skipped (no oracle runs or repeats the original); {} export failures",
        pairs.len(),
        all.len() - not_imported,
        by_status.get("pass").unwrap_or(&0),
        by_status.get("pass-reference").unwrap_or(&0),
        by_status.get("fail").unwrap_or(&0),
        by_status.get("skip").unwrap_or(&0),
        export_failures.len()
    );
    for f in &failures {
        eprintln!("  FAIL {f}");
    }
    if std::env::var_os("ONNXC_BLESS").is_some() {
        let text: String = passing.iter().map(|n| format!("{n}\n")).collect();
        std::fs::write(
            expected_path(),
            format!("# Round-trip cases expected to pass (testsuite/tests/frontend_roundtrip.rs).\n# Regenerate with ONNXC_BLESS=1.\n{text}"),
        )
        .unwrap();
        eprintln!("blessed {} passing cases", passing.len());
        return;
    }
    let expected = read_expected();
    let regressions: Vec<&String> = expected.difference(&passing).collect();
    let new: Vec<&String> = passing.difference(&expected).collect();
    if !new.is_empty() {
        eprintln!(
            "{} cases pass that the list does not have yet (bless with ONNXC_BLESS=1)",
            new.len()
        );
    }
    assert!(
        regressions.is_empty(),
        "{} listed round-trip cases no longer pass:\n{}",
        regressions.len(),
        regressions
            .iter()
            .map(|r| format!("  {r}: {}", results.get(*r).map_or("", |(_, d)| d.as_str())))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
