//! The C entry of a compiled function, and the C driver `onnxc run` builds.
//!
//! Internally memref descriptors travel as LLVM aggregates by value, which C
//! cannot call. The entry takes two arrays of pointers to descriptors laid
//! out as MLIR's `{ptr allocated, ptr aligned, i64 offset, i64 sizes[R],
//! i64 strides[R]}` — in C, `3 + 2R` 64-bit words:
//!
//! ```c
//! void onnxc_entry(void **inputs, void **outputs);
//! ```
//!
//! Inputs are borrowed; each output descriptor is filled with a fresh buffer
//! the caller frees with `free(allocated)`. Elements below 8 bits (int4,
//! int2, float4) take a byte each in these buffers, as in compiled code;
//! the driver's files hold them that way too (`Elements::to_unpacked_bytes`).

use crate::llvm::types::{desc_type, global_name, llvm_type};
use ir::dialects::{func, op_error};
use ir::FuncOp;
use ir::{Diagnostic, Module, OpId, Result, Type};
use std::fmt::Write as _;

/// Looks up a function and checks that its signature has only memrefs.
fn memref_signature(m: &Module, name: &str) -> Result<(OpId, Vec<Type>, Vec<Type>)> {
    let f = m
        .lookup_symbol(name)
        .filter(|&f| m.is(f, FuncOp::Func))
        .ok_or_else(|| Diagnostic::error(format!("no function '@{name}' to export")))?;
    let ft =
        func::function_type(m, f).ok_or_else(|| op_error(m, f, "requires a 'function_type'"))?;
    for t in ft.inputs.iter().chain(&ft.results) {
        if t.as_memref().is_none() {
            return Err(op_error(
                m,
                f,
                format!("cannot export a function with a {t} argument or result"),
            ));
        }
    }
    Ok((f, ft.inputs.clone(), ft.results.clone()))
}

/// LLVM IR of `void <entry>(ptr inputs, ptr outputs)` calling `@func`.
pub fn emit_entry(m: &Module, func_name: &str, entry: &str) -> Result<String> {
    let (f, inputs, results) = memref_signature(m, func_name)?;
    let ty = |t: &Type| llvm_type(t).map_err(|e| op_error(m, f, e));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "define void {}(ptr %ins, ptr %outs) {{",
        global_name(entry)
    );
    out.push_str("entry:\n");
    let mut args = Vec::new();
    for (i, t) in inputs.iter().enumerate() {
        let lt = ty(t)?;
        let _ = writeln!(
            out,
            "  %ip{i} = getelementptr inbounds ptr, ptr %ins, i64 {i}"
        );
        let _ = writeln!(out, "  %i{i} = load ptr, ptr %ip{i}, align 8");
        let _ = writeln!(out, "  %a{i} = load {lt}, ptr %i{i}, align 8");
        args.push(format!("{lt} %a{i}"));
    }
    let result_types: Vec<String> = results.iter().map(ty).collect::<Result<_>>()?;
    let ret = match result_types.as_slice() {
        [] => "void".to_string(),
        [t] => t.clone(),
        many => format!("{{ {} }}", many.join(", ")),
    };
    let call = format!("call {ret} {}({})", global_name(func_name), args.join(", "));
    if result_types.is_empty() {
        let _ = writeln!(out, "  {call}");
    } else {
        let _ = writeln!(out, "  %r = {call}");
    }
    for (i, lt) in result_types.iter().enumerate() {
        let value = if result_types.len() == 1 {
            "%r".to_string()
        } else {
            let _ = writeln!(out, "  %r{i} = extractvalue {ret} %r, {i}");
            format!("%r{i}")
        };
        let _ = writeln!(
            out,
            "  %op{i} = getelementptr inbounds ptr, ptr %outs, i64 {i}"
        );
        let _ = writeln!(out, "  %o{i} = load ptr, ptr %op{i}, align 8");
        let _ = writeln!(out, "  store {lt} {value}, ptr %o{i}, align 8");
    }
    out.push_str("  ret void\n}\n");
    let _ = desc_type(0);
    Ok(out)
}

/// One runtime input of the driver: its element size and actual shape.
pub struct DriverInput {
    pub elem_bytes: usize,
    pub shape: Vec<i64>,
}

