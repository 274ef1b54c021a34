#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! Conformance in run mode: ONNX backend node tests compiled through the
//! whole pipeline (import, constprop, scrub, bufferize, dealloc, lower),
//! executed on the test's inputs and compared with the expected outputs
//! (rtol 1e-3, atol 1e-7 for floats, as onnx's runner; exact otherwise).
//! Output elements the ONNX spec leaves undefined (a float → integer Cast
//! out of range) are not compared, and the run says which cases had some.
//!
//! Cases are batched: one LLVM module and one C driver per batch (see
//! `lower::cabi_batch`), one clang call each, two batches at a time.
//!
//! * default: every case of `testsuite/allowlists/bufferize_run.txt` must pass.
//! * `ONNXC_CONFORMANCE=full cargo test -p testsuite --test bufferize_conformance
//!   -- --nocapture`: the census of every node case; the per-case outcome
//!   goes to `target/bufferize-conformance/census.txt`; with `ONNXC_BLESS=1`
//!   the passing set is written to the allowlist.
//! * `ONNXC_CASES=averagepool,conv_` (with either mode): only the cases whose
//!   name contains one of the comma-separated substrings (never blessed).

use ir::elements::{DType, Elements};
use ir::pass::{PassManager, PassRegistry};
use lower::cabi::DriverInput;
use lower::cabi_batch::{batch_driver, merge_llvm, output_layout, BatchCase};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use testsuite::node_data::{
    backend_data, compare_outputs, parallel_map, repo_root, spec_undefined,
};

const BATCH: usize = 120;
const PIPELINE: &str = "constprop,scrub,bufferize,split-alloc,dealloc-pipeline,lower-to-llvm-ready";

fn allowlist_path() -> PathBuf {
    testsuite::allowlist("bufferize_run.txt")
}

fn registry() -> PassRegistry {
    frontend::dialect::register();
    let mut r = PassRegistry::new();
    constprop::register_passes(&mut r);
    bufferize::register_passes(&mut r);
    dealloc::register_passes(&mut r);
    lower::register_passes(&mut r);
    r
}

/// One test data set: inputs and expected outputs, and per output the
/// elements the spec leaves undefined (not compared).
struct DataSet {
    inputs: Vec<Elements>,
    expected: Vec<Elements>,
    undefined: Vec<Option<Vec<bool>>>,
}

/// A case compiled to LLVM IR, ready to batch.
struct Compiled {
    ll: String,
    sets: Vec<DataSet>,
    outputs: Vec<(usize, usize)>,
    out_dtypes: Vec<DType>,
}

fn read_sets(case_dir: &Path) -> Result<Vec<DataSet>, String> {
    let mut sets = Vec::new();
    for s in 0.. {
        let dir = case_dir.join(format!("test_data_set_{s}"));
        if !dir.is_dir() {
            break;
        }
        let read = |prefix: &str| -> Result<Vec<Elements>, String> {
            let mut out = Vec::new();
            for i in 0.. {
                let p = dir.join(format!("{prefix}_{i}.pb"));
                if !p.is_file() {
                    break;
                }
                let (_, e) = frontend::tensor_io::read_tensor_pb(&p)
                    .map_err(|d| format!("test data {}: {}", p.display(), d.message))?;
                out.push(e);
            }
            Ok(out)
        };
        sets.push(DataSet {
            inputs: read("input")?,
            expected: read("output")?,
            undefined: Vec::new(),
        });
    }
    Ok(sets)
}

