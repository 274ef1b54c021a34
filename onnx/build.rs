//! Generates the op kinds, schemas and typed views from `ops.table`.
//!
//! The table grammar is described at the top of `ops.table`. Errors in
//! the table stop the build with the line they are on.

use std::fmt::Write as _;
use std::path::PathBuf;

struct Param {
    name: String,
    arity: &'static str,
}

struct Attr {
    name: String,
    ty: String,
    /// `None`: required; `Some(None)`: optional without default.
    default: Option<Option<String>>,
}

struct Row {
    line: usize,
    name: String,
    domain: String,
    versions: Vec<i64>,
    removed: Option<i64>,
    inputs: Vec<Param>,
    outputs: Vec<Param>,
    attrs: Vec<Attr>,
}

struct Table {
    rows: Vec<Row>,
    effects: Vec<String>,
    terminators: Vec<String>,
}

fn main() -> Result<(), String> {
    println!("cargo:rerun-if-changed=ops.table");
    let text = std::fs::read_to_string("ops.table").map_err(|e| format!("ops.table: {e}"))?;
    let table = parse(&text)?;
    let code = generate(&table)?;
    let out = PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?);
    std::fs::write(out.join("ops.rs"), code).map_err(|e| e.to_string())
}

/// Rows with their continuation lines joined, comments dropped.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines: Vec<(usize, String)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("");
        if line.trim().is_empty() {
            continue;
        }
        match lines.last_mut() {
            Some((_, prev)) if line.starts_with(' ') => {
                prev.push(' ');
                prev.push_str(line.trim());
            }
            _ => lines.push((i + 1, line.trim().to_string())),
        }
    }
    lines
}

fn parse(text: &str) -> Result<Table, String> {
    let mut table = Table {
        rows: Vec::new(),
        effects: Vec::new(),
        terminators: Vec::new(),
    };
    for (line, row) in logical_lines(text) {
        let err = |msg: String| format!("ops.table:{line}: {msg}");
        let words: Vec<&str> = row.split_whitespace().collect();
        match words.first() {
            Some(&"%effects") => table
                .effects
                .extend(words[1..].iter().map(|s| s.to_string())),
            Some(&"%terminator") => {
                table
                    .terminators
                    .extend(words[1..].iter().map(|s| s.to_string()));
            }
            _ => table.rows.push(parse_row(line, &words).map_err(err)?),
        }
    }
    for name in table.effects.iter().chain(&table.terminators) {
        if !table.rows.iter().any(|r| &r.name == name) {
            return Err(format!("ops.table: directive names unknown op {name}"));
        }
    }
    Ok(table)
}

fn parse_row(line: usize, words: &[&str]) -> Result<Row, String> {
    let [name, domain, versions, rest @ ..] = words else {
        return Err("expected: Name domain versions inputs -> outputs".into());
    };
    let (versions, removed) = parse_versions(versions)?;
    let arrow = rest
        .iter()
        .position(|w| *w == "->")
        .ok_or("missing '->' between inputs and outputs")?;
    let bar = rest.iter().position(|w| *w == "|").unwrap_or(rest.len());
    if bar < arrow {
        return Err("'|' before '->'".into());
    }
    let inputs = rest[..arrow]
        .iter()
        .map(|w| parse_param(w))
        .collect::<Result<_, _>>()?;
    let outputs = rest[arrow + 1..bar]
        .iter()
        .map(|w| parse_param(w))
        .collect::<Result<_, _>>()?;
    let attrs = rest
        .get(bar + 1..)
        .unwrap_or(&[])
        .iter()
        .map(|w| parse_attr(w))
        .collect::<Result<_, _>>()?;
    if !matches!(*domain, "onnx" | "onnx_ml" | "ms" | "onnxc") {
        return Err(format!("unknown domain {domain}"));
    }
    Ok(Row {
        line,
        name: name.to_string(),
        domain: domain.to_string(),
        versions,
        removed,
        inputs,
        outputs,
        attrs,
    })
}

fn parse_versions(s: &str) -> Result<(Vec<i64>, Option<i64>), String> {
    let (list, removed) = match s.split_once("..") {
        Some((a, b)) => (a, Some(b.parse().map_err(|_| format!("bad version {b}"))?)),
        None => (s, None),
    };
    let versions: Vec<i64> = list
        .split(',')
        .map(|v| v.parse().map_err(|_| format!("bad version {v}")))
        .collect::<Result<_, _>>()?;
    if versions.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!("versions {s} are not increasing"));
    }
    Ok((versions, removed))
}