/// C source of a program that reads raw inputs, calls the entry, and writes
/// each output as `i64 rank, i64 dims[rank]`, then the packed elements.
/// Usage: `prog in_0.bin ... out_0.bin ...`.
pub fn c_driver(
    m: &Module,
    func_name: &str,
    entry: &str,
    inputs: &[DriverInput],
) -> Result<String> {
    let (f, in_types, out_types) = memref_signature(m, func_name)?;
    if in_types.len() != inputs.len() {
        return Err(op_error(
            m,
            f,
            format!("expects {} inputs, {} given", in_types.len(), inputs.len()),
        ));
    }
    let rank_from = func::output_rank_results(m, f);
    // Results past the declared outputs hold ranks decided at run time.
    let (ni, no) = (inputs.len(), func::declared_results(m, f));
    let mut s = String::from(DRIVER_PRELUDE);
    s.push_str(C_FILL_DESC);
    s.push_str(C_RELEASE_OUTPUT);
    s.push_str(C_FILE_IO);
    s.push_str(C_VARYING_RANK);
    let _ = writeln!(s, "extern void {entry}(void **ins, void **outs);\n");
    s.push_str("int main(int argc, char **argv) {\n");
    let _ = writeln!(
        s,
        "  if (argc != {}) {{ fprintf(stderr, \"usage: %s {ni} inputs then {no} outputs\\n\", argv[0]); return 2; }}",
        1 + ni + no
    );
    c_inputs(&mut s, inputs, &|i| {
        (String::new(), format!("argv[{}]", 1 + i))
    });
    let ranks: Vec<usize> = out_types
        .iter()
        .map(|t| t.shape().map_or(0, <[i64]>::len))
        .collect();
    c_descriptors(&mut s, "  ", "out", "outs", &ranks);
    let _ = writeln!(s, "  {entry}(ins, outs);");
    // Timing mode: ONNXC_REPEAT=N reruns the model N more times and prints
    // each run's wall and thread CPU time; the first (written) run warms
    // the caches.
    s.push_str("  const char *rep = getenv(\"ONNXC_REPEAT\");\n");
    s.push_str("  for (long r = 0, n = rep ? atol(rep) : 0; r < n; r++) {\n");
    c_descriptors(&mut s, "    ", "t", "touts", &ranks);
    s.push_str(
        "    int64_t t0ns = now_ns(CLOCK_MONOTONIC), c0ns = now_ns(CLOCK_THREAD_CPUTIME_ID);\n",
    );
    let _ = writeln!(s, "    {entry}(ins, touts);");
    s.push_str(
        "    int64_t c1ns = now_ns(CLOCK_THREAD_CPUTIME_ID), t1ns = now_ns(CLOCK_MONOTONIC);\n",
    );
    s.push_str("    fprintf(stderr, \"onnxc-run-ns %lld %lld\\n\", (long long)(t1ns - t0ns), (long long)(c1ns - c0ns));\n");
    for i in 0..out_types.len() {
        let _ = writeln!(s, "    release_output((void *)t{i}[0]);");
    }
    s.push_str("  }\n");
    for (i, t) in out_types.iter().enumerate().take(no) {
        let max = t.shape().map_or(0, <[i64]>::len);
        let elem = t.element_type();
        let bytes = crate::llvm::types::elem_size(elem).map_err(|e| op_error(m, f, e))?;
        let rank = match rank_from.as_ref().and_then(|r| r.get(i).copied().flatten()) {
            Some(k) => {
                let _ = writeln!(s, "  int rank{i} = rank_of(out{k});");
                let _ = writeln!(s, "  drop_leading(out{i}, {max}, rank{i});");
                format!("rank{i}")
            }
            None => max.to_string(),
        };
        let _ = writeln!(
            s,
            "  if (write_out(argv[{}], out{i}, {rank}, {bytes}) != 0) return 1;",
            1 + ni + i
        );
    }
    for i in 0..out_types.len() {
        let _ = writeln!(s, "  free((void *)out{i}[0]);");
    }
    for i in 0..ni {
        let _ = writeln!(s, "  free(d{i});");
    }
    s.push_str("  return 0;\n}\n");
    Ok(s)
}

