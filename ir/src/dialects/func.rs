//! `func`: functions, calls, returns.

use super::{op_error, operand_type};
use crate::attr::Attribute;
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::ops::FuncOp;
use crate::types::Type;

/// The `function_type` of a `func.func`.
pub fn function_type(m: &Module, f: OpId) -> Option<&crate::types::FunctionType> {
    m.attr(f, "function_type")?.as_type()?.as_function()
}

/// On a function: the CPU it is compiled for (clang's `-march` name,
/// e.g. `x86-64-v4`), where that differs from the module's. Functions
/// made from its body (outlined loops) keep it.
pub const TARGET_CPU: &str = "onnxc.target_cpu";

/// `() -> index`: the x86-64 micro-architecture level of the CPU running
/// the code (2, 3 or 4; at most `ONNXC_CPU_LEVEL` when that is set), read
/// once from cpuid. Defined by the LLVM emitter.
pub const CPU_LEVEL_FN: &str = "__onnxc_cpu_level";

/// One x86-64 micro-architecture level a multi-level build carries.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct X86Level {
    /// What `CPU_LEVEL_FN` returns for it.
    pub level: i64,
    /// clang's `-march` name (`TARGET_CPU`).
    pub cpu: &'static str,
    /// Its widest vector registers.
    pub vector_bits: u32,
}

/// The levels of a multi-level build, widest first; the last is the
/// baseline every x86-64 CPU since 2009 runs.
pub const X86_LEVELS: [X86Level; 3] = [
    X86Level {
        level: 4,
        cpu: "x86-64-v4",
        vector_bits: 512,
    },
    X86Level {
        level: 3,
        cpu: "x86-64-v3",
        vector_bits: 256,
    },
    X86Level {
        level: 2,
        cpu: "x86-64-v2",
        vector_bits: 128,
    },
];

/// The name of function `name`'s variant for x86-64 level `level`.
/// Level 4 with AVX512-VNNI (`vpdpbusd`): a level of the int8 kernels
/// only (a multi-level build's other kernels take level 4's variants).
/// Cascade Lake is the first CPU with it; later ones with VNNI (Ice Lake,
/// Sapphire Rapids, Zen 4) run everything it does.
pub const X86_VNNI: X86Level = X86Level {
    level: 5,
    cpu: "cascadelake",
    vector_bits: 512,
};

/// The level (or VNNI variant) built for `cpu`, by its `-march` name.
pub fn x86_level_of(cpu: &str) -> Option<&'static X86Level> {
    X86_LEVELS
        .iter()
        .chain(std::iter::once(&X86_VNNI))
        .find(|l| l.cpu == cpu)
}

pub fn level_variant(name: &str, level: i64) -> String {
    format!("{name}_v{level}")
}

/// The enclosing function's `TARGET_CPU`.
pub fn target_cpu_of(m: &Module, op: OpId) -> Option<&str> {
    let mut at = Some(op);
    while let Some(o) = at {
        if m.is(o, FuncOp::Func) {
            return m.attr(o, TARGET_CPU).and_then(Attribute::as_str);
        }
        at = m.parent_op(o);
    }
    None
}

/// On a function whose results have a rank decided at run time: per
/// declared result, the index of the extra result (a 0-d i64) holding its
/// rank, or -1 for a static rank. Such a result is returned in its
/// largest rank; the dims it lacks at a lower rank come first, as 1s.
pub const OUTPUT_RANK_RESULTS: &str = "onnxc.output_rank_results";

/// `OUTPUT_RANK_RESULTS` of `f` read back: per declared result, the index
/// of its rank result. `None` when every result has a static rank.
pub fn output_rank_results(m: &Module, f: OpId) -> Option<Vec<Option<usize>>> {
    let a = m.attr(f, OUTPUT_RANK_RESULTS)?.as_array()?;
    Some(
        a.iter()
            .map(|x| match x {
                crate::attr::Attribute::Int(v, _) => usize::try_from(*v).ok(),
                _ => None,
            })
            .collect(),
    )
}

/// On the main function of a model whose graph outputs include ZipMaps:
/// per declared result, the ZipMap's class labels (an array of ints or
/// strings), or unit. Such a result is the probability tensor [N, C].
pub const OUTPUT_ZIPMAP: &str = "onnx.output_zipmap";

