//! Functions, calls, returns and branches.

use super::parts::Item;
use super::types::{global_name, llvm_type};
use super::{runtime, FnCx, ModuleCx};
use ir::attr::Attribute;
use ir::dialects::{func, op_error};
use ir::{CfOp, FuncOp};
use ir::{Module, OpId, Result, Type};

/// `T`, `void` or a literal struct `{ T1, T2 }` for a result list.
pub(crate) fn return_type(m: &Module, op: OpId, results: &[Type]) -> Result<String> {
    let tys = results
        .iter()
        .map(|t| llvm_type(t).map_err(|e| op_error(m, op, e)))
        .collect::<Result<Vec<_>>>()?;
    Ok(match tys.as_slice() {
        [] => "void".into(),
        [t] => t.clone(),
        many => format!("{{ {} }}", many.join(", ")),
    })
}

/// Emits one `func.func` as a `define` or a `declare`; `None` for a
/// runtime helper the module context provides.
pub(crate) fn emit_func(m: &Module, f: OpId, mcx: &mut ModuleCx) -> Result<Option<Item>> {
    let name = func::sym_name(m, f).ok_or_else(|| op_error(m, f, "requires a 'sym_name'"))?;
    let ft =
        func::function_type(m, f).ok_or_else(|| op_error(m, f, "requires a 'function_type'"))?;
    let params = ft
        .inputs
        .iter()
        .map(|t| llvm_type(t).map_err(|e| op_error(m, f, e)))
        .collect::<Result<Vec<_>>>()?;
    let gname = global_name(name);
    let mut ret = return_type(m, f, &ft.results)?;

    let body = m.region(f, 0).filter(|&r| m.entry_block(r).is_some());
    let Some(region) = body else {
        // Defined by `parallel` where it is called.
        if runtime::provide(mcx, name, ft) || name == ir::dialects::scf::NUM_THREADS_FN {
            return Ok(None);
        }
        if name == ir::dialects::func::CPU_LEVEL_FN {
            super::cpu::provide(mcx, name);
            return Ok(None);
        }
        return Ok(Some(Item {
            before: format!("declare {ret} {gname}({})\n\n", params.join(", ")),
            internal: false,
            after: String::new(),
            decl: None,
        }));
    };

    let is_main = name == "main";
    let main_void = is_main && ft.results.is_empty();
    if is_main
        && !(main_void && ft.inputs.is_empty()
            || ft.inputs.is_empty() && ft.results == [Type::i(32)])
    {
        return Err(op_error(
            m,
            f,
            "'main' must have type () -> () or () -> i32",
        ));
    }
    if main_void {
        ret = "i32".into();
    }
    let private = m.attr(f, "sym_visibility").and_then(Attribute::as_str) == Some("private");
    let internal = private && !is_main;

    let entry = m
        .entry_block(region)
        .ok_or_else(|| op_error(m, f, "has no entry block"))?;
    let args = m.block_args(entry);
    if args.len() != params.len() {
        return Err(op_error(
            m,
            f,
            "entry block arguments do not match the function type",
        ));
    }
    // A `noalias` memref comes as its descriptor plus its aligned pointer
    // as a `noalias` parameter, put back into the descriptor on entry.
    let noalias = mcx.noalias.get(name).cloned().unwrap_or_default();
    let mut plist = Vec::new();
    let mut prologue = Vec::new();
    let mut decl_params = params.clone();
    for (i, (t, a)) in params.iter().zip(args).enumerate() {
        if noalias.contains(&i) {
            plist.push(format!("{t} {a}.d"));
            prologue.push(format!("{a} = insertvalue {t} {a}.d, ptr {a}.p, 1"));
        } else {
            plist.push(format!("{t} {a}"));
        }
    }
    for &i in &noalias {
        if let Some(a) = args.get(i) {
            plist.push(format!("ptr noalias {a}.p"));
            decl_params.push("ptr".into());
        }
    }
    let mut cx = FnCx::new(m, mcx, main_void);
    cx.prologue = prologue;
    let text = cx.emit_body(region)?;
    // An outlined kernel is optimized once, on its own, not again inlined.
    let mut attrs = String::new();
    if m.attr(f, crate::outline::KERNEL_ATTR).is_some() {
        attrs.push_str(" noinline");
    }
    // A variant for another CPU than the module's. LLVM inlines a callee
    // only into a caller that has every feature it has, so it never lands
    // in code that may run where its instructions do not exist.
    if let Some(cpu) = m
        .attr(f, ir::dialects::func::TARGET_CPU)
        .and_then(Attribute::as_str)
    {
        attrs.push_str(&format!(" \"target-cpu\"=\"{cpu}\""));
        // As the module's own 512-bit code: LLVM's loop vectorizer keeps
        // to 256 bits for x86-64-v4 unless told.
        if let Some(bits) = ir::dialects::func::x86_level_of(cpu).map(|l| l.vector_bits) {
            attrs.push_str(&format!(" \"prefer-vector-width\"=\"{bits}\""));
        }
    }
    let mut after = format!("{ret} {gname}({}){attrs} {{\n", plist.join(", "));
    after.push_str(&text);
    after.push_str("}\n\n");
    let vis = if internal { "hidden " } else { "" };
    Ok(Some(Item {
        before: "define ".into(),
        internal,
        after,
        decl: Some(format!(
            "declare {vis}{ret} {gname}({})",
            decl_params.join(", ")
        )),
    }))
}

pub(crate) fn emit_func_op(cx: &mut FnCx<'_>, op: OpId, which: FuncOp) -> Result<()> {
    match which {
        FuncOp::Return => emit_return(cx, op),
        FuncOp::Call => emit_call(cx, op),
        FuncOp::Func => Err(op_error(cx.m, op, "is only valid at module level")),
    }
}