/// `p0, p1, ...` for a C initializer, `0` when empty (C has no empty
/// initializers).
pub(crate) fn c_list(n: usize, prefix: &str) -> String {
    if n == 0 {
        return "0".into();
    }
    (0..n)
        .map(|i| format!("{prefix}{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Declares descriptors `{prefix}{i}` of the given ranks and the pointer
/// array `{array}` to them.
pub(crate) fn c_descriptors(
    s: &mut String,
    indent: &str,
    prefix: &str,
    array: &str,
    ranks: &[usize],
) {
    for (i, rank) in ranks.iter().enumerate() {
        let _ = writeln!(s, "{indent}int64_t {prefix}{i}[{}];", 3 + 2 * rank.max(&1));
    }
    let _ = writeln!(
        s,
        "{indent}void *{array}[] = {{ {} }};",
        c_list(ranks.len(), prefix)
    );
}

/// Reads each input into `d{i}` (from the C string `path(i).1`, after the
/// statements `path(i).0`), fills its descriptor `in{i}`, and declares
/// `ins`.
pub(crate) fn c_inputs(
    s: &mut String,
    inputs: &[DriverInput],
    path: &dyn Fn(usize) -> (String, String),
) {
    for (i, inp) in inputs.iter().enumerate() {
        let rank = inp.shape.len();
        let count: i64 = inp.shape.iter().product();
        let (setup, file) = path(i);
        let _ = writeln!(s, "  int64_t in{i}[{}];", 3 + 2 * rank.max(1));
        s.push_str(&setup);
        let _ = writeln!(
            s,
            "  void *d{i} = read_all({file}, (size_t){count} * {});",
            inp.elem_bytes
        );
        let dims: Vec<String> = inp.shape.iter().map(i64::to_string).collect();
        let dims = if dims.is_empty() {
            "0".to_string()
        } else {
            dims.join(", ")
        };
        let _ = writeln!(
            s,
            "  {{ int64_t dims[] = {{ {dims} }}; fill_desc(in{i}, d{i}, {rank}, dims); }}"
        );
    }
    let _ = writeln!(s, "  void *ins[] = {{ {} }};", c_list(inputs.len(), "in"));
}

const DRIVER_PRELUDE: &str = r#"/* generated by onnxc run */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
"#;

/// `release_output(block)`: an output block back to the model's block
/// cache (alloc_cache), so the next call's outputs are not page-faulted
/// in afresh (glibc unmaps large blocks on free). Shared by the run
/// driver and a library's `NAME_free_outputs`. Needs `<stdlib.h>`.
pub(crate) const C_RELEASE_OUTPUT: &str = r#"
/* Weak: a model without heap buffers defines no cache. */
__attribute__((weak, visibility("hidden"))) void __onnxc_release_untracked(void *block);
static void release_output(void *block) {
  if (__onnxc_release_untracked) __onnxc_release_untracked(block);
  else free(block);
}
"#;

/// C helpers shared by every generated C file: `fill_desc` builds a
/// packed descriptor. Needs `<stdint.h>` and `<string.h>`.
pub(crate) const C_FILL_DESC: &str = r#"
/* Descriptor words: allocated, aligned, offset, sizes[rank], strides[rank]. */
static void fill_desc(int64_t *d, void *data, int rank, const int64_t *dims) {
  memcpy(&d[0], &data, sizeof data);
  memcpy(&d[1], &data, sizeof data);
  d[2] = 0;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; i--) {
    d[3 + i] = dims[i];
    d[3 + rank + i] = stride;
    stride *= dims[i];
  }
}
"#;

/// Outputs whose rank is decided at each call (`func::OUTPUT_RANK_RESULTS`):
/// `rank_of` reads a rank result (a 0-d i64), `drop_leading` turns a
/// descriptor of the largest rank `max` into one of rank `r` (the dims
/// dropped are leading 1s), `free_desc` frees a result's buffer.
pub(crate) const C_VARYING_RANK: &str = r#"
static int rank_of(const int64_t *d) {
  int64_t *p;
  memcpy(&p, &d[1], sizeof p);
  return (int)p[d[2]];
}

static void drop_leading(int64_t *d, int max, int r) {
  int lead = max - r;
  for (int i = 0; i < r; i++) d[3 + i] = d[3 + lead + i];
  for (int i = 0; i < r; i++) d[3 + r + i] = d[3 + max + lead + i];
}

static void free_desc(const int64_t *d) {
  void *a;
  memcpy(&a, &d[0], sizeof a);
  free(a);
}
"#;

/// The drivers' file helpers: `read_all` (a whole input file, exits on
/// error) and `write_out` (an output descriptor in `onnxc run`'s format:
/// `i64 rank, i64 dims[rank]`, packed elements). Needs `<stdio.h>` too.
pub(crate) const C_FILE_IO: &str = r#"
static void *read_all(const char *path, size_t bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  void *p = malloc(bytes ? bytes : 1);
  if (!p || fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "%s: short read\n", path); exit(1); }
  fclose(f);
  return p;
}

static int write_out(const char *path, const int64_t *d, int rank, size_t esize) {
  if (rank > 64) { fprintf(stderr, "%s: rank %d too large\n", path, rank); return 1; }
  FILE *f = fopen(path, "wb");
  if (!f) { perror(path); return 1; }
  int64_t r = rank;
  fwrite(&r, 8, 1, f);
  int64_t count = 1;
  for (int i = 0; i < rank; i++) { fwrite(&d[3 + i], 8, 1, f); count *= d[3 + i]; }
  char *base;
  memcpy(&base, &d[1], sizeof base);
  int64_t idx[64] = {0};
  for (int64_t n = 0; n < count; n++) {
    int64_t off = d[2];
    for (int i = 0; i < rank; i++) off += idx[i] * d[3 + rank + i];
    fwrite(base + off * (int64_t)esize, esize, 1, f);
    for (int i = rank - 1; i >= 0; i--) { if (++idx[i] < d[3 + i]) break; idx[i] = 0; }
  }
  return fclose(f) != 0;
}

"#;