/// How many of `f`'s results are the model's outputs (the others hold
/// ranks decided at run time, `OUTPUT_RANK_RESULTS`).
pub fn declared_results(m: &Module, f: OpId) -> usize {
    let all = function_type(m, f).map_or(0, |ft| ft.results.len());
    output_rank_results(m, f).map_or(all, |t| t.len().min(all))
}

pub fn sym_name(m: &Module, op: OpId) -> Option<&str> {
    m.attr(op, "sym_name")?.as_str()
}

/// A declaration has no body.
pub fn is_declaration(m: &Module, f: OpId) -> bool {
    m.region(f, 0).is_none_or(|r| m.region_blocks(r).is_empty())
}

pub(crate) fn verify_func(m: &Module, op: OpId) -> Result<()> {
    if sym_name(m, op).is_none() {
        return Err(op_error(m, op, "requires a 'sym_name' string attribute"));
    }
    let Some(ft) = function_type(m, op) else {
        return Err(op_error(m, op, "requires a 'function_type' attribute"));
    };
    if let Some(entry) = m.region(op, 0).and_then(|r| m.entry_block(r)) {
        let args = m.block_args(entry);
        let ok = args.len() == ft.inputs.len()
            && args
                .iter()
                .zip(&ft.inputs)
                .all(|(&a, t)| m.value_type(a) == t);
        if !ok {
            return Err(op_error(
                m,
                op,
                "entry block arguments do not match the function type",
            ));
        }
    }
    Ok(())
}

pub(crate) fn verify_return(m: &Module, op: OpId) -> Result<()> {
    let Some(f) = m.parent_op(op) else {
        return Err(op_error(m, op, "must be nested in a func.func"));
    };
    if !m.is(f, FuncOp::Func) {
        return Err(op_error(m, op, "must be nested in a func.func"));
    }
    let Some(ft) = function_type(m, f) else {
        return Ok(());
    };
    let types: Vec<&Type> = m.operands(op).iter().map(|&v| m.value_type(v)).collect();
    if types.len() != ft.results.len() || types.iter().zip(&ft.results).any(|(a, b)| *a != b) {
        return Err(op_error(
            m,
            op,
            "operand types do not match the enclosing function's result types",
        ));
    }
    Ok(())
}

pub(crate) fn verify_call(m: &Module, op: OpId) -> Result<()> {
    let Some(callee) = m.attr(op, "callee").and_then(Attribute::as_symbol) else {
        return Err(op_error(m, op, "requires a 'callee' symbol reference"));
    };
    let Some(f) = m.lookup_symbol(callee) else {
        return Err(op_error(
            m,
            op,
            format!("'{callee}' does not reference a valid function"),
        ));
    };
    let Some(ft) = function_type(m, f) else {
        return Ok(());
    };
    let n = m.operands(op).len();
    if n != ft.inputs.len() {
        return Err(op_error(m, op, "incorrect number of operands for callee"));
    }
    for (i, t) in ft.inputs.iter().enumerate() {
        if operand_type(m, op, i)? != t {
            return Err(op_error(m, op, format!("operand type mismatch at #{i}")));
        }
    }
    let results: Vec<&Type> = m.results(op).iter().map(|&v| m.value_type(v)).collect();
    if results.len() != ft.results.len() || results.iter().zip(&ft.results).any(|(a, b)| *a != b) {
        return Err(op_error(m, op, "result types do not match the callee"));
    }
    Ok(())
}

/// Sets `f`'s `function_type` from its entry block's arguments and the
/// operands of the `func.return` that ends it; `false` (nothing changed)
/// when the body does not end with one.
pub fn refresh_signature(m: &mut Module, f: OpId) -> bool {
    let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
        return false;
    };
    let Some(ret) = m.last_op(entry).filter(|&r| m.is(r, FuncOp::Return)) else {
        return false;
    };
    let types = |vs: &[crate::module::ValueId]| -> Vec<Type> {
        vs.iter().map(|&v| m.value_type(v).clone()).collect()
    };
    let ty = Type::function(types(m.block_args(entry)), types(m.operands(ret)));
    m.set_attr(f, "function_type", Attribute::Type(ty));
    true
}