fn parse_param(w: &str) -> Result<Param, String> {
    let (name, arity) = match w.as_bytes().last() {
        Some(b'?') => (&w[..w.len() - 1], "Optional"),
        Some(b'+') => (&w[..w.len() - 1], "Variadic { min: 1 }"),
        Some(b'*') => (&w[..w.len() - 1], "Variadic { min: 0 }"),
        _ => (w, "Single"),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("bad parameter {w}"));
    }
    Ok(Param {
        name: name.to_string(),
        arity,
    })
}

fn parse_attr(w: &str) -> Result<Attr, String> {
    let (name, rest) = w.split_once(':').ok_or(format!("bad attribute {w}"))?;
    let (ty, default) = if let Some((ty, d)) = rest.split_once('=') {
        (ty, Some(Some(d.to_string())))
    } else if let Some(ty) = rest.strip_suffix('?') {
        (ty, Some(None))
    } else {
        (rest, None)
    };
    if rust_type(ty).is_none() {
        return Err(format!("attribute {name}: unknown type {ty}"));
    }
    Ok(Attr {
        name: name.to_string(),
        ty: ty.to_string(),
        default,
    })
}

/// The accessor's return type for an attribute of `ty` with a default.
fn rust_type(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "int" => "i64",
        "float" => "f64",
        "string" => "&'m str",
        "ints" => "Vec<i64>",
        "floats" => "Vec<f64>",
        "strings" => "Vec<&'m str>",
        "tensor" => "&'m ir::elements::Elements",
        "type" => "&'m ir::Type",
        "tensors" | "graph" | "graphs" | "types" | "sparse_tensor" => "",
        _ => return None,
    })
}

fn attr_type_variant(ty: &str) -> &'static str {
    match ty {
        "int" => "Int",
        "float" => "Float",
        "string" => "String",
        "ints" => "Ints",
        "floats" => "Floats",
        "strings" => "Strings",
        "tensor" => "Tensor",
        "tensors" => "Tensors",
        "graph" => "Graph",
        "graphs" => "Graphs",
        "type" => "Type",
        "types" => "Types",
        _ => "SparseTensor",
    }
}

/// `transA` → `trans_a`; Rust keywords get a raw identifier.
fn snake(name: &str) -> String {
    let mut s = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                s.push('_');
            }
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    match s.as_str() {
        "type" | "mod" | "in" | "ref" | "box" | "fn" | "match" | "loop" | "use" | "where" => {
            format!("r#{s}")
        }
        _ => s,
    }
}

