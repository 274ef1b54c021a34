//! The public C interface of a compiled model (`onnxc compile --emit lib`):
//! a header `MODEL.h` and the C wrapper compiled into `libMODEL.so` next to
//! the model's LLVM IR. Every symbol starts with a per-model prefix, so
//! several models can live in one program. See docs/ABI.md.
//!
//! The wrapper checks the caller's tensors against the signature, builds
//! memref descriptors, calls the descriptor entry (`cabi::emit_entry`), and
//! hands back each output as a packed row-major buffer from `malloc`.

use crate::llvm::types::elem_size;
use ir::attr::Attribute;
use ir::dialects::{func, op_error};
use ir::FuncOp;
use ir::{Diagnostic, Module, Result, Type};
use std::fmt::Write as _;

/// One input or output of the exported function.
struct Port {
    name: String,
    dtype: i32,
    bytes: u64,
    /// Bits of a sub-byte element (0 for whole bytes) and whether it is a
    /// signed integer: the C API packs these as ONNX does.
    sub_bits: u32,
    signed: bool,
    shape: Vec<i64>,
    /// The symbol of each dynamic dim: the model's `dim_param`, else
    /// `NAME_d<k>` for an input (the frontend's name for it).
    dim_names: Vec<Option<String>>,
    /// For an output whose rank is decided at each call: the entry result
    /// holding that rank (`shape` is then its largest-rank form).
    rank_from: Option<usize>,
    /// For a ZipMap output: its class labels, as the header lists them.
    zipmap: Option<String>,
}

