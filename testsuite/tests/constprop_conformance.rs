#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! Conformance in fold mode: every ONNX backend node test with its graph
//! inputs turned into initializers (holding the test's input values) must
//! fold completely under the `constprop` pipeline `onnxc fold` runs, to the
//! expected outputs (rtol 1e-3, atol 1e-7; exact for integers and bool).
//! Output elements the ONNX spec leaves undefined (a float → integer Cast
//! out of range) are not compared, and the run says so.
//!
//! `testsuite/allowlists/constprop_fold.txt` lists the cases that pass; a listed
//! case that fails is a regression. Regenerate the list after improving the
//! kernels with `ONNXC_UPDATE_FOLD_EXPECTED=1 cargo test -p testsuite --test
//! constprop_conformance`. One case alone: `ONNXC_FOLD_CASE=node/test_abs`.

use frontend::import::tensor::elements_to_tensor;
use frontend::proto::type_proto;
use ir::pass::{PassContext, PassRegistry};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use testsuite::node_data::{backend_data, cases, compare_outputs, parallel_map, spec_undefined};

enum Outcome {
    /// Sequences, optionals or maps among the graph inputs/outputs.
    NotTensorOnly,
    Pass,
    Fail(String),
}

fn expected_list() -> PathBuf {
    testsuite::allowlist("constprop_fold.txt")
}

fn is_tensor(t: &Option<frontend::proto::TypeProto>) -> bool {
    matches!(
        t.as_ref().and_then(|t| t.value.as_ref()),
        Some(type_proto::Value::TensorType(_))
    )
}

