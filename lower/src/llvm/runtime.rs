//! Definitions of the print helpers of MLIR's runner utils (`printI64`,
//! `printF32`, `printNewline`, ...), so test programs written against
//! `mlir-cpu-runner` also run here without a support library.

use super::ModuleCx;
use ir::types::FunctionType;
use ir::Type;

/// Arguments a helper takes, its printf format, and how to pass the value.
struct Helper {
    name: &'static str,
    input: Option<Type>,
    format: &'static str,
}

fn helpers() -> [Helper; 8] {
    let h = |name, input, format| Helper {
        name,
        input,
        format,
    };
    [
        h("printI64", Some(Type::i64()), "%lld"),
        h("printU64", Some(Type::i64()), "%llu"),
        h("printF32", Some(Type::f32()), "%g"),
        h("printF64", Some(Type::f64()), "%g"),
        h("printNewline", None, "\n"),
        h("printComma", None, ", "),
        h("printOpen", None, "( "),
        h("printClose", None, " )"),
    ]
}

/// If `name` with type `ft` is a known helper, adds its definition and
/// returns true; the module then must not declare it.
pub(crate) fn provide(mcx: &mut ModuleCx, name: &str, ft: &FunctionType) -> bool {
    let all = helpers();
    let Some(h) = all.iter().find(|h| h.name == name) else {
        return false;
    };
    let inputs_ok = match &h.input {
        Some(t) => {
            ft.inputs.len() == 1 && (ft.inputs[0] == *t || (t.is_int() && ft.inputs[0].is_index()))
        }
        None => ft.inputs.is_empty(),
    };
    if !inputs_ok || !ft.results.is_empty() {
        return false;
    }
    let fmt = mcx.string(h.format.as_bytes());
    mcx.declare("printf", "declare i32 @printf(ptr, ...)");
    let def = match &h.input {
        Some(t) if t.is_float() => {
            let (ty, arg) = if *t == Type::f32() {
                ("float", "%d")
            } else {
                ("double", "%x")
            };
            let widen = if ty == "float" {
                "  %d = fpext float %x to double\n"
            } else {
                ""
            };
            format!(
                "define linkonce_odr void @{name}({ty} %x) {{\n{widen}  %r = call i32 (ptr, ...) @printf(ptr {fmt}, double {arg})\n  ret void\n}}\n"
            )
        }
        Some(_) => format!(
            "define linkonce_odr void @{name}(i64 %x) {{\n  %r = call i32 (ptr, ...) @printf(ptr {fmt}, i64 %x)\n  ret void\n}}\n"
        ),
        None => format!(
            "define linkonce_odr void @{name}() {{\n  %r = call i32 (ptr, ...) @printf(ptr {fmt})\n  ret void\n}}\n"
        ),
    };
    mcx.helpers.push(def);
    true
}
