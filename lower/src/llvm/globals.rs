//! `memref.global` → an LLVM global holding the elements as a flat array
//! (the descriptor made by `memref.get_global` does the indexing).
//!
//! Large constant globals can go to a sidecar binary instead (see
//! [`WeightSink`]): their bytes, in the declared element type, are appended
//! to the sidecar at 64-byte aligned offsets, and the module pulls the
//! whole file in with one module-level `.incbin` into a read-only section
//! under the local symbol `__onnxc_weights`. `memref.get_global` of such a
//! global addresses `__onnxc_weights + offset`. The IR text stays small
//! whatever the size of the weights.

use super::memref::HEAP_ALIGN;
use super::parts::Item;
use super::types::{elem_size, escape_bytes, float_literal, global_name, int_literal, storage};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::elements::{Elements, NumClass};
use ir::MemrefOp;
use ir::{Module, OpId, Result, Type};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Where large constant initializers go instead of the IR text.
pub struct WeightSink<'a> {
    /// The path the emitted `.incbin` names (absolute, so that the `.ll`
    /// builds from any directory).
    pub incbin_path: String,
    /// The sidecar's bytes are written here, from offset 0.
    pub out: &'a mut dyn std::io::Write,
}

/// The asm symbol of the sidecar's contents.
pub const WEIGHTS_SYM: &str = "__onnxc_weights";

/// On x86-64 the weights live in a large-data section (`SHF_X86_64_LARGE`)
/// and the code, built with the medium code model (`CODE_MODEL_ARGS`),
/// reaches them through 64-bit offsets: the linker places that section
/// apart, so weights of any size cannot push the code's 32-bit
/// PC-relative references (strings, other globals) out of range, as a
/// 2.2 GB `.rodata` did. Elsewhere the blob is ordinary read-only data.
/// (The IR itself carries no code model: it stays readable by LLVM 14.)
pub const LARGE_WEIGHTS: bool = cfg!(target_arch = "x86_64");

/// Clang's flags for code that links with the weights: under the medium
/// code model, globals over 64 KiB (the blob's declaration included) are
/// large data.
pub const CODE_MODEL_ARGS: &[&str] = match LARGE_WEIGHTS {
    true => &["-mcmodel=medium"],
    false => &[],
};

/// The section holding the blob.
pub const WEIGHTS_SECTION: &str = match LARGE_WEIGHTS {
    true => ".lrodata.onnxc_weights",
    false => ".rodata.onnxc_weights",
};

/// Globals moved to the sidecar: symbol name → byte offset.
pub(crate) type SidecarMap = HashMap<String, u64>;

/// Where the sidecar globals sit in the weights blob.
#[derive(Debug, Default)]
pub struct WeightLayout {
    /// Per global: its op, byte offset and byte length.
    entries: Vec<(OpId, u64, u64)>,
    /// Total bytes.
    pub size: u64,
}

impl WeightLayout {
    /// True if no global goes to the blob.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the blob: each global's bytes at its offset, zeros between.
    /// Stored bytes are written as they are; the others (strided views,
    /// lazy transforms, packed weights) are computed one global at a time
    /// into one reused buffer.
    pub fn write(&self, m: &Module, out: &mut dyn std::io::Write) -> Result<()> {
        let mut at = 0u64;
        let mut buf = Vec::new();
        for &(op, offset, len) in &self.entries {
            let Some((_, e)) = sidecar_bytes(m, op) else {
                return Err(op_error(m, op, "changed after the weights were laid out"));
            };
            let io = |e: std::io::Error| op_error(m, op, format!("cannot write the weights: {e}"));
            let pad = offset.saturating_sub(at);
            std::io::copy(&mut std::io::Read::take(std::io::repeat(0), pad), out).map_err(io)?;
            let bytes = match e.contiguous_bytes() {
                Some(b) => b,
                None => {
                    buf.clear();
                    e.pack_range(0, e.len(), &mut buf);
                    &buf[..]
                }
            };
            if bytes.len() as u64 != len {
                return Err(op_error(m, op, "initializer size does not match its type"));
            }
            out.write_all(bytes).map_err(io)?;
            at = offset + len;
        }
        Ok(())
    }
}