/// Runs one case under `pipeline`; `Err` carries the reason it does not
/// fold.
fn fold_case(case_dir: &Path, pipeline: &str) -> Result<Outcome, String> {
    let mut loaded =
        frontend::load_model(&case_dir.join("model.onnx")).map_err(|d| d.to_string())?;
    let data = case_dir.join("test_data_set_0");
    let graph = loaded.proto.graph.as_mut().ok_or("no graph")?;
    let inits: BTreeSet<String> = graph.initializer.iter().map(|t| t.name.clone()).collect();
    let inputs: Vec<_> = graph
        .input
        .iter()
        .filter(|i| !inits.contains(&i.name))
        .cloned()
        .collect();
    if !inputs
        .iter()
        .chain(&graph.output)
        .all(|v| is_tensor(&v.r#type))
    {
        return Ok(Outcome::NotTensorOnly);
    }
    let mut named = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let (_, e) = frontend::tensor_io::read_tensor_pb(&data.join(format!("input_{i}.pb")))
            .map_err(|d| format!("input {i}: {}", d.message))?;
        graph.initializer.push(elements_to_tensor(&input.name, &e));
        named.push((input.name.clone(), e));
    }
    let undefined = spec_undefined(graph, &named);
    graph.input.retain(|i| inits.contains(&i.name));
    let outputs = graph.output.len();

    let mut m = frontend::import_model(&loaded).map_err(|d| format!("import: {d}"))?;
    let mut reg = PassRegistry::new();
    constprop::register_passes(&mut reg);
    let mut cx = PassContext::default();
    for pass in reg.parse(pipeline).map_err(|d| d.to_string())? {
        pass.run(&mut m, &mut cx)
            .map_err(|d| format!("constprop: {d}"))?;
    }

    let func = m.top_level_ops("func.func");
    let func = func.first().ok_or("no function")?;
    let entry = m
        .region(*func, 0)
        .and_then(|r| m.entry_block(r))
        .ok_or("no body")?;
    let left: BTreeSet<String> = m
        .block_ops(entry)
        .filter(|&op| {
            !m.is(op, "onnx.Constant") && !m.is(op, "onnx.NoValue") && !m.is(op, "func.return")
        })
        .map(|op| m.name(op).as_str().to_string())
        .collect();
    if !left.is_empty() {
        return Err(format!("not folded: {left:?}"));
    }
    let ret = m.last_op(entry).ok_or("no return")?;
    if m.operands(ret).len() != outputs {
        return Err("wrong result count".into());
    }
    for (i, &v) in m.operands(ret).iter().enumerate() {
        let def = m.defining_op(v).ok_or("result is an argument")?;
        let got = m
            .attr(def, "value")
            .and_then(|a| a.as_elements())
            .ok_or("constant without value")?;
        let (_, want) = frontend::tensor_io::read_tensor_pb(&data.join(format!("output_{i}.pb")))
            .map_err(|d| format!("output {i}: {}", d.message))?;
        let skip = undefined.get(i).and_then(Option::as_deref);
        let skipped = compare_outputs(got, &want, skip).map_err(|e| format!("output {i}: {e}"))?;
        if skipped > 0 {
            eprintln!(
                "{}: {skipped} elements of output {i} not compared (float → integer Cast out of range: undefined in the ONNX spec)",
                case_dir.file_name().unwrap_or_default().to_string_lossy()
            );
        }
    }
    Ok(Outcome::Pass)
}

fn run_case(case_dir: &Path, pipeline: &str) -> Outcome {
    match std::panic::catch_unwind(|| fold_case(case_dir, pipeline)) {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => Outcome::Fail(e),
        Err(p) => Outcome::Fail(format!(
            "panic: {}",
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        )),
    }
}

fn expected_cases() -> BTreeSet<String> {
    std::fs::read_to_string(expected_list())
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Every node case (or `ONNXC_FOLD_CASE` alone) run under `pipeline`.
fn run_all(pipeline: &str) -> (Vec<String>, Vec<Outcome>) {
    let dir = backend_data();
    let only = std::env::var("ONNXC_FOLD_CASE").ok();
    let all: Vec<String> = cases(&dir)
        .into_iter()
        .filter(|c| c.starts_with("node/"))
        .filter(|c| only.as_deref().is_none_or(|o| o == c))
        .collect();
    std::panic::set_hook(Box::new(|_| {}));
    let outcomes = parallel_map(&all, |case| run_case(&dir.join(case), pipeline));
    let _ = std::panic::take_hook();
    (all, outcomes)
}

/// With every element-wise fold lazy (mapped views read back in chunks),
/// the listed cases still fold to the expected outputs.
#[test]
fn node_tests_fold_with_lazy_maps() {
    let (all, outcomes) = run_all("constprop{lazy-min-elements=0}");
    let expected = expected_cases();
    let regressions: Vec<String> = all
        .iter()
        .zip(&outcomes)
        .filter_map(|(case, o)| match o {
            Outcome::Fail(why) if expected.contains(case) => Some(format!("{case}: {why}")),
            _ => None,
        })
        .collect();
    assert!(
        regressions.is_empty(),
        "{} listed cases fail with lazy maps:\n{}",
        regressions.len(),
        regressions.join("\n")
    );
}

#[test]
fn node_tests_fold_completely() {
    let only = std::env::var("ONNXC_FOLD_CASE").ok();
    let (all, outcomes) = run_all("constprop");
    let expected = expected_cases();
    let mut passed = BTreeSet::new();
    let mut tensor_only = 0usize;
    let mut regressions = Vec::new();
    let verbose = std::env::var_os("ONNXC_FOLD_VERBOSE").is_some() || only.is_some();
    for (case, outcome) in all.iter().zip(&outcomes) {
        match outcome {
            Outcome::NotTensorOnly => {}
            Outcome::Pass => {
                tensor_only += 1;
                passed.insert(case.clone());
            }
            Outcome::Fail(why) => {
                tensor_only += 1;
                if verbose {
                    eprintln!("FAIL {case}: {why}");
                }
                if expected.contains(case) {
                    regressions.push(format!("{case}: {why}"));
                }
            }
        }
    }
    eprintln!(
        "fold conformance: {} of {tensor_only} tensor-only node tests fold to the expected outputs",
        passed.len()
    );
    if only.is_none() && std::env::var_os("ONNXC_UPDATE_FOLD_EXPECTED").is_some() {
        let mut text = String::from(
            "# Backend node tests that fold completely (testsuite/tests/constprop_conformance.rs).\n",
        );
        for c in &passed {
            text.push_str(c);
            text.push('\n');
        }
        std::fs::write(expected_list(), text).expect("write constprop_fold.txt");
    }
    assert!(
        regressions.is_empty(),
        "{} listed cases no longer fold:\n{}",
        regressions.len(),
        regressions.join("\n")
    );
    if only.is_none() {
        assert!(tensor_only > 1700, "the node tests are all there");
    }
}
