//! Outlined kernels, split modules and the weights object, executed: every
//! program of `tests/programs` goes through `outline-kernels`, is emitted
//! as several LLVM modules (each verified by opt 19 and 14), compiled
//! separately, linked and run (also under valgrind) and must print what
//! its `// OUT:` lines say; a model-sized global goes through the ELF
//! weights object.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{run, scratch, tools, verify_with_opt};
use std::path::{Path, PathBuf};
use std::process::Command;

fn expected(src: &str) -> (i32, String) {
    let (mut code, mut out) = (0, String::new());
    for line in src.lines() {
        if let Some(v) = line.strip_prefix("// EXIT: ") {
            code = v.trim().parse().expect("EXIT value");
        } else if let Some(v) = line.strip_prefix("// OUT: ") {
            out.push_str(v);
            out.push('\n');
        } else if line.trim_end() == "// OUT:" {
            out.push('\n');
        }
    }
    (code, out)
}

/// Verifies and compiles each part, writes the weights object when there
/// are weights, links, and runs the program natively and under valgrind.
fn build_parts(
    name: &str,
    parts: &[String],
    m: &ir::Module,
    layout: &lower::WeightLayout,
) -> (Option<i32>, String) {
    let t = tools();
    let dir = scratch(name);
    let mut objects: Vec<PathBuf> = Vec::new();
    for (i, ll) in parts.iter().enumerate() {
        let src = dir.join(format!("part{i}.ll"));
        std::fs::write(&src, ll).unwrap();
        verify_with_opt(&t, name, &src, ll);
        let obj = dir.join(format!("part{i}.o"));
        let c = run(Command::new(&t.clang)
            .args(["-O2", "-w", "-c"])
            .args(lower::llvm::CODE_MODEL_ARGS)
            .arg(&src)
            .arg("-o")
            .arg(&obj));
        assert_eq!(c.code, Some(0), "{name} part {i}: {}\n{ll}", c.stderr);
        objects.push(obj);
    }
    if !layout.is_empty() {
        let w = dir.join("weights.o");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&w).unwrap());
        let machine = lower::elf::host_machine().expect("an ELF host");
        lower::elf::write_weights_object(m, layout, machine, &mut f).unwrap();
        drop(f);
        // binutils' reader accepts the object: the symbol is global, hidden,
        // of the blob's size, in the read-only section.
        let r = run(Command::new("readelf")
            .args(["-W", "-h", "-S", "-s"])
            .arg(&w));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert!(r.stderr.is_empty(), "readelf: {}", r.stderr);
        let sym = format!(" {} OBJECT  GLOBAL HIDDEN ", layout.size);
        assert!(
            r.stdout
                .lines()
                .any(|l| l.contains(&sym) && l.ends_with("__onnxc_weights")),
            "{}",
            r.stdout
        );
        // On x86-64 the blob is large data (flag `l`), apart from the
        // code's own read-only data.
        let section = r
            .stdout
            .lines()
            .find(|l| l.contains(&format!("{} PROGBITS", lower::llvm::WEIGHTS_SECTION)))
            .unwrap_or_else(|| panic!("no weights section: {}", r.stdout));
        let flags = section.split_whitespace().rev().nth(3).unwrap_or("");
        let want = if lower::llvm::LARGE_WEIGHTS {
            "Al"
        } else {
            "A"
        };
        assert_eq!(flags, want, "{section}");
        objects.push(w);
    }
    let exe = dir.join(name);
    let c = run(Command::new(&t.clang)
        .args(&objects)
        .args(["-lm", "-Wl,--as-needed", "-lgomp"])
        .arg("-o")
        .arg(&exe));
    assert_eq!(c.code, Some(0), "{name}: link: {}", c.stderr);
    let r = run(&mut Command::new(&exe));
    let vg = t.valgrind.as_ref().expect("valgrind");
    let v = run(Command::new(vg)
        .args(["-q", "--error-exitcode=99", "--leak-check=full"])
        .arg(&exe));
    assert_ne!(v.code, Some(99), "{name}: valgrind: {}", v.stderr);
    assert_eq!(
        v.stdout, r.stdout,
        "{name}: valgrind run prints differently"
    );
    let _ = std::fs::remove_dir_all(&dir);
    (r.code, r.stdout)
}