fn compile(case_dir: &Path, registry: &PassRegistry) -> Result<Compiled, String> {
    let mut sets = read_sets(case_dir)?;
    let loaded =
        frontend::load_model(&case_dir.join("model.onnx")).map_err(|d| d.message.clone())?;
    if let Some(g) = &loaded.proto.graph {
        for set in &mut sets {
            let named = g
                .input
                .iter()
                .map(|i| i.name.clone())
                .zip(set.inputs.clone());
            set.undefined = spec_undefined(g, &named.collect::<Vec<_>>());
        }
    }
    let mut m = frontend::import_model(&loaded).map_err(|d| d.message.clone())?;
    let mut pm = PassManager::new();
    pm.extend(registry.parse(PIPELINE).map_err(|d| d.message.clone())?);
    pm.run(&mut m).map_err(|d| d.to_string())?;
    let f = m
        .lookup_symbol("main_graph")
        .ok_or("no main_graph after lowering")?;
    let sig = ir::dialects::func::function_type(&m, f).ok_or("no function type")?;
    for set in &sets {
        if set.inputs.len() != sig.inputs.len() {
            return Err(format!(
                "{} inputs in the test data, {} in the model",
                set.inputs.len(),
                sig.inputs.len()
            ));
        }
        for (t, e) in sig.inputs.iter().zip(&set.inputs) {
            let shape = t.shape().unwrap_or(&[]);
            let fits = DType::from_type(t.element_type()) == Some(e.dtype())
                && shape.len() == e.shape().len()
                && shape
                    .iter()
                    .zip(e.shape())
                    .all(|(&a, &b)| a == ir::DYN || a == b);
            if !fits {
                return Err(format!("input {:?} does not fit {t}", e.shape()));
            }
        }
    }
    let out_dtypes = sig
        .results
        .iter()
        .map(|t| DType::from_type(t.element_type()).ok_or(format!("output type {t}")))
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = output_layout(&m, "main_graph").map_err(|d| d.message.clone())?;
    let mut ll = lower::emit_llvm(&m, &lower::EmitOptions::default()).map_err(|d| d.to_string())?;
    ll.push('\n');
    ll.push_str(
        &lower::cabi::emit_entry(&m, "main_graph", "onnxc_entry").map_err(|d| d.to_string())?,
    );
    Ok(Compiled {
        ll,
        sets,
        outputs,
        out_dtypes,
    })
}

fn byte_width(d: DType) -> usize {
    (d.bits() as usize).div_ceil(8)
}

