//! Model loading benchmark (docs/BENCHMARKS.md, "Model loading"):
//!
//!     cargo run --release -p frontend --example load_bench [-- DIR]
//!
//! Writes a ~240 MiB model (60 MatMul+Relu layers, 1024x1024 f32 weights)
//! to DIR (default target/bench-models) once, in two forms: weights inside
//! the .onnx file, and weights in an external data file. Then loads and
//! imports each several times and reports the wall time and the memory the
//! process gained: anonymous pages (RSS minus file-backed pages, from
//! /proc/self/smaps_rollup) and heap bytes counted by the allocator.

use frontend::proto::tensor_proto::{DataLocation, DataType};
use frontend::proto::{
    tensor_shape_proto, type_proto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

const LAYERS: usize = 60;
const N: i64 = 1024;
const RUNS: usize = 7;

/// Counts live and peak heap bytes.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only adds counters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let live = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn value_info(name: &str) -> ValueInfoProto {
    let dim = |d| tensor_shape_proto::Dimension {
        value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
        denotation: String::new(),
    };
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: DataType::Float as i32,
                shape: Some(TensorShapeProto {
                    dim: vec![dim(1), dim(N)],
                }),
            })),
            denotation: String::new(),
        }),
        ..Default::default()
    }
}

/// Deterministic weight bytes (small floats from an LCG).
fn weights(seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = Vec::with_capacity((N * N * 4) as usize);
    for _ in 0..N * N {
        s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let v = ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) / 32.0;
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// The model; with `external`, weights go to `external` (a file name).
fn model(dir: &Path, external: Option<&str>) -> Result<ModelProto, Box<dyn Error>> {
    let mut g = GraphProto {
        name: "bench".into(),
        input: vec![value_info("x")],
        output: vec![value_info(&format!("h{LAYERS}"))],
        ..Default::default()
    };
    let mut data = match external {
        Some(f) => Some(std::io::BufWriter::new(std::fs::File::create(dir.join(f))?)),
        None => None,
    };
    let mut offset = 0usize;
    for i in 0..LAYERS {
        let w = weights(i as u64);
        let mut t = TensorProto {
            name: format!("w{i}"),
            dims: vec![N, N],
            data_type: DataType::Float as i32,
            ..Default::default()
        };
        match (&mut data, external) {
            (Some(file), Some(loc)) => {
                file.write_all(&w)?;
                let e = |k: &str, v: String| StringStringEntryProto {
                    key: k.into(),
                    value: v,
                };
                t.data_location = DataLocation::External as i32;
                t.external_data = vec![
                    e("location", loc.into()),
                    e("offset", offset.to_string()),
                    e("length", w.len().to_string()),
                ];
                offset += w.len();
            }
            _ => t.raw_data = w.into(),
        }
        g.initializer.push(t);
        let input = if i == 0 {
            "x".to_string()
        } else {
            format!("h{i}")
        };
        g.node.push(NodeProto {
            op_type: "MatMul".into(),
            name: format!("mm{i}"),
            input: vec![input, format!("w{i}")],
            output: vec![format!("m{i}")],
            ..Default::default()
        });
        g.node.push(NodeProto {
            op_type: "Relu".into(),
            name: format!("relu{i}"),
            input: vec![format!("m{i}")],
            output: vec![format!("h{}", i + 1)],
            ..Default::default()
        });
    }
    if let Some(mut f) = data {
        f.flush()?;
    }
    Ok(ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        producer_name: "load_bench".into(),
        graph: Some(g),
        ..Default::default()
    })
}

/// Writes both forms of the model unless they exist.
fn generate(dir: &Path) -> Result<(PathBuf, PathBuf), Box<dyn Error>> {
    std::fs::create_dir_all(dir)?;
    let inline = dir.join("bench_240m.onnx");
    let external = dir.join("bench_240m_ext.onnx");
    if !inline.exists() {
        let m = model(dir, None)?;
        std::fs::write(&inline, prost::Message::encode_to_vec(&m))?;
    }
    if !external.exists() {
        let m = model(dir, Some("bench_240m_ext.onnx.data"))?;
        std::fs::write(&external, prost::Message::encode_to_vec(&m))?;
    }
    Ok((inline, external))
}

/// (RSS, anonymous) bytes of this process.
fn memory() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("Rss:"), field("Anonymous:"))
}

struct Run {
    load: Duration,
    import: Duration,
    anon: i64,
    rss: i64,
    heap: usize,
    peak_heap: usize,
}

fn run(path: &Path) -> Result<Run, Box<dyn Error>> {
    let (rss0, anon0) = memory();
    let heap0 = LIVE.load(Relaxed);
    PEAK.store(heap0, Relaxed);
    let t0 = Instant::now();
    let loaded = frontend::load_model(path).map_err(|d| d.to_string())?;
    let t1 = Instant::now();
    let m = frontend::import_model(&loaded).map_err(|d| d.to_string())?;
    let t2 = Instant::now();
    let (rss1, anon1) = memory();
    let r = Run {
        load: t1 - t0,
        import: t2 - t1,
        anon: anon1 as i64 - anon0 as i64,
        rss: rss1 as i64 - rss0 as i64,
        heap: LIVE.load(Relaxed).saturating_sub(heap0),
        peak_heap: PEAK.load(Relaxed).saturating_sub(heap0),
    };
    if m.num_ops() < LAYERS * 3 {
        return Err("the import lost ops".into());
    }
    drop(m);
    drop(loaded);
    Ok(r)
}

fn mib(b: f64) -> String {
    format!("{:.2} MiB", b / (1024.0 * 1024.0))
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = std::env::args().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-models"),
        PathBuf::from,
    );
    let (inline, external) = generate(&dir)?;
    let weight_bytes = (LAYERS as f64) * (N * N * 4) as f64;
    println!(
        "model: {LAYERS} MatMul+Relu layers, weights {} ({} bytes); {RUNS} runs each, warm page cache",
        mib(weight_bytes),
        weight_bytes
    );
    println!("| form | file | load (median) | import (median) | total (min / median) | anon added | RSS added | heap live / peak |");
    println!("|---|---|---|---|---|---|---|---|");
    for (form, path) in [("inline", &inline), ("external data", &external)] {
        let mut runs = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            runs.push(run(path)?);
        }
        let median = |mut v: Vec<Duration>| {
            v.sort();
            v[v.len() / 2]
        };
        let total: Vec<Duration> = runs.iter().map(|r| r.load + r.import).collect();
        let min_total = total.iter().min().copied().unwrap_or_default();
        let worst = |f: fn(&Run) -> i64| runs.iter().map(f).max().unwrap_or(0) as f64;
        let file_len = std::fs::metadata(path)?.len() as f64;
        println!(
            "| {form} | {} | {:.2} ms | {:.2} ms | {:.2} / {:.2} ms | {} ({:.3}% of weights) | {} | {} / {} |",
            mib(file_len),
            median(runs.iter().map(|r| r.load).collect()).as_secs_f64() * 1e3,
            median(runs.iter().map(|r| r.import).collect()).as_secs_f64() * 1e3,
            min_total.as_secs_f64() * 1e3,
            median(total).as_secs_f64() * 1e3,
            mib(worst(|r| r.anon)),
            100.0 * worst(|r| r.anon) / weight_bytes,
            mib(worst(|r| r.rss)),
            mib(runs.iter().map(|r| r.heap).max().unwrap_or(0) as f64),
            mib(runs.iter().map(|r| r.peak_heap).max().unwrap_or(0) as f64),
        );
    }
    Ok(())
}