fn outlined(name: &str, src: &str) -> ir::Module {
    let mut m = ir::text::parse_module(src, name).unwrap_or_else(|d| panic!("{d}"));
    lower::outline::outline_kernels(&mut m).unwrap();
    lower::noalias::mark_noalias(&mut m);
    ir::verify(&m).unwrap_or_else(|d| panic!("{name} after outlining: {d}"));
    lower::scf_to_cf::lower_scf(&mut m).unwrap();
    ir::verify(&m).unwrap_or_else(|d| panic!("{name} after scf-to-cf: {d}"));
    m
}

#[test]
fn programs_run_outlined_and_split() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "mlir"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "programs found: {files:?}");
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(&path).unwrap();
        let (code, out) = expected(&src);
        let m = outlined(&name, &src);
        let (parts, layout) =
            lower::llvm::emit_module_parts(&m, &lower::EmitOptions::default(), 3, 1).unwrap();
        let (got_code, got) = build_parts(&name, &parts, &m, &layout);
        assert_eq!(got_code, Some(code), "{name}: exit code");
        assert_eq!(got, out, "{name}: output");
    }
}

/// Two identical element-wise nests over a 3001-element weight global
/// share one kernel; the weights come from the object onnxc writes (a
/// blob whose size is not a multiple of 8: padding before the symbols).
#[test]
fn weights_object_feeds_shared_kernels() {
    let n = 3001;
    let values: Vec<String> = (0..n).map(|i| format!("{}.0", i % 7)).collect();
    // sum(w) = 428 full cycles of 0..6 (21 each) + 0 + 1 + 2 + 3 + 4 = 8998;
    // b = 2w + w: 3 * 8998 = 26994.
    let src = format!(
        r#"
memref.global "private" constant @w : memref<{n}xf32> = dense<[{vals}]>
func.func private @printF32(f32)
func.func private @printNewline()
func.func @main() {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @w : memref<{n}xf32>
  %a = memref.alloc() : memref<{n}xf32>
  %b = memref.alloc() : memref<{n}xf32>
  scf.for %i = %c0 to %cn step %c1 {{
    %v = memref.load %w[%i] : memref<{n}xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %a[%i] : memref<{n}xf32>
  }}
  scf.for %i = %c0 to %cn step %c1 {{
    %v = memref.load %a[%i] : memref<{n}xf32>
    %u = memref.load %w[%i] : memref<{n}xf32>
    %s = arith.addf %v, %u : f32
    memref.store %s, %b[%i] : memref<{n}xf32>
  }}
  scf.for %i = %c0 to %cn step %c1 {{
    %v = memref.load %w[%i] : memref<{n}xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %a[%i] : memref<{n}xf32>
  }}
  %sum = scf.for %i = %c0 to %cn step %c1 iter_args(%acc = %zero) -> (f32) {{
    %v = memref.load %b[%i] : memref<{n}xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }}
  func.call @printF32(%sum) : (f32) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %a : memref<{n}xf32>
  memref.dealloc %b : memref<{n}xf32>
  return
}}
"#,
        vals = values.join(", ")
    );
    let m = outlined("weights", &src);
    let kernels = m
        .top_level_ops("func.func")
        .into_iter()
        .filter(|&f| m.attr(f, lower::outline::KERNEL_ATTR).is_some())
        .count();
    assert_eq!(kernels, 2, "the first and third nests share a kernel");
    let (parts, layout) =
        lower::llvm::emit_module_parts(&m, &lower::EmitOptions::default(), 2, 1).unwrap();
    assert_eq!(parts.len(), 2);
    // Kernel 0 reads the global and writes `a`, kernel 1 reads the global
    // and `a` and writes `b`: all distinct buffers.
    let text = parts.concat();
    assert_eq!(text.matches("ptr noalias").count(), 5, "{text}");
    assert_eq!(layout.size, 4 * n as u64);
    for p in &parts {
        // Inlined, the 3001 floats alone would be over 36 KB of text.
        assert!(p.len() < 20_000, "weights stay out of the IR");
        assert!(p.contains("@__onnxc_weights = external hidden constant [12004 x i8]"));
    }
    let (code, out) = build_parts("weights", &parts, &m, &layout);
    assert_eq!(code, Some(0));
    assert_eq!(out, "26994\n");
}
