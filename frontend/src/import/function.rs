//! Model-local functions (`FunctionProto`) are inlined at each call: the
//! body's nodes are imported in a scope of their own (the caller's names
//! are invisible), with `ref_attr_name` attributes taken from the call.

use super::model_info::canonical_domain;
use super::{node_diag, node_label, Frame, Importer, Scope, MAX_DEPTH};
use crate::proto::{AttributeProto, FunctionProto, NodeProto};
use ir::Diagnostic;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

type Key = (String, String, String);

/// Functions by (domain, name, overload); a key defined twice is an error.
pub fn index(functions: &[FunctionProto]) -> Result<HashMap<Key, &FunctionProto>, Diagnostic> {
    let mut map = HashMap::with_capacity(functions.len());
    for f in functions {
        let key = (
            canonical_domain(&f.domain).to_string(),
            f.name.clone(),
            f.overload.clone(),
        );
        if map.insert(key, f).is_some() {
            return Err(Diagnostic::error(format!(
                "model-local function '{}' of domain '{}' is defined more than once",
                f.name, f.domain
            )));
        }
    }
    Ok(map)
}

impl<'a> Importer<'a> {
    /// The model-local function a node calls, if any.
    pub(super) fn function(&self, node: &NodeProto) -> Option<&'a FunctionProto> {
        let key = (
            canonical_domain(&node.domain).to_string(),
            node.op_type.clone(),
            node.overload.clone(),
        );
        self.functions.get(&key).copied()
    }

    pub(super) fn inline_function(
        &mut self,
        node: &NodeProto,
        f: &'a FunctionProto,
        call_attrs: &[AttributeProto],
    ) -> Result<(), Diagnostic> {
        if self.depth >= MAX_DEPTH {
            return Err(node_diag(
                node,
                format!(
                    "unsupported nesting of function calls deeper than {MAX_DEPTH} levels (is '{}' recursive?)",
                    f.name
                ),
            ));
        }
        if node.input.len() > f.input.len() || node.output.len() > f.output.len() {
            return Err(node_diag(
                node,
                format!(
                    "calls function '{}' with {} inputs and {} outputs; it has {} and {}",
                    f.name,
                    node.input.len(),
                    node.output.len(),
                    f.input.len(),
                    f.output.len()
                ),
            ));
        }
        // Defaults first, then the call's own attributes.
        let mut attrs: HashMap<String, AttributeProto> = HashMap::new();
        for a in &f.attribute_proto {
            attrs.insert(a.name.clone(), a.clone());
        }
        for a in call_attrs {
            attrs.insert(a.name.clone(), a.clone());
        }
        // Operands are looked up in the caller's scope before entering.
        let mut bound = Vec::with_capacity(f.input.len());
        for (formal, actual) in f.input.iter().zip(&node.input) {
            if actual.is_empty() {
                continue;
            }
            let v = self.lookup(actual).ok_or_else(|| {
                node_diag(
                    node,
                    format!("input '{actual}' is not defined in the graph"),
                )
            })?;
            bound.push((formal.as_str(), v));
        }
        let outputs: HashMap<String, String> = f
            .output
            .iter()
            .zip(&node.output)
            .filter(|(_, o)| !o.is_empty())
            .map(|(formal, o)| (formal.clone(), self.export_name(o)))
            .collect();
        let opset = f
            .opset_import
            .iter()
            .find(|o| canonical_domain(&o.domain).is_empty())
            .map(|o| o.version);
        let prefix = match self.frames.last() {
            Some(outer) => format!("{}{}/", outer.prefix, node_label(node)),
            None => format!("{}/", node_label(node)),
        };
        self.frames.push(Frame {
            attrs,
            prefix,
            outputs,
            opset,
        });
        self.scopes.push(Scope {
            isolated: true,
            ..Scope::default()
        });
        self.depth += 1;
        let result = self.import_function_body(node, f, &bound);
        self.depth -= 1;
        self.scopes.pop();
        self.frames.pop();
        let values = result?;
        for (out, v) in node.output.iter().zip(values) {
            match v {
                Some(v) => self.define(out, v, Some(node))?,
                None if out.is_empty() => {}
                None => {
                    return Err(node_diag(
                        node,
                        format!("function '{}' does not define output '{out}'", f.name),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Imports the body; returns the values of the function's outputs.
    fn import_function_body(
        &mut self,
        node: &NodeProto,
        f: &'a FunctionProto,
        bound: &[(&str, ir::ValueId)],
    ) -> Result<Vec<Option<ir::ValueId>>, Diagnostic> {
        for vi in &f.value_info {
            if let Ok(t) = self.or_foreign(vi, super::value_info_type(vi)) {
                self.scope_mut()?.declared.insert(vi.name.clone(), t);
            }
        }
        for &(formal, v) in bound {
            self.define(formal, v, Some(node))?;
        }
        let local: HashSet<&str> = bound.iter().map(|&(n, _)| n).collect();
        // Formal inputs the call omits are known names without a value:
        // uses of them read as omitted inputs.
        let omitted: HashSet<&str> = f
            .input
            .iter()
            .map(String::as_str)
            .filter(|n| !local.contains(n))
            .collect();
        let nodes = without_omitted(&f.node, &omitted);
        let order = super::order::topo_order(&nodes, &local, &|_| false).map_err(|d| {
            let msg = format!("in function '{}': {}", f.name, d.message);
            node_diag(node, msg)
        })?;
        for i in order {
            if let Some(n) = nodes.get(i) {
                self.import_node(n)?;
            }
        }
        Ok(f.output
            .iter()
            .take(node.output.len())
            .map(|o| self.lookup(o))
            .collect())
    }
}

/// The body's nodes with uses of omitted formal inputs blanked out.
fn without_omitted<'n>(nodes: &'n [NodeProto], omitted: &HashSet<&str>) -> Cow<'n, [NodeProto]> {
    let uses = |n: &NodeProto| n.input.iter().any(|i| omitted.contains(i.as_str()));
    if !nodes.iter().any(uses) {
        return Cow::Borrowed(nodes);
    }
    let mut owned = nodes.to_vec();
    for n in &mut owned {
        for i in &mut n.input {
            if omitted.contains(i.as_str()) {
                i.clear();
            }
        }
    }
    Cow::Owned(owned)
}