/// Lays out every large constant global in the weights blob (64-byte
/// aligned offsets, declared element type).
pub(crate) fn plan_weights(m: &Module) -> (SidecarMap, WeightLayout) {
    let mut map = SidecarMap::new();
    let mut layout = WeightLayout::default();
    for op in m.block_ops(m.body()) {
        if !m.is(op, MemrefOp::Global) {
            continue;
        }
        let Some((name, len)) = sidecar_bytes(m, op).and_then(|(n, e)| {
            let size = m
                .attr(op, "type")
                .and_then(Attribute::as_type)
                .and_then(Type::as_memref)
                .and_then(|mt| elem_size(&mt.elem).ok())?;
            Some((n, size.checked_mul(e.len() as u64)?))
        }) else {
            continue;
        };
        let offset = layout.size.next_multiple_of(HEAP_ALIGN as u64);
        map.insert(name.to_string(), offset);
        layout.entries.push((op, offset, len));
        layout.size = offset + len;
    }
    (map, layout)
}

/// The declaration of the weights blob, preceded, with `incbin`, by the
/// module-level asm that pulls the file in (empty without weights).
pub(crate) fn weights_decl(layout: &WeightLayout, incbin: Option<&str>) -> String {
    let mut text = String::new();
    if layout.is_empty() {
        return text;
    }
    let size = layout.size;
    if let Some(path) = incbin {
        let path = escape_bytes(path.replace('"', "\\\"").as_bytes());
        for line in [
            format!(
                "\\09.section\\09{WEIGHTS_SECTION},\\22{}\\22,@progbits",
                if LARGE_WEIGHTS { "al" } else { "a" }
            ),
            "\\09.p2align\\096".to_string(),
            format!("{WEIGHTS_SYM}:"),
            format!("\\09.incbin\\09\\22{path}\\22"),
            format!("\\09.size\\09{WEIGHTS_SYM}, {size}"),
            "\\09.text".to_string(),
        ] {
            let _ = writeln!(text, "module asm \"{line}\"");
        }
    }
    let _ = writeln!(
        text,
        "@{WEIGHTS_SYM} = external hidden constant [{size} x i8], align {HEAP_ALIGN}"
    );
    text
}

/// Writes every large constant global's bytes to `sink`; returns their
/// offsets and the module-level asm and declaration that pull them in
/// (empty when no global qualifies).
pub(crate) fn write_sidecar(m: &Module, sink: &mut WeightSink<'_>) -> Result<(SidecarMap, String)> {
    let (map, layout) = plan_weights(m);
    layout.write(m, sink.out)?;
    Ok((map, weights_decl(&layout, Some(&sink.incbin_path))))
}

/// The name and elements of a global that belongs in the sidecar:
/// constant, initialized, not all zeros, above the array-literal size, and
/// stored in whole bytes per element.
fn sidecar_bytes(m: &Module, op: OpId) -> Option<(&str, &Elements)> {
    m.attr(op, "constant")?;
    let name = m.attr(op, "sym_name").and_then(Attribute::as_str)?;
    let mt = m
        .attr(op, "type")
        .and_then(Attribute::as_type)
        .and_then(Type::as_memref)?;
    let n = usize::try_from(mt.num_elements()?).ok()?;
    let Some(Attribute::Elements(e)) = m.attr(op, "initial_value") else {
        return None;
    };
    let size = elem_size(&mt.elem).ok()?;
    let byte_exact = u64::from(e.dtype().bits()) == size * 8;
    if e.len() != n || n <= MAX_ARRAY_LITERAL || !byte_exact || all_zero(e) {
        return None;
    }
    Some((name, e))
}

/// True when every element is zero. Packed weights are computed only when
/// written, so they count as nonzero rather than being computed twice.
fn all_zero(e: &Elements) -> bool {
    match e.contiguous_bytes() {
        Some(b) => b.iter().all(|&x| x == 0),
        None => !e.is_generated() && e.iter().all(|v| v.u64() == 0),
    }
}

