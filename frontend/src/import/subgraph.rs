//! `If`, `Loop` and `Scan`: their graph attributes become regions of the op
//! (one block each, ended by `onnx.Yield`); names of enclosing scopes stay
//! visible inside (docs/ONNX_DIALECT.md, "Subgraphs").

use super::node::check_row;
use super::{node_diag, value_info_type, Importer, Scope, MAX_DEPTH};
use crate::dialect::{region_attr_names, GRAPHS_ATTR};
use crate::infer::control::{body_arg_types, initial_carried};
use crate::infer::refine;
use crate::proto::{AttributeProto, GraphProto, NodeProto};
use ir::{Attribute, Builder, Diagnostic, OpSpec, Sym, Type};
use onnx::OpKind;
use std::collections::HashSet;
use std::sync::Arc;

impl<'a> Importer<'a> {
    /// If, Loop, Scan (`kind`): their graph attributes become regions.
    pub(super) fn import_control_flow(
        &mut self,
        node: &NodeProto,
        kind: OpKind,
        attrs: &[AttributeProto],
    ) -> Result<(), Diagnostic> {
        if self.depth >= MAX_DEPTH {
            return Err(node_diag(
                node,
                format!("unsupported nesting of subgraphs deeper than {MAX_DEPTH} levels"),
            ));
        }
        let is_loop = kind == OpKind::Loop;
        let region_names = region_attr_names(kind);
        let mut graphs = Vec::with_capacity(region_names.len());
        for &name in region_names {
            let a = attrs.iter().find(|a| a.name == name);
            let g = a
                .and_then(|a| a.g.as_ref())
                .ok_or_else(|| node_diag(node, format!("missing graph attribute '{name}'")))?;
            graphs.push(g);
        }
        let ir_attrs: Vec<(String, Attribute)> = self
            .convert_attrs(node, attrs)?
            .into_iter()
            .filter(|(k, _)| !region_names.contains(&k.as_str()))
            .collect();
        let mut operands = self.operands(node)?;
        if is_loop {
            // M and cond keep their slots even when omitted.
            while operands.len() < 2 {
                let none = self.no_value()?;
                operands.push(none);
            }
        }
        let results = node.output.len();
        check_row(node, kind, operands.len(), results, &ir_attrs)?;
        let want_outputs = if is_loop { results + 1 } else { results };
        let loc = self.node_loc(node);
        let spec = OpSpec {
            operands,
            result_types: self.result_types(node),
            attrs: onnx::dialect::intern_attrs(ir_attrs),
            regions: graphs.len(),
            loc: loc.clone(),
            ..OpSpec::default()
        };
        let op = self.builder(loc)?.create(kind.ir_name(), spec);
        let is_scan = kind == OpKind::Scan;
        if is_scan && crate::infer::control::scan_split(&self.m, op).is_none() {
            return Err(node_diag(
                node,
                "needs an INT attribute 'num_scan_inputs' no larger than its input count".into(),
            ));
        }
        // Types of the body's inputs as the operands give them.
        let derived = initial_carried(&self.m, op).and_then(|c| body_arg_types(&self.m, op, &c));
        let derived = match derived {
            Some(d) => d,
            None if is_scan => {
                return Err(node_diag(
                    node,
                    "a scan input axis is out of range for its input".into(),
                ))
            }
            None => Vec::new(),
        };
        let mut infos = Vec::with_capacity(graphs.len());
        for (i, g) in graphs.into_iter().enumerate() {
            let want_args = if kind == OpKind::If { 0 } else { derived.len() };
            if g.output.len() != want_outputs {
                return Err(node_diag(
                    node,
                    format!(
                        "the '{}' subgraph has {} outputs, the node's outputs need {want_outputs}",
                        region_names.get(i).unwrap_or(&""),
                        g.output.len()
                    ),
                ));
            }
            if g.input.len() != want_args {
                return Err(node_diag(
                    node,
                    format!(
                        "the '{}' subgraph has {} inputs, the node's inputs need {want_args}",
                        region_names.get(i).unwrap_or(&""),
                        g.input.len()
                    ),
                ));
            }
            self.depth += 1;
            let info = self.import_region(op, i, g, &derived);
            self.depth -= 1;
            infos.push(info.map_err(|d| {
                if d.loc.is_known() {
                    d
                } else {
                    node_diag(node, d.message)
                }
            })?);
        }
        self.m
            .set_attr(op, GRAPHS_ATTR, Attribute::Array(infos.into()));
        self.finish_node(node, op)
    }

    /// Imports `g` into region `index` of `op`; returns the region's
    /// `onnx.graphs` entry.
    fn import_region(
        &mut self,
        op: ir::OpId,
        index: usize,
        g: &GraphProto,
        derived: &[Type],
    ) -> Result<Attribute, Diagnostic> {
        let region = self
            .m
            .region(op, index)
            .ok_or_else(|| Diagnostic::error("internal: missing region"))?;
        // Subgraph inputs may omit their type (or part of it).
        let placeholder = Type::unranked_tensor(Type::f32());
        let declared: Vec<Type> = g
            .input
            .iter()
            .map(|vi| {
                self.or_foreign(vi, value_info_type(vi))
                    .unwrap_or_else(|_| placeholder.clone())
            })
            .collect();
        let arg_types: Vec<Type> = declared
            .iter()
            .zip(derived)
            .map(|(d, t)| refine(d, t.clone()).0)
            .collect();
        let block = self.m.append_block(region, &arg_types);
        for (&a, d) in self.m.block_args(block).to_vec().iter().zip(declared) {
            self.declared_types.set(a, Some(d));
        }
        let saved = self.block.replace(block);
        self.scopes.push(Scope::default());
        let result = self.import_region_body(block, g);
        self.scopes.pop();
        self.block = saved;
        let outputs = result?;
        let names = |items: Vec<String>| {
            Attribute::Array(items.iter().map(|n| Attribute::string(n)).collect())
        };
        let inputs: Vec<String> = g.input.iter().map(|v| self.export_name(&v.name)).collect();
        let outputs: Vec<String> = outputs.iter().map(|n| self.export_name(n)).collect();
        let entries = vec![
            (Sym::new("inputs"), names(inputs)),
            (Sym::new("name"), Attribute::string(&g.name)),
            (Sym::new("outputs"), names(outputs)),
        ];
        Ok(Attribute::Dict(Arc::from(entries)))
    }

    fn import_region_body(
        &mut self,
        block: ir::BlockId,
        g: &GraphProto,
    ) -> Result<Vec<String>, Diagnostic> {
        let args = self.m.block_args(block).to_vec();
        let mut seen = HashSet::new();
        for (vi, &a) in g.input.iter().zip(&args) {
            if !seen.insert(vi.name.as_str()) {
                return Err(Diagnostic::error(format!(
                    "subgraph input '{}' is defined more than once",
                    vi.name
                )));
            }
            self.define(&vi.name, a, None)?;
        }
        let results = self.import_body(g)?;
        let mut b = Builder::at_end(&mut self.m, block);
        b.op(OpKind::Yield.ir_name(), &results, &[], &[]);
        Ok(g.output.iter().map(|o| o.name.clone()).collect())
    }
}