/// The ONNX `TensorProto.DataType` code of an element type.
fn onnx_dtype(t: &Type) -> Option<i32> {
    use ir::types::FloatKind as F;
    Some(match t {
        Type::Float(F::F32) => 1,
        Type::Float(F::F16) => 10,
        Type::Float(F::F64) => 11,
        Type::Float(F::BF16) => 16,
        Type::Float(F::F8E4M3FN) => 17,
        Type::Float(F::F8E4M3FNUZ) => 18,
        Type::Float(F::F8E5M2) => 19,
        Type::Float(F::F8E5M2FNUZ) => 20,
        Type::Float(F::F4E2M1FN) => 23,
        Type::Float(F::F8E8M0FNU) => 24,
        Type::Int { width: 1, .. } => 9,
        Type::Index => 7,
        Type::Int { width, sign } => {
            let unsigned = *sign == ir::types::Signedness::Unsigned;
            match (width, unsigned) {
                (8, true) => 2,
                (8, false) => 3,
                (16, true) => 4,
                (16, false) => 5,
                (32, false) => 6,
                (64, false) => 7,
                (32, true) => 12,
                (64, true) => 13,
                (4, true) => 21,
                (4, false) => 22,
                (2, true) => 25,
                (2, false) => 26,
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// A C identifier from a file stem (`libresnet-50.so` → `resnet_50`).
pub fn c_prefix(stem: &str) -> String {
    let stem = stem.strip_prefix("lib").unwrap_or(stem);
    let mut s: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert_str(0, "model_");
    }
    s
}

fn ports(m: &Module, func_name: &str) -> Result<(Vec<Port>, Vec<Port>)> {
    let f = m
        .lookup_symbol(func_name)
        .filter(|&f| m.is(f, FuncOp::Func))
        .ok_or_else(|| Diagnostic::error(format!("no function '@{func_name}' to export")))?;
    let ft =
        func::function_type(m, f).ok_or_else(|| op_error(m, f, "requires a 'function_type'"))?;
    let names = |attr: &str| -> Vec<String> {
        m.attr(f, attr)
            .and_then(Attribute::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let params = |attr: &str| -> Vec<Vec<String>> {
        let Some(a) = m.attr(f, attr).and_then(Attribute::as_array) else {
            return Vec::new();
        };
        a.iter()
            .map(|row| {
                row.as_array()
                    .map(|r| {
                        r.iter()
                            .map(|s| s.as_str().unwrap_or("").to_string())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect()
    };
    let rank_from = func::output_rank_results(m, f);
    let zipmap = m.attr(f, func::OUTPUT_ZIPMAP).and_then(Attribute::as_array);
    let make = |types: &[Type], names: Vec<String>, kind: &str| -> Result<Vec<Port>> {
        let declared = params(if kind == "input" {
            "onnx.input_dim_params"
        } else {
            "onnx.output_dim_params"
        });
        types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mt = t.as_memref().ok_or_else(|| {
                    op_error(m, f, format!("cannot export a function with a {t} {kind}"))
                })?;
                let dtype = onnx_dtype(&mt.elem).ok_or_else(|| {
                    op_error(m, f, format!("no C element type for {kind} {i} ({t})"))
                })?;
                let name = names
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("{kind}_{i}"));
                let dim_names = mt
                    .shape
                    .iter()
                    .enumerate()
                    .map(|(d, &size)| {
                        let param = declared
                            .get(i)
                            .and_then(|r| r.get(d))
                            .filter(|p| !p.is_empty());
                        match (size == ir::DYN, param) {
                            (false, _) => None,
                            (true, Some(p)) => Some(p.clone()),
                            (true, None) if kind == "input" => Some(format!("{name}_d{d}")),
                            (true, None) => None,
                        }
                    })
                    .collect();
                let bits = mt.elem.bit_width().unwrap_or(8);
                Ok(Port {
                    name,
                    dtype,
                    bytes: elem_size(&mt.elem).map_err(|e| op_error(m, f, e))?,
                    sub_bits: if bits < 8 && bits > 1 { bits } else { 0 },
                    signed: mt.elem.is_int() && !ir::builder::is_unsigned(&mt.elem),
                    shape: mt.shape.clone(),
                    dim_names,
                    rank_from: rank_from
                        .as_ref()
                        .filter(|_| kind == "output")
                        .and_then(|t| t.get(i).copied().flatten()),
                    zipmap: zipmap
                        .filter(|_| kind == "output")
                        .and_then(|z| z.get(i))
                        .and_then(labels_text),
                })
            })
            .collect()
    };
    // Results past the declared ones hold ranks decided at run time.
    let results = ft
        .results
        .get(..func::declared_results(m, f))
        .unwrap_or(&ft.results);
    Ok((
        make(&ft.inputs, names("input_names"), "input")?,
        make(results, names("output_names"), "output")?,
    ))
}

/// A ZipMap's labels (ints or strings) as the header lists them.
fn labels_text(a: &Attribute) -> Option<String> {
    let items: Vec<String> = a
        .as_array()?
        .iter()
        .map(|l| match (l.as_int(), l.as_str()) {
            (Some(v), _) => v.to_string(),
            (None, Some(s)) => format!("'{}'", c_escape(s)),
            _ => "?".into(),
        })
        .collect();
    Some(format!("[{}]", items.join(", ")))
}

/// `MODEL.h` for prefix `p`.
pub fn header(m: &Module, func_name: &str, p: &str) -> Result<String> {
    let (ins, outs) = ports(m, func_name)?;
    let up = p.to_ascii_uppercase();
    Ok(HEADER
        .replace("@SIG@", &signature(&ins, &outs))
        .replace("@P@", p)
        .replace("@UP@", &up)
        .replace("@NI@", &ins.len().to_string())
        .replace("@NO@", &outs.len().to_string()))
}

/// The comment lines of the header listing each port's dims by name.
fn signature(ins: &[Port], outs: &[Port]) -> String {
    let mut s = String::new();
    for (kind, list) in [("input", ins), ("output", outs)] {
        for (i, q) in list.iter().enumerate() {
            let dims: Vec<String> = q
                .shape
                .iter()
                .zip(&q.dim_names)
                .map(|(&d, n)| match n {
                    Some(n) => n.clone(),
                    None if d == ir::DYN => "?".into(),
                    None => d.to_string(),
                })
                .collect();
            let name = q.name.replace("*/", "* /");
            let dims = dims.join(", ").replace("*/", "* /");
            let varies = if q.rank_from.is_some() {
                " (rank decided at each call: these dims or fewer, from the left)"
            } else {
                ""
            };
            let zipmap = q
                .zipmap
                .as_ref()
                .map_or(String::new(), |l| {
                    format!(" (a ZipMap in the model: the probability of each class, classes {l})")
                })
                .replace("*/", "* /");
            let _ = writeln!(s, " *   {kind} {i} '{name}': [{dims}]{varies}{zipmap}");
        }
    }
    s
}

/// C statements returning `i + 1` when input `i` has a dim whose name an
/// earlier input dim has with another size.
fn symbol_checks(ins: &[Port]) -> String {
    let mut first: Vec<(&str, usize, usize)> = Vec::new();
    let mut s = String::new();
    for (i, q) in ins.iter().enumerate() {
        for (d, n) in q.dim_names.iter().enumerate() {
            let Some(n) = n.as_deref() else { continue };
            match first.iter().find(|(f, ..)| *f == n) {
                Some(&(_, j, e)) => {
                    let _ = writeln!(
                        s,
                        "  if (inputs[{i}].shape[{d}] != inputs[{j}].shape[{e}]) return {};",
                        i + 1
                    );
                }
                None => first.push((n, i, d)),
            }
        }
    }
    s
}

/// The C source of the wrapper, calling the descriptor entry `entry`.
pub fn wrapper(m: &Module, func_name: &str, p: &str, entry: &str) -> Result<String> {
    let (ins, outs) = ports(m, func_name)?;
    let mut s = header(m, func_name, p)?;
    s.push_str(WRAPPER_PRELUDE);
    s.push_str(WRAPPER_PIN_GOMP);
    s.push_str(WRAPPER_CHECKS);
    s.push_str(crate::cabi::C_FILL_DESC);
    s.push_str(crate::cabi::C_RELEASE_OUTPUT);
    s.push_str(crate::cabi::C_VARYING_RANK);
    s.push_str(WRAPPER_OUTPUTS);
    let _ = writeln!(s, "extern void {entry}(void **ins, void **outs);\n");
    for (kind, list) in [("input", &ins), ("output", &outs)] {
        write_port_tables(&mut s, p, kind, list);
    }
    let (ni, no) = (ins.len(), outs.len());
    // Entry results: the outputs, then the ranks of those that vary.
    let nr = outs
        .iter()
        .filter_map(|q| q.rank_from)
        .max()
        .map_or(no, |k| k + 1);
    let max_rank = ins
        .iter()
        .chain(&outs)
        .map(|q| q.shape.len())
        .max()
        .unwrap_or(0);
    // take_output walks outputs with a 64-entry index.
    if max_rank > 64 {
        return Err(Diagnostic::error(format!(
            "cannot export '@{func_name}': rank {max_rank} exceeds 64"
        )));
    }
    let words = 3 + 2 * max_rank.max(1);
    let _ = write!(
        s,
        r#"static int run_inner(const onnxc_tensor *inputs, onnxc_tensor *outputs, unsigned char **unpacked) {{
  int64_t in_desc[{ni1}][{words}], out_desc[{nr1}][{words}];
  void *ins[{ni1}], *outs[{nr1}];
  for (int i = 0; i < {ni}; i++) {{
    if (inputs[i].rank != input_ranks[i] || (!inputs[i].data && count_of(inputs[i].shape, inputs[i].rank) != 0))
      return i + 1;
    for (int d = 0; d < input_ranks[i]; d++)
      if (inputs[i].shape[d] < 0 || (input_shapes[i][d] >= 0 && inputs[i].shape[d] != input_shapes[i][d]))
        return i + 1;
  }}
{checks}  for (int i = 0; i < {ni}; i++) {{
    void *data = inputs[i].data;
    if (input_sub_bits[i]) {{
      unpacked[i] = unpack_sub(data, count_of(inputs[i].shape, inputs[i].rank), input_sub_bits[i], input_signed[i]);
      if (!unpacked[i]) return -1;
      data = unpacked[i];
    }}
    fill_desc(in_desc[i], data, input_ranks[i], inputs[i].shape);
    ins[i] = in_desc[i];
  }}
  for (int i = 0; i < {nr}; i++) outs[i] = out_desc[i];
  {entry}(ins, outs);
  int ranks[{no1}];
  for (int i = 0; i < {no}; i++)
    ranks[i] = output_rank_from[i] >= 0 ? rank_of(out_desc[output_rank_from[i]]) : output_max_ranks[i];
  for (int i = {no}; i < {nr}; i++) free_desc(out_desc[i]);
  for (int i = 0; i < {no}; i++) {{
    if (output_rank_from[i] >= 0) drop_leading(out_desc[i], output_max_ranks[i], ranks[i]);
    take_output(&outputs[i], out_desc[i], ranks[i], output_esize[i]);
    if (output_sub_bits[i]) pack_sub(&outputs[i], output_sub_bits[i]);
  }}
  return 0;
}}

/* One call: a failed check or allocation of the model (its message,
 * then abort) jumps back here; what the call allocated is freed. */
static int run_guarded(const onnxc_tensor *inputs, onnxc_tensor *outputs, char *err, size_t cap) {{
  jmp_buf jump;
  onnxc_frame frame = {{0, 0, 0}};
  unsigned char *unpacked[{ni1}] = {{0}};
  onnxc_frame *outer = __onnxc_frame;
  if (cap) err[0] = 0;
  check_err = err;
  check_cap = cap;
  __onnxc_frame = &frame;
  volatile int rc = -1;
  if (!setjmp(jump)) {{
    check_jump = &jump;
    rc = run_inner(inputs, outputs, unpacked);
  }} else {{
    for (int64_t i = 0; i < frame.n; i++) free(frame.items[i]);
  }}
  check_jump = 0;
  __onnxc_frame = outer;
  free(frame.items);
  for (int i = 0; i < {ni}; i++) free(unpacked[i]);
  return rc;
}}

int {p}_run(const onnxc_tensor *inputs, onnxc_tensor *outputs) {{
  return run_guarded(inputs, outputs, 0, 0);
}}

int {p}_run_checked(const onnxc_tensor *inputs, onnxc_tensor *outputs, char *err, size_t cap) {{
  return run_guarded(inputs, outputs, err, cap);
}}

void {p}_free_outputs(onnxc_tensor *outputs) {{
  for (int i = 0; i < {no}; i++) {{
    release_output(outputs[i].data);
    free((void *)outputs[i].shape);
    outputs[i].data = 0;
    outputs[i].shape = 0;
  }}
}}
"#,
        ni1 = ni.max(1),
        no1 = no.max(1),
        nr1 = nr.max(1),
        checks = symbol_checks(&ins),
    );
    Ok(s)
}

/// The static tables and accessors of the inputs or outputs (`kind`).
fn write_port_tables(s: &mut String, p: &str, kind: &str, list: &[Port]) {
    let n = list.len().max(1);
    let strs = |f: &dyn Fn(&Port) -> String| -> String {
        if list.is_empty() {
            "0".into()
        } else {
            list.iter().map(f).collect::<Vec<_>>().join(", ")
        }
    };
    let _ = writeln!(
        s,
        "static const char *const {kind}_names[{n}] = {{ {} }};",
        strs(&|q| format!("\"{}\"", c_escape(&q.name)))
    );
    let _ = writeln!(
        s,
        "static const int {kind}_dtypes[{n}] = {{ {} }};",
        strs(&|q| q.dtype.to_string())
    );
    let _ = writeln!(
        s,
        "static const int {kind}_ranks[{n}] = {{ {} }};",
        strs(&|q| match q.rank_from {
            Some(_) => "-1".into(),
            None => q.shape.len().to_string(),
        })
    );
    let _ = writeln!(
        s,
        "static const int {kind}_max_ranks[{n}] = {{ {} }};",
        strs(&|q| q.shape.len().to_string())
    );
    let _ = writeln!(
        s,
        "static const int {kind}_rank_from[{n}] = {{ {} }};",
        strs(&|q| q.rank_from.map_or(-1, |k| k as i64).to_string())
    );
    let _ = writeln!(
        s,
        "static const size_t {kind}_esize[{n}] = {{ {} }};",
        strs(&|q| q.bytes.to_string())
    );
    let _ = writeln!(
        s,
        "static const int {kind}_sub_bits[{n}] = {{ {} }};",
        strs(&|q| q.sub_bits.to_string())
    );
    let _ = writeln!(
        s,
        "static const int {kind}_signed[{n}] = {{ {} }};",
        strs(&|q| u8::from(q.signed).to_string())
    );
    for (i, q) in list.iter().enumerate() {
        let dims: Vec<String> = q
            .shape
            .iter()
            .map(|&d| if d == ir::DYN { -1 } else { d }.to_string())
            .collect();
        let _ = writeln!(
            s,
            "static const int64_t {kind}_shape{i}[{}] = {{ {} }};",
            dims.len().max(1),
            if dims.is_empty() {
                "0".into()
            } else {
                dims.join(", ")
            }
        );
    }
    let _ = writeln!(
        s,
        "static const int64_t *const {kind}_shapes[{n}] = {{ {} }};",
        if list.is_empty() {
            "0".into()
        } else {
            list.iter()
                .enumerate()
                .map(|(i, q)| match q.rank_from {
                    Some(_) => "0".into(),
                    None => format!("{kind}_shape{i}"),
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    for (i, q) in list.iter().enumerate() {
        let names: Vec<String> = q
            .dim_names
            .iter()
            .map(|n| {
                n.as_ref()
                    .map_or("0".into(), |n| format!("\"{}\"", c_escape(n)))
            })
            .collect();
        let names = if names.is_empty() {
            "0".into()
        } else {
            names.join(", ")
        };
        let _ = writeln!(
            s,
            "static const char *const {kind}_dimnames{i}[{}] = {{ {names} }};",
            q.dim_names.len().max(1)
        );
    }
    let tables: Vec<String> = (0..list.len())
        .map(|i| format!("{kind}_dimnames{i}"))
        .collect();
    let tables = if tables.is_empty() {
        "0".into()
    } else {
        tables.join(", ")
    };
    let _ = writeln!(
        s,
        "static const char *const *const {kind}_dimnames[{n}] = {{ {tables} }};"
    );
    let count = list.len();
    let _ = writeln!(
        s,
        "const char *{p}_{kind}_dim_name(int i, int d) {{ return i >= 0 && i < {count} && d >= 0 && d < {kind}_ranks[i] ? {kind}_dimnames[i][d] : 0; }}"
    );
    let _ = writeln!(
        s,
        "int {p}_num_{kind}s(void) {{ return {count}; }}\n\
         const char *{p}_{kind}_name(int i) {{ return i >= 0 && i < {count} ? {kind}_names[i] : 0; }}\n\
         int {p}_{kind}_dtype(int i) {{ return i >= 0 && i < {count} ? {kind}_dtypes[i] : -1; }}\n\
         int {p}_{kind}_rank(int i) {{ return i >= 0 && i < {count} ? {kind}_ranks[i] : -1; }}\n\
         const int64_t *{p}_{kind}_shape(int i) {{ return i >= 0 && i < {count} ? {kind}_shapes[i] : 0; }}\n"
    );
}

fn c_escape(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' && b != b'?' || b == b' ' {
            o.push(b as char);
        } else {
            let _ = write!(o, "\\{b:03o}");
        }
    }
    o
}

const HEADER: &str = r#"/* Generated by onnxc: the C interface of model '@P@'. See docs/ABI.md. */
#ifndef ONNXC_@UP@_H
#define ONNXC_@UP@_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#ifndef ONNXC_TENSOR_DEFINED
#define ONNXC_TENSOR_DEFINED
/* Element types: the codes of ONNX TensorProto.DataType. */
enum {
  ONNXC_FLOAT = 1, ONNXC_UINT8 = 2, ONNXC_INT8 = 3, ONNXC_UINT16 = 4,
  ONNXC_INT16 = 5, ONNXC_INT32 = 6, ONNXC_INT64 = 7, ONNXC_BOOL = 9,
  ONNXC_FLOAT16 = 10, ONNXC_DOUBLE = 11, ONNXC_UINT32 = 12,
  ONNXC_UINT64 = 13, ONNXC_BFLOAT16 = 16, ONNXC_FLOAT8E4M3FN = 17,
  ONNXC_FLOAT8E4M3FNUZ = 18, ONNXC_FLOAT8E5M2 = 19, ONNXC_FLOAT8E5M2FNUZ = 20,
  ONNXC_UINT4 = 21, ONNXC_INT4 = 22, ONNXC_FLOAT4E2M1 = 23,
  ONNXC_FLOAT8E8M0 = 24, ONNXC_UINT2 = 25, ONNXC_INT2 = 26
};
/* A dense tensor: `rank` sizes in `shape`, elements packed row-major.
 * The float8 types take a byte per element (their code); INT4, UINT4 and
 * FLOAT4E2M1 two per byte, INT2 and UINT2 four, as ONNX packs them:
 * element i in bits [i*b, (i+1)*b) of the buffer, low bits first. */
typedef struct onnxc_tensor {
  void *data;
  const int64_t *shape;
  int64_t rank;
} onnxc_tensor;
#endif

#define @UP@_NUM_INPUTS @NI@
#define @UP@_NUM_OUTPUTS @NO@

/* The signature; a name is a dynamic dim (the model's dim_param, or
 * NAME_d<k> for an unnamed input dim), '?' an output dim without one:
@SIG@ */

/* Signature queries; i out of range gives 0 / -1 / NULL. Shapes use -1 for
 * a dynamic dim. dim_name gives a dynamic dim's name, NULL for a static
 * dim. */
int @P@_num_inputs(void);
int @P@_num_outputs(void);
const char *@P@_input_name(int i);
const char *@P@_output_name(int i);
int @P@_input_dtype(int i);
int @P@_output_dtype(int i);
int @P@_input_rank(int i);
int @P@_output_rank(int i);
const int64_t *@P@_input_shape(int i);
const int64_t *@P@_output_shape(int i);
const char *@P@_input_dim_name(int i, int d);
const char *@P@_output_dim_name(int i, int d);

/* Runs the model on @UP@_NUM_INPUTS borrowed tensors of the declared
 * element types and shapes. Returns 0 and fills outputs[0..@UP@_NUM_OUTPUTS)
 * with newly allocated tensors (release them with @P@_free_outputs), or
 * returns k > 0 when input k-1 has the wrong rank, a wrong static dim, or a
 * dim whose name an earlier input's dim has with another size, or -1 when
 * a runtime check of the model fails (an index out of range, dynamic dims
 * an op needs equal that differ) or memory runs out, with the message on
 * stderr ("assertion failed: ...", "out of memory: node '...' ..."). A
 * call that fails leaves the outputs untouched and frees what it
 * allocated. Reentrant: calls share no mutable state. */
int @P@_run(const onnxc_tensor *inputs, onnxc_tensor *outputs);

/* @P@_run, with the message of a failed call (-1) in err (cap bytes,
 * NUL-terminated) instead of on stderr. */
int @P@_run_checked(const onnxc_tensor *inputs, onnxc_tensor *outputs, char *err, size_t cap);
void @P@_free_outputs(onnxc_tensor *outputs);

#ifdef __cplusplus
}
#endif
#endif
"#;

const WRAPPER_PRELUDE: &str = r#"#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int64_t count_of(const int64_t *shape, int64_t rank) {
  int64_t n = 1;
  for (int64_t i = 0; i < rank; i++) n *= shape[i];
  return n;
}

"#;

/// Linker flags the wrapper needs: a failed check of the model's code
/// (`cf.assert`: its message to stderr, by `fputs` or the `fwrite` clang
/// makes of it, then `abort`) reaches `WRAPPER_CHECKS`, which
/// `_run_checked` turns into a return.
pub const LINK_ARGS: &[&str] = &["-Wl,--wrap=abort", "-Wl,--wrap=fputs", "-Wl,--wrap=fwrite"];

/// libgomp's worker threads outlive the parallel regions that started
/// them; if unloading this library also unloaded libgomp (its only user),
/// they would wake in unmapped code. Marking libgomp NODELETE when the
/// library loads keeps it for the process (a serial build does not link
/// it: the NOLOAD open is then a no-op).
const WRAPPER_PIN_GOMP: &str = r#"#include <dlfcn.h>

__attribute__((constructor)) static void onnxc_pin_gomp(void) {
  dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

"#;

const WRAPPER_CHECKS: &str = r#"#include <setjmp.h>
#include <stdio.h>

/* Set while this thread is inside a call of the model. */
static _Thread_local jmp_buf *check_jump;
static _Thread_local char *check_err;
static _Thread_local size_t check_cap;

/* The heap blocks this thread's call holds: the model's allocation
 * helpers record them (alloc_track); a failed call frees them. Weak: a
 * model without heap buffers does not define it. */
typedef struct { void **items; int64_t n, cap; } onnxc_frame;
__attribute__((weak, visibility("hidden"))) _Thread_local onnxc_frame *__onnxc_frame;

int __real_fputs(const char *s, FILE *f);
size_t __real_fwrite(const void *p, size_t size, size_t n, FILE *f);
void __real_abort(void);

/* Appends n bytes to the message (truncated to check_cap - 1). */
static void check_note(const char *s, size_t n) {
  size_t len = check_cap ? strlen(check_err) : 0;
  if (len + 1 >= check_cap) return;
  if (n > check_cap - 1 - len) n = check_cap - 1 - len;
  memcpy(check_err + len, s, n);
  check_err[len + n] = 0;
}

/* Messages of a failed call go to the caller's buffer when it gave one. */
int __wrap_fputs(const char *s, FILE *f) {
  if (!check_jump || !check_cap || f != stderr) return __real_fputs(s, f);
  check_note(s, strlen(s));
  return 0;
}

size_t __wrap_fwrite(const void *p, size_t size, size_t n, FILE *f) {
  if (!check_jump || !check_cap || f != stderr) return __real_fwrite(p, size, n, f);
  check_note(p, size * n);
  return n;
}

void __wrap_abort(void) {
  if (check_jump) longjmp(*check_jump, 1);
  __real_abort();
}

"#;

const WRAPPER_OUTPUTS: &str = r#"
/* 4- and 2-bit elements: the compiled code holds one per byte (signed
 * ones sign-extended), the API packs them as ONNX does. */
static unsigned char *unpack_sub(const void *data, int64_t count, int bits, int is_signed) {
  const unsigned char *p = data;
  unsigned char *out = malloc(count ? (size_t)count : 1);
  if (!out) return 0;
  int mask = (1 << bits) - 1;
  for (int64_t n = 0; n < count; n++) {
    int64_t bit = n * bits;
    int v = (p[bit / 8] >> (bit % 8)) & mask;
    if (is_signed && (v >> (bits - 1))) v -= 1 << bits;
    out[n] = (unsigned char)v;
  }
  return out;
}

/* Packs a byte-per-element output in place (byte k gathers elements at
 * k and after, which are read before it is written). */
static void pack_sub(onnxc_tensor *t, int bits) {
  int64_t count = count_of(t->shape, t->rank), per = 8 / bits;
  unsigned char *p = t->data;
  int mask = (1 << bits) - 1;
  for (int64_t k = 0; k * per < count; k++) {
    int byte = 0;
    for (int64_t j = 0; j < per && k * per + j < count; j++)
      byte |= (p[k * per + j] & mask) << (j * bits);
    p[k] = (unsigned char)byte;
  }
}

/* Moves an output descriptor into a tensor: the buffer itself when it is
 * packed row-major from its start, otherwise a packed copy. */
static void take_output(onnxc_tensor *t, const int64_t *d, int rank, size_t esize) {
  int64_t *shape = malloc(sizeof(int64_t) * (rank ? rank : 1));
  int64_t count = 1, stride = 1;
  int packed = d[2] == 0;
  for (int i = rank - 1; i >= 0; i--) {
    shape[i] = d[3 + i];
    count *= d[3 + i];
    if (d[3 + i] != 1 && d[3 + rank + i] != stride) packed = 0;
    stride *= d[3 + i];
  }
  char *alloc, *base;
  memcpy(&alloc, &d[0], sizeof alloc);
  memcpy(&base, &d[1], sizeof base);
  t->shape = shape;
  t->rank = rank;
  if (packed && alloc == base) {
    t->data = base;
    return;
  }
  char *out = malloc(count ? (size_t)count * esize : 1);
  int64_t idx[64] = {0};
  for (int64_t n = 0; n < count; n++) {
    int64_t off = d[2];
    for (int i = 0; i < rank; i++) off += idx[i] * d[3 + rank + i];
    memcpy(out + n * (int64_t)esize, base + off * (int64_t)esize, esize);
    for (int i = rank - 1; i >= 0; i--) { if (++idx[i] < d[3 + i]) break; idx[i] = 0; }
  }
  free(alloc);
  t->data = out;
}

"#;
