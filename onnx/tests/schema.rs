//! The op table against the ONNX schema of the installed `onnx` package:
//! every row's versions, inputs, outputs and attributes (names, types,
//! defaults) must be what onnx.defs says.

use onnx::{Arity, AttrDefault, AttrType, Domain, SCHEMAS};
use std::process::Command;

const DUMP: &str = r#"
import onnx, onnx.defs as d, sys, struct
from onnx import helper
def bits(x):
    return '%08x' % struct.unpack('<I', struct.pack('<f', x))[0]
def arity(p, mn, n):
    o = str(p.option).split('.')[-1]
    if o == 'Variadic':
        return 'V%d' % max(0, mn - (n - 1))
    return 'S' if o == 'Single' else 'O'
def val(a):
    if not a.default_value.name:
        return ''
    v = helper.get_attribute_value(a.default_value)
    if isinstance(v, bytes): v = v.decode()
    if isinstance(v, list): v = [x.decode() if isinstance(x, bytes) else x for x in v]
    if isinstance(v, float): v = bits(v)
    if isinstance(v, list): v = ','.join(bits(x) if isinstance(x, float) else str(x) for x in v)
    return str(v)
hist = d.get_all_schemas_with_history()
for line in sys.stdin:
    dom, name = line.split()
    dom = '' if dom == 'onnx' else 'ai.onnx.ml'
    vs = sorted(s.since_version for s in hist if s.name == name and s.domain == dom)
    s = d.get_schema(name, domain=dom)
    ins = ' '.join(p.name + ':' + arity(p, s.min_input, len(s.inputs)) for p in s.inputs)
    outs = ' '.join(p.name + ':' + arity(p, s.min_output, len(s.outputs)) for p in s.outputs)
    attrs = ' '.join('%s:%s:%s:%s' % (a.name, str(a.type).split('.')[-1].lower(), int(a.required), val(a))
                     for a in sorted(s.attributes.values(), key=lambda a: a.name))
    print('|'.join([name, ','.join(map(str, vs)), str(int(s.deprecated)), ins, outs, attrs]))
"#;

fn arity(a: Arity) -> String {
    match a {
        Arity::Single => "S".into(),
        Arity::Optional => "O".into(),
        Arity::Variadic { min } => format!("V{min}"),
    }
}

fn attr_type(t: AttrType) -> &'static str {
    match t {
        AttrType::Type => "type_proto",
        AttrType::Types => "type_protos",
        AttrType::SparseTensor => "sparse_tensor",
        t => t.name(),
    }
}

fn default(d: AttrDefault) -> (bool, String) {
    let f = |v: f32| format!("{:08x}", v.to_bits());
    match d {
        AttrDefault::Required => (true, String::new()),
        AttrDefault::Absent => (false, String::new()),
        AttrDefault::Int(v) => (false, v.to_string()),
        AttrDefault::Float(v) => (false, f(v)),
        AttrDefault::String(s) => (false, s.to_string()),
        AttrDefault::Ints(v) => (
            false,
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
        ),
        AttrDefault::Floats(v) => (false, v.iter().map(|&x| f(x)).collect::<Vec<_>>().join(",")),
        AttrDefault::Strings(v) => (false, v.join(",")),
    }
}

/// The table's row in the dump's format.
fn row(s: &onnx::OpSchema) -> String {
    let params = |ps: &[onnx::Param]| {
        ps.iter()
            .map(|p| format!("{}:{}", p.name, arity(p.arity)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let attrs: Vec<String> = s
        .attrs
        .iter()
        .map(|a| {
            let (req, d) = default(a.default);
            format!("{}:{}:{}:{d}", a.name, attr_type(a.ty), u8::from(req))
        })
        .collect();
    let mut versions: Vec<String> = s.versions.iter().map(i64::to_string).collect();
    versions.extend(s.removed_in.map(|v| v.to_string()));
    format!(
        "{}|{}|{}|{}|{}|{}",
        s.name,
        versions.join(","),
        u8::from(s.removed_in.is_some()),
        params(s.inputs),
        params(s.outputs),
        attrs.join(" ")
    )
}

#[test]
fn table_matches_the_installed_onnx_schema() {
    let rows: Vec<&onnx::OpSchema> = SCHEMAS
        .iter()
        .filter(|s| !matches!(s.domain, Domain::Internal | Domain::Microsoft))
        .collect();
    let input: String = rows
        .iter()
        .map(|s| {
            let d = if s.domain == Domain::Onnx {
                "onnx"
            } else {
                "onnx_ml"
            };
            format!("{d} {}\n", s.name)
        })
        .collect();
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = Command::new(&py)
        .arg("-c")
        .arg(DUMP)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {py} ({e}); run scripts/setup-test-deps.sh"));
    use std::io::Write;
    child
        .stdin
        .take()
        .map(|mut s| s.write_all(input.as_bytes()))
        .transpose()
        .unwrap_or_else(|e| panic!("writing to python: {e}"));
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "python with onnx failed; run scripts/setup-test-deps.sh"
    );
    let theirs = String::from_utf8_lossy(&out.stdout);
    let mut bad = Vec::new();
    for (s, line) in rows.iter().zip(theirs.lines()) {
        let ours = row(s);
        if ours != line {
            bad.push(format!("ours:   {ours}\nschema: {line}"));
        }
    }
    assert_eq!(theirs.lines().count(), rows.len());
    assert!(
        bad.is_empty(),
        "{} rows differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