/// The schema's default value expression.
fn default_expr(a: &Attr) -> Result<String, String> {
    let d = match &a.default {
        None => return Ok("AttrDefault::Required".into()),
        Some(None) => return Ok("AttrDefault::Absent".into()),
        Some(Some(d)) => d,
    };
    let bad = || format!("attribute {}: bad default {d}", a.name);
    let items = |d: &str| -> Vec<String> {
        d.trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    Ok(match a.ty.as_str() {
        "int" => format!("AttrDefault::Int({})", d.parse::<i64>().map_err(|_| bad())?),
        "float" => format!("AttrDefault::Float({})", float_lit(d).ok_or_else(bad)?),
        "string" => format!("AttrDefault::String({d})"),
        "ints" => format!("AttrDefault::Ints(&[{}])", items(d).join(", ")),
        "floats" => {
            let f: Option<Vec<String>> = items(d).iter().map(|x| float_lit(x)).collect();
            format!("AttrDefault::Floats(&[{}])", f.ok_or_else(bad)?.join(", "))
        }
        "strings" => format!("AttrDefault::Strings(&[{}])", items(d).join(", ")),
        _ => return Err(bad()),
    })
}

/// An `f32` literal (ONNX float attributes are single precision).
fn float_lit(d: &str) -> Option<String> {
    let v: f32 = d.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some(if d.contains(['.', 'e']) {
        format!("{d}_f32")
    } else {
        format!("{d}.0_f32")
    })
}

fn generate(t: &Table) -> Result<String, String> {
    let mut s = String::new();
    let w = &mut s;
    let n = t.rows.len();
    let _ = writeln!(
        w,
        "/// Every op of the `onnx`, `onnx_ml` and internal tables."
    );
    let _ = writeln!(
        w,
        "#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]"
    );
    let _ = writeln!(w, "pub enum OpKind {{");
    for r in &t.rows {
        let _ = writeln!(w, "    {},", r.name);
    }
    let _ = writeln!(w, "}}\n");
    let _ = writeln!(w, "/// Every kind, in table order.");
    let _ = writeln!(w, "pub const ALL_KINDS: [OpKind; {n}] = [");
    for r in &t.rows {
        let _ = writeln!(w, "    OpKind::{},", r.name);
    }
    let _ = writeln!(w, "];\n");
    let _ = writeln!(w, "/// Schemas indexed by `OpKind as usize`.");
    let _ = writeln!(w, "pub static SCHEMAS: [OpSchema; {n}] = [");
    for r in &t.rows {
        schema(w, r, t)?;
    }
    let _ = writeln!(w, "];\n");
    let _ = writeln!(
        w,
        "/// Typed views: one struct per op with an accessor per attribute."
    );
    let _ = writeln!(w, "pub mod ops {{");
    let _ = writeln!(w, "    use crate::view::*;");
    let _ = writeln!(w, "    use ir::{{Module, OpId}};");
    for r in &t.rows {
        view(w, r)?;
    }
    let _ = writeln!(w, "}}");
    Ok(s)
}

fn params_expr(ps: &[Param]) -> String {
    let items: Vec<String> = ps
        .iter()
        .map(|p| {
            format!(
                "Param {{ name: \"{}\", arity: Arity::{} }}",
                p.name, p.arity
            )
        })
        .collect();
    format!("&[{}]", items.join(", "))
}

fn schema(w: &mut String, r: &Row, t: &Table) -> Result<(), String> {
    let mut attrs = Vec::new();
    for a in &r.attrs {
        let d = default_expr(a).map_err(|e| format!("ops.table:{}: {e}", r.line))?;
        attrs.push(format!(
            "AttrSchema {{ name: \"{}\", ty: AttrType::{}, default: {d} }}",
            a.name,
            attr_type_variant(&a.ty)
        ));
    }
    let (domain, dialect) = match r.domain.as_str() {
        "onnx" => ("Domain::Onnx", "onnx"),
        "onnx_ml" => ("Domain::OnnxMl", "onnx_ml"),
        "ms" => ("Domain::Microsoft", "ms"),
        _ => ("Domain::Internal", "onnx"),
    };
    let versions: Vec<String> = r.versions.iter().map(i64::to_string).collect();
    let _ = writeln!(
        w,
        "    OpSchema {{ kind: OpKind::{name}, name: \"{name}\", ir_name: \"{dialect}.{name}\", domain: {domain}, \
         versions: &[{v}], removed_in: {rm:?}, pure: {pure}, terminator: {term}, \
         inputs: {ins}, outputs: {outs}, attrs: &[{attrs}] }},",
        name = r.name,
        v = versions.join(", "),
        rm = r.removed,
        pure = !t.effects.contains(&r.name) && !t.terminators.contains(&r.name),
        term = t.terminators.contains(&r.name),
        ins = params_expr(&r.inputs),
        outs = params_expr(&r.outputs),
        attrs = attrs.join(", "),
    );
    Ok(())
}

fn view(w: &mut String, r: &Row) -> Result<(), String> {
    let name = &r.name;
    let _ = writeln!(w, "\n    /// A view of an `{name}` op.");
    let _ = writeln!(w, "    #[derive(Copy, Clone)]");
    let _ = writeln!(
        w,
        "    pub struct {name}<'m> {{ pub m: &'m Module, pub op: OpId }}"
    );
    let _ = writeln!(w, "    impl<'m> {name}<'m> {{");
    let _ = writeln!(
        w,
        "        /// The view of `op`, which the caller knows is an `{name}`."
    );
    let _ = writeln!(
        w,
        "        pub fn of(m: &'m Module, op: OpId) -> Self {{ {name} {{ m, op }} }}"
    );
    let _ = writeln!(w, "        /// The view of `op` when it is an `{name}`.");
    let _ = writeln!(
        w,
        "        pub fn try_of(m: &'m Module, op: OpId) -> Option<Self> {{ \
         (crate::OpKind::of(m, op) == Some(crate::OpKind::{name})).then_some({name} {{ m, op }}) }}"
    );
    for a in &r.attrs {
        accessor(w, a).map_err(|e| format!("ops.table:{}: {e}", r.line))?;
    }
    operands(w, r)?;
    builder(w, r)?;
    let _ = writeln!(w, "    }}");
    new_op(w, r)
}

/// `X::build(operands..)`: the typed builder of a new `X`.
fn builder(w: &mut String, r: &Row) -> Result<(), String> {
    let name = &r.name;
    let mut params = Vec::new();
    let mut items = Vec::new();
    for p in &r.inputs {
        let f = operand_method(r, p)?;
        match p.arity {
            "Single" => {
                params.push(format!("{f}: ir::ValueId"));
                items.push(format!("Some({f})"));
            }
            "Optional" => {
                params.push(format!("{f}: Option<ir::ValueId>"));
                items.push(f);
            }
            _ => {
                params.push(format!("{f}: &[ir::ValueId]"));
                items.push(format!("..{f}"));
            }
        }
    }
    // A variadic input spreads its values (it comes last in the table).
    let fixed: Vec<&str> = items
        .iter()
        .filter(|i| !i.starts_with(".."))
        .map(String::as_str)
        .collect();
    let spread: Vec<&str> = items.iter().filter_map(|i| i.strip_prefix("..")).collect();
    let mut operands = format!("Vec::<Option<ir::ValueId>>::from([{}])", fixed.join(", "));
    for f in spread {
        operands = format!("{operands}.into_iter().chain({f}.iter().copied().map(Some)).collect()");
    }
    let _ = writeln!(
        w,
        "        /// A new `{name}` of these operands, its attributes at their defaults."
    );
    let _ = writeln!(w, "        #[allow(clippy::too_many_arguments)]");
    let _ = writeln!(
        w,
        "        pub fn build({}) -> New{name} {{ New{name}(NewOp::new(crate::OpKind::{name}, {operands})) }}",
        params.join(", ")
    );
    Ok(())
}

/// `NewX`: a new `X` with a setter per attribute.
fn new_op(w: &mut String, r: &Row) -> Result<(), String> {
    let name = &r.name;
    let _ = writeln!(w, "    /// A new `{name}` to insert (`{name}::build`).");
    let _ = writeln!(w, "    #[derive(Clone, Debug)]");
    let _ = writeln!(w, "    pub struct New{name}(pub NewOp);");
    let _ = writeln!(w, "    impl New{name} {{");
    for a in &r.attrs {
        let (arg, conv) = match a.ty.as_str() {
            "int" => ("i64", "int_attr(v)"),
            "float" => ("f64", "float_attr(v)"),
            "string" => ("&str", "string_attr(v)"),
            "ints" => ("&[i64]", "ints_attr(v)"),
            "floats" => ("&[f64]", "floats_attr(v)"),
            "strings" => ("&[&str]", "strings_attr(v)"),
            "tensor" => ("ir::elements::Elements", "tensor_attr(v)"),
            _ => continue,
        };
        let f = snake(&a.name);
        let _ = writeln!(
            w,
            "        pub fn {f}(mut self, v: {arg}) -> Self {{ self.0.set(\"{}\", {conv}); self }}",
            a.name
        );
    }
    let _ = writeln!(
        w,
        "        /// Inserts it at `at` with results of `result_types`."
    );
    let _ = writeln!(
        w,
        "        pub fn insert(self, m: &mut Module, at: ir::InsertPoint, result_types: Vec<ir::Type>, loc: ir::Location) -> OpId {{ self.0.insert(m, at, result_types, loc) }}"
    );
    let _ = writeln!(w, "    }}");
    let _ = writeln!(
        w,
        "    impl From<New{name}> for NewOp {{ fn from(n: New{name}) -> NewOp {{ n.0 }} }}"
    );
    Ok(())
}

/// Rust keywords an input name may spell.
const KEYWORDS: [&str; 12] = [
    "as", "const", "fn", "for", "if", "in", "loop", "match", "mod", "ref", "type", "where",
];

/// The method name of input `p`, distinct from the view's other methods.
fn operand_method(r: &Row, p: &Param) -> Result<String, String> {
    let f = snake(&p.name);
    let taken = ["of", "try_of", "m", "op"].contains(&f.as_str())
        || r.attrs.iter().any(|a| snake(&a.name) == f);
    let f = if taken { format!("{f}_operand") } else { f };
    if KEYWORDS.contains(&f.as_str()) {
        return Ok(format!("{f}_"));
    }
    if r.inputs
        .iter()
        .filter(|q| snake(&q.name) == snake(&p.name))
        .count()
        > 1
    {
        return Err(format!(
            "ops.table:{}: two inputs named '{}'",
            r.line, p.name
        ));
    }
    Ok(f)
}

/// Named operand accessors (and position constants) for the inputs up to
/// and including the first variadic one; positions after it vary.
fn operands(w: &mut String, r: &Row) -> Result<(), String> {
    for (i, p) in r.inputs.iter().enumerate() {
        let f = operand_method(r, p)?;
        let key = &p.name;
        match p.arity {
            "Variadic { min: 1 }" | "Variadic { min: 0 }" => {
                let _ = writeln!(
                    w,
                    "        /// The variadic operands `{key}` (from #{i} on)."
                );
                let _ = writeln!(
                    w,
                    "        pub fn {f}(&self) -> &'m [ir::ValueId] {{ self.m.operands(self.op).get({i}..).unwrap_or(&[]) }}"
                );
                return Ok(());
            }
            "Optional" => {
                let _ = writeln!(w, "        /// Operand #{i} `{key}`, `None` when omitted.");
                let _ = writeln!(
                    w,
                    "        pub fn {f}(&self) -> Option<ir::ValueId> {{ present(self.m, self.m.operand(self.op, {i})) }}"
                );
            }
            _ => {
                let _ = writeln!(
                    w,
                    "        /// Operand #{i} `{key}` (`None` only in a malformed module)."
                );
                let _ = writeln!(
                    w,
                    "        pub fn {f}(&self) -> Option<ir::ValueId> {{ self.m.operand(self.op, {i}) }}"
                );
            }
        }
        let c = f.trim_end_matches('_').to_uppercase();
        let _ = writeln!(w, "        /// The position of operand `{key}`.");
        let _ = writeln!(w, "        pub const {c}: usize = {i};");
    }
    Ok(())
}

fn accessor(w: &mut String, a: &Attr) -> Result<(), String> {
    let rt = rust_type(&a.ty).unwrap_or("");
    if rt.is_empty() {
        // Subgraphs are regions; tensors and types lists are read generically.
        return Ok(());
    }
    let f = snake(&a.name);
    let key = &a.name;
    let ty = &a.ty;
    // Required tensors and types have no zero to fall back on.
    let required_ref = a.default.is_none() && matches!(ty.as_str(), "tensor" | "type");
    if required_ref || matches!(a.default, Some(None)) {
        let _ = writeln!(w, "        /// `{key}`, when present.");
        let _ = writeln!(
            w,
            "        pub fn {f}(&self) -> Option<{rt}> {{ {ty}_opt(self.m, self.op, \"{key}\") }}"
        );
        return Ok(());
    }
    let body = match &a.default {
        // Verified present at import; the type's zero when a hand-written
        // module lacks it (the verifier reports that).
        None | Some(None) => format!("{ty}_or_zero(self.m, self.op, \"{key}\")"),
        Some(Some(_)) => {
            let d = default_expr(a)?;
            let value = d
                .trim_start_matches("AttrDefault::")
                .split_once('(')
                .map(|(_, v)| v.trim_end_matches(')').to_string())
                .unwrap_or_default();
            let value = match ty.as_str() {
                "float" => format!("f64::from({value})"),
                "floats" => format!(
                    "{}.iter().map(|&v: &f32| f64::from(v)).collect()",
                    value.trim_start_matches('&')
                ),
                "ints" | "strings" => format!("{}.to_vec()", value.trim_start_matches('&')),
                _ => value,
            };
            format!("{ty}_opt(self.m, self.op, \"{key}\").unwrap_or_else(|| {value})")
        }
    };
    let doc = match &a.default {
        None => format!("`{key}` (required)."),
        _ => format!("`{key}`, or its default when absent."),
    };
    let _ = writeln!(w, "        /// {doc}");
    let _ = writeln!(w, "        pub fn {f}(&self) -> {rt} {{ {body} }}");
    Ok(())
}