/// Reads the driver's output format: i64 rank, i64 dims, packed elements.
fn read_output(path: &Path, dtype: DType) -> Result<Elements, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("no output {}: {e}", path.display()))?;
    let word = |i: usize| -> Option<i64> {
        Some(i64::from_le_bytes(
            bytes.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    let rank = word(0).ok_or("malformed output")? as usize;
    let shape: Vec<i64> = (0..rank)
        .map(|i| word(1 + i).ok_or("malformed output"))
        .collect::<Result<_, _>>()?;
    let data = bytes::Bytes::from(bytes).slice((1 + rank) * 8..);
    Elements::from_unpacked_bytes(dtype, shape, data).map_err(|e| e.to_string())
}

/// Builds and runs a group of cases; the outcome of each case. A group
/// that does not build is bisected, so one bad case fails alone.
fn run_group(work: &Path, batch: &[(&str, &Compiled)]) -> Vec<Result<(), String>> {
    let _ = std::fs::remove_dir_all(work);
    match run_batch(work, batch) {
        Ok(per_slot) => {
            let mut it = per_slot.into_iter();
            batch
                .iter()
                .map(|(_, c)| {
                    let mut res = Ok(());
                    for _ in &c.sets {
                        if let Some(Err(e)) = it.next() {
                            if res.is_ok() {
                                res = Err(e);
                            }
                        }
                    }
                    res
                })
                .collect()
        }
        Err(e) if batch.len() <= 1 => vec![Err(e)],
        Err(_) => {
            let (a, b) = batch.split_at(batch.len() / 2);
            let mut out = run_group(&work.join("a"), a);
            out.extend(run_group(&work.join("b"), b));
            out
        }
    }
}

/// Builds and runs one batch; the outcome of each (case, data set), or why
/// the batch did not build.
fn run_batch(work: &Path, batch: &[(&str, &Compiled)]) -> Result<Vec<Result<(), String>>, String> {
    std::fs::create_dir_all(work).unwrap();
    let mut parts = Vec::new();
    let mut cases = Vec::new();
    let mut slots = Vec::new(); // (index in batch, data set)
    for (b, (_, c)) in batch.iter().enumerate() {
        let prefix = format!("c{b}_");
        parts.push((prefix.clone(), c.ll.clone()));
        for (s, set) in c.sets.iter().enumerate() {
            let k = cases.len();
            let dir = work.join(k.to_string());
            std::fs::create_dir_all(&dir).unwrap();
            for (i, e) in set.inputs.iter().enumerate() {
                std::fs::write(dir.join(format!("in_{i}.bin")), e.to_unpacked_bytes()).unwrap();
            }
            cases.push(BatchCase {
                entry: format!("{prefix}onnxc_entry"),
                inputs: set
                    .inputs
                    .iter()
                    .map(|e| DriverInput {
                        elem_bytes: byte_width(e.dtype()),
                        shape: e.shape().to_vec(),
                    })
                    .collect(),
                outputs: c.outputs.clone(),
            });
            slots.push((b, s));
        }
    }
    let ll = merge_llvm(&parts).map_err(|d| format!("merge: {}", d.message))?;
    std::fs::write(work.join("batch.ll"), ll).unwrap();
    std::fs::write(work.join("driver.c"), batch_driver(&cases, 20)).unwrap();
    let exe = work.join("batch");
    let out = Command::new("/usr/lib/llvm-19/bin/clang")
        .args(["-O1", "-w", "-o"])
        .arg(&exe)
        .arg(work.join("batch.ll"))
        .arg(work.join("driver.c"))
        .args(["-lm", "-Wl,--as-needed", "-lgomp"])
        .output()
        .expect("clang (LLVM 19) is needed: scripts/setup-test-deps.sh");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "clang failed: {}",
            err.lines().take(3).collect::<Vec<_>>().join(" | ")
        ));
    }
    let out = Command::new(&exe)
        .arg(work)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let log = String::from_utf8_lossy(&out.stdout);
    let mut status: BTreeMap<usize, String> = BTreeMap::new();
    for line in log.lines() {
        let mut w = line.splitn(3, ' ');
        if let (Some("case"), Some(k), Some(rest)) = (w.next(), w.next(), w.next()) {
            if let Ok(k) = k.parse() {
                status.insert(k, rest.to_string());
            }
        }
    }
    Ok(slots
        .iter()
        .enumerate()
        .map(|(k, &(b, s))| {
            match status.get(&k).map(String::as_str) {
                Some("ok") => {}
                Some(other) => return Err(format!("the compiled model failed: {other}")),
                None => return Err("the batch driver did not run this case".into()),
            }
            let c = batch[b].1;
            let set = &c.sets[s];
            if set.expected.len() != c.out_dtypes.len() {
                return Err(format!(
                    "{} outputs, {} expected",
                    c.out_dtypes.len(),
                    set.expected.len()
                ));
            }
            for (i, (want, &dt)) in set.expected.iter().zip(&c.out_dtypes).enumerate() {
                let got = read_output(&work.join(k.to_string()).join(format!("out_{i}.bin")), dt)?;
                let skip = set.undefined.get(i).and_then(Option::as_deref);
                compare_outputs(&got, want, skip).map_err(|e| format!("output {i}: {e}"))?;
            }
            Ok(())
        })
        .collect())
}

/// Compiles and runs `names` (node case names); the outcome of each.
fn run_cases(data: &Path, names: &[String]) -> Vec<Result<(), String>> {
    let registry = registry();
    std::panic::set_hook(Box::new(|_| {}));
    let compiled = parallel_map(names, |name| {
        let dir = data.join("node").join(name);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compile(&dir, &registry)))
            .unwrap_or_else(|_| Err("panic while compiling".into()))
    });
    let _ = std::panic::take_hook();
    let ready: Vec<(usize, &Compiled)> = compiled
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.as_ref().ok().map(|c| (i, c)))
        .collect();
    for &(i, c) in &ready {
        let undefined = c.sets.iter().flat_map(|s| s.undefined.iter().flatten());
        let n = undefined.flatten().filter(|&&u| u).count();
        if n > 0 {
            eprintln!("{}: {n} output elements not compared (float → integer Cast out of range: undefined in the ONNX spec)", names[i]);
        }
    }
    let batches: Vec<Vec<(usize, &Compiled)>> = ready.chunks(BATCH).map(<[_]>::to_vec).collect();
    // Per process: other test runs may share the target directory.
    let root = repo_root()
        .join("target/bufferize-conformance")
        .join(format!("run-{}", std::process::id()));
    let results = parallel_map(&batches, |batch| {
        let first = batch.first().map_or(0, |x| x.0);
        let items: Vec<(&str, &Compiled)> =
            batch.iter().map(|&(i, c)| (names[i].as_str(), c)).collect();
        let work = root.join(format!("batch{first}"));
        let r = run_group(&work, &items);
        let per_case: Vec<(usize, Result<(), String>)> =
            batch.iter().map(|&(i, _)| i).zip(r).collect();
        if std::env::var_os("ONNXC_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&work);
        }
        per_case
    });
    let _ = std::fs::remove_dir(&root);
    let mut out: Vec<Result<(), String>> = compiled
        .into_iter()
        .map(|c| c.map(|_| ()).map_err(|e| format!("compile: {e}")))
        .collect();
    for (i, r) in results.into_iter().flatten() {
        out[i] = r;
    }
    out
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(160).collect()
}