pub(crate) fn emit_cf(cx: &mut FnCx<'_>, op: OpId, which: CfOp) -> Result<()> {
    let m = cx.m;
    match which {
        CfOp::Br => {
            let (target, _) = m
                .successor(op, 0)
                .ok_or_else(|| op_error(m, op, "expects one successor"))?;
            let l = cx.edge(target, m.successor_args(op, 0))?;
            if m.attr(op, crate::scf_to_cf::LOOP_VECTORIZE).is_some() {
                let md = cx.mcx.loop_vectorize_md();
                cx.line(format!("br label {l}, !llvm.loop {md}"));
            } else {
                cx.line(format!("br label {l}"));
            }
            Ok(())
        }
        CfOp::CondBr => emit_cond_br(cx, op),
        CfOp::Assert => emit_assert(cx, op),
    }
}

fn emit_return(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let vals = m.operands(op);
    if cx.main_void {
        cx.line("ret i32 0");
        return Ok(());
    }
    match vals {
        [] => cx.line("ret void"),
        [v] => {
            let tv = cx.tv(op, *v)?;
            cx.line(format!("ret {tv}"));
        }
        many => {
            let tys: Vec<Type> = many.iter().map(|&v| m.value_type(v).clone()).collect();
            let sty = return_type(m, op, &tys)?;
            let mut agg = String::from("poison");
            for (i, &v) in many.iter().enumerate() {
                let tv = cx.tv(op, v)?;
                agg = cx.assign(format!("insertvalue {sty} {agg}, {tv}, {i}"));
            }
            cx.line(format!("ret {sty} {agg}"));
        }
    }
    Ok(())
}

fn emit_call(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let callee = m
        .attr(op, "callee")
        .and_then(Attribute::as_symbol)
        .ok_or_else(|| op_error(m, op, "requires a 'callee' symbol"))?;
    if callee == ir::dialects::scf::NUM_THREADS_FN {
        return super::parallel::emit_num_threads(cx, op);
    }
    if m.attr(op, ir::dialects::scf::PARALLEL).is_some() {
        return super::parallel::emit_parallel_call(cx, op, callee);
    }
    let args = call_args(cx, op, callee)?;
    let results: Vec<Type> = m
        .results(op)
        .iter()
        .map(|&v| m.value_type(v).clone())
        .collect();
    let mut ret = return_type(m, op, &results)?;
    // `main () -> ()` is emitted returning i32; calls see the same.
    let void_main = callee == "main" && results.is_empty();
    if void_main {
        ret = "i32".into();
    }
    let call = format!("call {ret} {}({})", global_name(callee), args.join(", "));
    match m.results(op) {
        [] if void_main => {
            cx.assign(call);
        }
        [] => cx.line(call),
        [r] => cx.define(*r, call),
        many => {
            let agg = cx.assign(call);
            for (i, &r) in many.iter().enumerate() {
                cx.define(r, format!("extractvalue {ret} {agg}, {i}"));
            }
        }
    }
    Ok(())
}

/// The argument list of a call of `callee`: the operands, then the
/// aligned pointers of its `noalias` memrefs (see `emit_func`).
pub(crate) fn call_args(cx: &mut FnCx<'_>, op: OpId, callee: &str) -> Result<Vec<String>> {
    let m = cx.m;
    let mut args = m
        .operands(op)
        .iter()
        .map(|&v| cx.tv(op, v))
        .collect::<Result<Vec<_>>>()?;
    let noalias = cx.mcx.noalias.get(callee).cloned().unwrap_or_default();
    for i in noalias {
        let Some(a) = args.get(i).cloned() else {
            return Err(op_error(m, op, "too few arguments for the callee"));
        };
        let p = cx.assign(format!("extractvalue {a}, 1"));
        args.push(format!("ptr {p}"));
    }
    Ok(args)
}

fn emit_cond_br(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let cond = cx.val(cx.operand(op, 0)?)?;
    let (Some((t, _)), Some((f, _))) = (m.successor(op, 0), m.successor(op, 1)) else {
        return Err(op_error(m, op, "expects two successors"));
    };
    let lt = cx.edge(t, m.successor_args(op, 0))?;
    if t != f {
        let lf = cx.edge(f, m.successor_args(op, 1))?;
        cx.line(format!("br i1 {cond}, label {lt}, label {lf}"));
        return Ok(());
    }
    // Two edges to one block: phis need one entry per predecessor block, so
    // the false edge goes through a block of its own.
    let split = cx.label();
    cx.line(format!("br i1 {cond}, label {lt}, label %{split}"));
    cx.start_block(split);
    let lf = cx.edge(f, m.successor_args(op, 1))?;
    cx.line(format!("br label {lf}"));
    Ok(())
}

fn emit_assert(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let cond = cx.val(cx.operand(op, 0)?)?;
    let msg = m.attr(op, "msg").and_then(Attribute::as_str).unwrap_or("");
    let text = format!("assertion failed: {msg}\n");
    let s = cx.mcx.string(text.as_bytes());
    cx.mcx.declare("stderr", "@stderr = external global ptr");
    cx.mcx.declare("fputs", "declare i32 @fputs(ptr, ptr)");
    cx.mcx.declare("abort", "declare void @abort()");
    let (ok, fail) = (cx.label(), cx.label());
    cx.line(format!("br i1 {cond}, label %{ok}, label %{fail}"));
    cx.start_block(fail);
    let err = cx.assign("load ptr, ptr @stderr");
    cx.assign(format!("call i32 @fputs(ptr {s}, ptr {err})"));
    cx.line("call void @abort()");
    cx.line("unreachable");
    cx.start_block(ok);
    Ok(())
}
