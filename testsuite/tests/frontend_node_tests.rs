#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! Census of the ONNX backend node tests: every `model.onnx` (plus the
//! `simple` and `light_*` models) is imported, or refused with a precise
//! "unsupported ..." diagnostic. No panic, no vague error.

use std::collections::BTreeMap;
use std::path::Path;
use testsuite::node_data::{backend_data, cases, parallel_map};

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

/// How an inferred result type compares with the expected output tensor.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Inferred {
    Exact,
    /// Ranked with some dims unknown (data-dependent shapes).
    Partial,
    Unranked,
    Wrong,
}

fn compare_shape(t: &ir::Type, expected: &[i64]) -> Inferred {
    match t.shape() {
        None => Inferred::Unranked,
        Some(s) if s.len() != expected.len() => Inferred::Wrong,
        Some(s)
            if s.iter()
                .zip(expected)
                .any(|(&a, &b)| a != ir::DYN && a != b) =>
        {
            Inferred::Wrong
        }
        Some(s) if s.contains(&ir::DYN) => Inferred::Partial,
        Some(_) => Inferred::Exact,
    }
}

/// Shape inference against the backend data: with every declared output
/// and intermediate type removed, the inferred result types of the main
/// graph must agree with the shapes of the expected outputs.
fn infer_case(case_dir: &Path, hybrid: bool) -> Vec<(usize, Inferred, String)> {
    let Ok(mut loaded) = frontend::load_model(&case_dir.join("model.onnx")) else {
        return Vec::new();
    };
    if let Some(g) = loaded.proto.graph.as_mut() {
        g.value_info.clear();
        for o in &mut g.output {
            if let Some(frontend::proto::type_proto::Value::TensorType(t)) =
                o.r#type.as_mut().and_then(|t| t.value.as_mut())
            {
                t.shape = None;
            }
        }
    }
    let Ok(mut m) = frontend::import_model(&loaded) else {
        return Vec::new();
    };
    if hybrid {
        // Inference that reads constant operands (Reshape's shape, axes...)
        // is the hybrid pass's; a failure here is the run harnesses' to judge.
        use ir::pass::Pass;
        let pass = constprop::hybrid::ConstProp {
            config: Default::default(),
            growth: constprop::hybrid::Growth::Unbounded,
            lazy_min: constprop::fold::DEFAULT_LAZY_MIN,
            version_ranks: false,
        };
        if pass.run(&mut m, &mut Default::default()).is_err() {
            return Vec::new();
        }
    }
    let Some(sig) = m
        .lookup_symbol("main_graph")
        .and_then(|f| ir::dialects::func::function_type(&m, f))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, t) in sig.results.iter().enumerate() {
        let pb = case_dir
            .join("test_data_set_0")
            .join(format!("output_{k}.pb"));
        let Ok((_, e)) = frontend::tensor_io::read_tensor_pb(&pb) else {
            continue;
        };
        out.push((k, compare_shape(t, e.shape()), t.to_string()));
    }
    out
}

#[test]
fn inferred_shapes_agree_with_expected_outputs() {
    let dir = backend_data();
    let all: Vec<String> = cases(&dir)
        .into_iter()
        .filter(|c| c.starts_with("node/"))
        .collect();
    let mut wrong_all = Vec::new();
    for hybrid in [false, true] {
        std::panic::set_hook(Box::new(|_| {}));
        let results = parallel_map(&all, |case| infer_case(&dir.join(case), hybrid));
        let _ = std::panic::take_hook();
        let mut counts: BTreeMap<Inferred, usize> = BTreeMap::new();
        let mut wrong = Vec::new();
        let mut unranked = Vec::new();
        let mut partial = Vec::new();
        for (case, outs) in all.iter().zip(&results) {
            for (k, verdict, t) in outs {
                *counts.entry(*verdict).or_default() += 1;
                match verdict {
                    Inferred::Wrong => wrong.push(format!("{case} output {k}: inferred {t}")),
                    Inferred::Unranked => unranked.push(format!("{case} output {k}")),
                    Inferred::Partial => partial.push(format!("{case} output {k}: {t}")),
                    Inferred::Exact => {}
                }
            }
        }
        let stage = if hybrid {
            "after constprop"
        } else {
            "at import"
        };
        eprintln!("output shapes {stage} vs expected outputs: {counts:?}");
        eprintln!("unranked {stage}:\n  {}", unranked.join("\n  "));
        eprintln!("partial {stage}:\n  {}", partial.join("\n  "));
        wrong_all.extend(wrong.into_iter().map(|w| format!("{stage}: {w}")));
        if hybrid {
            // Every output gets a rank; the partial ones depend on runtime
            // values (shapes, axes, sizes given as graph inputs).
            assert!(unranked.is_empty(), "unranked: {unranked:?}");
            let exact = counts.get(&Inferred::Exact).copied().unwrap_or(0);
            assert!(exact >= 1850, "only {exact} outputs inferred exactly");
        }
    }
    assert!(
        wrong_all.is_empty(),
        "{} wrong:\n{}",
        wrong_all.len(),
        wrong_all.join("\n")
    );
}
