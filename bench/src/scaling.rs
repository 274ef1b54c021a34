//! `onnxc bench --scaling`: compile time against model size, for the
//! generated `chain-N` (alternating Relu/Sigmoid) and `transformer-N`
//! (small encoder layers) models of `models::scaling`. Each compile is a
//! child `onnxc compile --emit llvm` process; the table gives the median
//! wall and CPU time per size and the ratio of CPU time per node to the
//! smallest size's (1.0 is linear).

use super::measure::{self, Stat};
use super::report::Machine;
use pipeline::{io_err, CmdResult, Failure};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// Default sizes, in ONNX nodes.
pub const SIZES: &[usize] = &[1000, 2500, 5000, 10_000, 20_000, 50_000];
pub const FAMILIES: &[&str] = &["chain", "transformer"];

struct Row {
    family: &'static str,
    nodes: u64,
    wall: Stat,
    cpu: Stat,
    peak_kib: u64,
}

/// Runs the benchmark; returns the Markdown table.
pub fn run(sizes: &[usize], repeat: usize, work: &Path) -> Result<String, Failure> {
    let exe = std::env::current_exe().map_err(|e| Failure::Io(format!("own path: {e}")))?;
    let mut rows = Vec::new();
    for family in FAMILIES {
        for &n in sizes {
            let name = format!("{family}-{n}");
            let model = models::generate(&name, &models::GenOptions::default())
                .map_err(|e| Failure::Io(format!("{name}: {e}")))?;
            let nodes = model.graph.as_ref().map_or(0, |g| g.node.len() as u64);
            let file = work.join(format!("{name}.onnx"));
            std::fs::write(&file, models::encode(&model)).map_err(|e| io_err("write", &file, e))?;
            let out = work.join(format!("{name}.ll"));
            let (mut wall, mut cpu, mut peak) = (Vec::new(), Vec::new(), 0);
            for _ in 0..repeat.max(1) {
                let mut cmd = Command::new(&exe);
                cmd.arg("compile").arg(&file).arg("-o").arg(&out);
                let r = measure::run(cmd, None, false).map_err(|e| io_err("run", &exe, e))?;
                if !r.ok {
                    return Err(Failure::Io(format!("{name}: compile failed: {}", r.stderr)));
                }
                wall.push(r.wall_s);
                cpu.push(r.cpu_s);
                peak = peak.max(r.peak_rss_kib);
            }
            let _ = std::fs::remove_file(&out);
            let _ = std::fs::remove_file(work.join(format!("{name}.weights.bin")));
            eprintln!("{name}: {:.2} s", Stat::of(&wall).median);
            rows.push(Row {
                family,
                nodes,
                wall: Stat::of(&wall),
                cpu: Stat::of(&cpu),
                peak_kib: peak,
            });
        }
    }
    Ok(table(&rows, &Machine::detect(), repeat))
}

fn table(rows: &[Row], machine: &Machine, repeat: usize) -> String {
    let mut s = String::new();
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let _ = writeln!(
        s,
        "Compile-time scaling (`onnxc bench --scaling`, {build} build, median of {repeat}): {}\n",
        machine.describe()
    );
    s.push_str(
        "| model | ONNX nodes | wall s | CPU s | CPU µs/node | vs smallest | peak RSS MiB |\n",
    );
    s.push_str("|---|---|---|---|---|---|---|\n");
    for family in FAMILIES {
        let fam: Vec<&Row> = rows.iter().filter(|r| r.family == *family).collect();
        let Some(first) = fam.first() else { continue };
        let per_node = |r: &Row| r.cpu.median / r.nodes.max(1) as f64;
        let base = per_node(first).max(1e-12);
        for r in &fam {
            let _ = writeln!(
                s,
                "| {family} | {} | {:.2} | {:.2} | {:.0} | {:.2}× | {:.0} |",
                r.nodes,
                r.wall.median,
                r.cpu.median,
                per_node(r) * 1e6,
                per_node(r) / base,
                r.peak_kib as f64 / 1024.0
            );
        }
    }
    s
}

/// `--scaling`: prints the table (and writes it with `--md`).
pub fn command(sizes: &[usize], repeat: usize, md: Option<&Path>, work: &Path) -> CmdResult {
    let text = run(sizes, repeat, work)?;
    print!("{text}");
    if let Some(p) = md {
        std::fs::write(p, &text).map_err(|e| io_err("write", p, e))?;
    }
    Ok(())
}