/// Up to this many elements, initializers are written as typed arrays.
const MAX_ARRAY_LITERAL: usize = 1024;

/// The definition of a `memref.global` (`None` when its bytes are in the
/// weights blob).
pub(crate) fn emit_global(m: &Module, op: OpId, sidecar: &SidecarMap) -> Result<Option<Item>> {
    let err = |msg: String| op_error(m, op, msg);
    let name = m
        .attr(op, "sym_name")
        .and_then(Attribute::as_str)
        .ok_or_else(|| err("requires a 'sym_name'".into()))?;
    let mt = m
        .attr(op, "type")
        .and_then(Attribute::as_type)
        .and_then(Type::as_memref)
        .ok_or_else(|| err("requires a memref 'type'".into()))?;
    let n = mt
        .num_elements()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| err("type must have a static shape".into()))?;
    let (elem, _) = storage(&mt.elem).map_err(err)?;
    elem_size(&mt.elem).map_err(err)?;
    let align = m
        .attr(op, "alignment")
        .and_then(Attribute::as_int)
        .unwrap_or(HEAP_ALIGN)
        .max(HEAP_ALIGN);
    let private = m.attr(op, "sym_visibility").and_then(Attribute::as_str) == Some("private");
    let kind = if m.attr(op, "constant").is_some() {
        "constant"
    } else {
        "global"
    };
    if sidecar.contains_key(name) {
        return Ok(None);
    }
    let g = global_name(name);
    let (ty, init) = match m.attr(op, "initial_value") {
        None if !private => {
            return Ok(Some(Item {
                before: format!("{g} = external global [{n} x {elem}], align {align}\n"),
                internal: false,
                after: String::new(),
                decl: None,
            }));
        }
        Some(Attribute::Elements(e)) => initializer(e, &mt.elem, n).map_err(err)?,
        // `uninitialized`: zeroed storage.
        _ => (format!("[{n} x {elem}]"), "zeroinitializer".into()),
    };
    let vis = if private { "hidden " } else { "" };
    Ok(Some(Item {
        before: format!("{g} = "),
        internal: private,
        after: format!("{kind} {ty} {init}, align {align}\n"),
        decl: Some(format!("{g} = external {vis}{kind} {ty}, align {align}\n")),
    }))
}

/// The global's type and initializer for `e`.
fn initializer(e: &Elements, elem: &Type, n: usize) -> Result<(String, String), String> {
    let (ety, narrow) = storage(elem)?;
    if e.len() != n {
        return Err(format!(
            "initial value has {} elements, the type {n}",
            e.len()
        ));
    }
    let array_ty = format!("[{n} x {ety}]");
    if all_zero(e) {
        return Ok((array_ty, "zeroinitializer".into()));
    }
    let bits = e.dtype().bits();
    let byte_exact = elem_size(elem).is_ok_and(|s| u64::from(bits) == s * 8);
    if n > MAX_ARRAY_LITERAL && byte_exact {
        let bytes = e.to_contiguous_bytes();
        return Ok((
            format!("[{} x i8]", bytes.len()),
            format!("c\"{}\"", escape_bytes(&bytes)),
        ));
    }
    let class = e.dtype().class();
    // Sub-byte integers are stored as bytes (`types::storage`).
    let width = match narrow {
        Some(_) => 8,
        None => elem.bit_width().unwrap_or(64),
    };
    let mut items = Vec::with_capacity(n);
    for v in e.iter() {
        let lit = match (elem, class) {
            (Type::Float(k), _) => float_literal(v.f64(), *k)?,
            (_, NumClass::Signed) => int_literal(v.i64(), width),
            (_, NumClass::Unsigned) => int_literal(v.u64() as i64, width),
            (_, NumClass::Float) => return Err("float data for an integer global".into()),
        };
        items.push(format!("{ety} {lit}"));
    }
    Ok((array_ty, format!("[{}]", items.join(", "))))
}
