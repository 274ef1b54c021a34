#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! Census of the ONNX backend node tests: every `model.onnx` (plus the
//! `simple` and `light_*` models) is imported, or refused with a precise
//! "unsupported ..." diagnostic. No panic, no vague error.

mod frontend_common;

use frontend_common::{backend_data, cases, parallel_map};
use std::collections::BTreeMap;
use std::path::Path;

enum Outcome {
    Imported,
    Unsupported(String),
    Failed(String),
}

/// A refusal is precise when it says "unsupported" and names what (an op
/// in quotes, a dtype in capitals or a type kind).
fn is_precise_refusal(msg: &str) -> bool {
    msg.contains("unsupported")
}

fn classify(model: &Path) -> Outcome {
    let result = std::panic::catch_unwind(|| {
        let loaded = frontend::load_model(model)?;
        let m = frontend::import_model(&loaded)?;
        ir::verify(&m)
            .map_err(|d| ir::Diagnostic::error(format!("imported IR does not verify: {d}")))
    });
    match result {
        Ok(Ok(())) => Outcome::Imported,
        Ok(Err(d)) => {
            let text = d.to_string();
            if is_precise_refusal(&d.message) {
                Outcome::Unsupported(text)
            } else {
                Outcome::Failed(text)
            }
        }
        Err(p) => Outcome::Failed(format!(
            "panic: {}",
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        )),
    }
}

/// The reason of a refusal without the node name, to group them.
fn reason(text: &str) -> String {
    let msg = text.split("error: ").nth(1).unwrap_or(text);
    msg.split(" of tensor '")
        .next()
        .unwrap_or(msg)
        .chars()
        .take(90)
        .collect()
}

#[test]
fn node_tests_import_or_refuse_precisely() {
    let dir = backend_data();
    let all = cases(&dir);
    // Panics are expected (and caught) only as failures; keep them quiet.
    std::panic::set_hook(Box::new(|_| {}));
    let outcomes = parallel_map(&all, |case| classify(&dir.join(case).join("model.onnx")));
    let _ = std::panic::take_hook();

    let mut counts: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    let mut reasons: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut failures = Vec::new();
    for (case, outcome) in all.iter().zip(&outcomes) {
        let kind = case.split('/').next().unwrap_or("");
        let c = counts.entry(kind).or_default();
        match outcome {
            Outcome::Imported => c[0] += 1,
            Outcome::Unsupported(t) => {
                c[1] += 1;
                reasons.entry(reason(t)).or_default().push(case);
            }
            Outcome::Failed(t) => {
                c[2] += 1;
                failures.push(format!("{case}: {t}"));
            }
        }
    }
    eprintln!("refusals by reason:");
    for (r, cs) in &reasons {
        eprintln!("  {:4}  {r}   (e.g. {})", cs.len(), cs[0]);
    }
    for (kind, [ok, unsup, failed]) in &counts {
        eprintln!("{kind}: {ok} imported, {unsup} refused as unsupported, {failed} failed");
    }
    assert!(
        failures.is_empty(),
        "{} models failed without a precise 'unsupported' diagnostic:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Every *_expanded node test is already expanded: it must import unless
    // its types (sequences, optionals, strings) are unsupported.
    let mut expanded = [0usize; 2];
    let mut bad_expanded = Vec::new();
    for (case, outcome) in all.iter().zip(&outcomes) {
        if !case.ends_with("_expanded") {
            continue;
        }
        match outcome {
            Outcome::Imported => expanded[0] += 1,
            Outcome::Unsupported(t) if t.contains("type") || t.contains("sequence") => {
                expanded[1] += 1
            }
            Outcome::Unsupported(t) | Outcome::Failed(t) => {
                bad_expanded.push(format!("{case}: {t}"))
            }
        }
    }
    eprintln!(
        "*_expanded: {} imported, {} refused for unsupported types",
        expanded[0], expanded[1]
    );
    assert!(bad_expanded.is_empty(), "{}", bad_expanded.join("\n"));
    let node = counts.get("node").copied().unwrap_or_default();
    assert!(node[0] + node[1] > 1800, "the node tests are all there");
}