#[test]
fn node_tests_run_and_match() {
    let data = backend_data();
    let full = std::env::var("ONNXC_CONFORMANCE").is_ok_and(|v| v == "full");
    let allow: Vec<String> = std::fs::read_to_string(allowlist_path())
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    let mut names: Vec<String> = if full {
        let mut v: Vec<String> = std::fs::read_dir(data.join("node"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        v.sort();
        v
    } else {
        allow.clone()
    };
    // `ONNXC_CASES=sub1,sub2`: only cases whose name contains one of them.
    let pick = std::env::var("ONNXC_CASES").ok();
    if let Some(p) = &pick {
        names.retain(|n| p.split(',').any(|s| n.contains(s)));
    }
    let start = std::time::Instant::now();
    let results = run_cases(&data, &names);
    let passed: Vec<&String> = names
        .iter()
        .zip(&results)
        .filter(|(_, r)| r.is_ok())
        .map(|(n, _)| n)
        .collect();
    eprintln!(
        "run-mode conformance: {} of {} cases pass ({:.1}s)",
        passed.len(),
        names.len(),
        start.elapsed().as_secs_f64()
    );
    if full {
        let mut census = String::new();
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        for (n, r) in names.iter().zip(&results) {
            match r {
                Ok(()) => census.push_str(&format!("{n}: pass\n")),
                Err(e) => {
                    census.push_str(&format!("{n}: {}\n", first_line(e)));
                    let key: String = first_line(e).chars().take(70).collect();
                    *reasons.entry(key).or_default() += 1;
                }
            }
        }
        let dir = repo_root().join("target/bufferize-conformance");
        std::fs::create_dir_all(&dir).unwrap();
        let file = if pick.is_some() {
            "census-filtered.txt"
        } else {
            "census.txt"
        };
        std::fs::write(dir.join(file), census).unwrap();
        let mut top: Vec<_> = reasons.into_iter().collect();
        top.sort_by_key(|e| std::cmp::Reverse(e.1));
        for (r, n) in top.iter().take(40) {
            eprintln!("{n:5}  {r}");
        }
        if std::env::var_os("ONNXC_BLESS").is_some() && pick.is_none() {
            let mut text = String::from(
                "# ONNX backend node tests that compile, run and match (bufferize_conformance.rs)\n",
            );
            for n in &passed {
                text.push_str(n);
                text.push('\n');
            }
            std::fs::write(allowlist_path(), text).unwrap();
        }
        let regressed: Vec<&String> = names
            .iter()
            .zip(&results)
            .filter(|(n, r)| r.is_err() && allow.contains(n))
            .map(|(n, _)| n)
            .collect();
        assert!(
            regressed.is_empty(),
            "allowlisted cases fail: {regressed:?}"
        );
        return;
    }
    assert!(
        !names.is_empty(),
        "empty allowlist {}",
        allowlist_path().display()
    );
    let failures: Vec<String> = names
        .iter()
        .zip(&results)
        .filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n}: {}", first_line(e))))
        .collect();
    assert!(
        failures.is_empty(),
        "{} allowlisted cases fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
