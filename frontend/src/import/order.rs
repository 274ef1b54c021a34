//! Node order: ONNX requires topologically sorted nodes; files that break
//! the rule are sorted (Kahn, stable), and cycles are reported. A node with
//! subgraphs depends on the outer values they use, too.

use super::node_diag;
use crate::proto::{GraphProto, NodeProto};
use ir::Diagnostic;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// Indices of `nodes` in an order where every value is defined before use.
/// `local` holds the graph's inputs and initializers; `is_outer` tells
/// whether a name is visible from enclosing scopes.
pub fn topo_order(
    nodes: &[NodeProto],
    local: &HashSet<&str>,
    is_outer: &dyn Fn(&str) -> bool,
) -> Result<Vec<usize>, Diagnostic> {
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        for out in node.output.iter().filter(|o| !o.is_empty()) {
            if local.contains(out.as_str()) || producer.insert(out, i).is_some() {
                return Err(node_diag(
                    node,
                    format!("value '{out}' is defined more than once"),
                ));
            }
        }
    }
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut indegree = vec![0usize; nodes.len()];
    let mut sorted = true;
    for (i, node) in nodes.iter().enumerate() {
        let mut implicit = Vec::new();
        for a in &node.attribute {
            for g in a.g.iter().chain(&a.graphs) {
                free_names(g, &mut implicit);
            }
        }
        let explicit = node.input.iter().filter(|s| !s.is_empty()).count();
        let inputs = node.input.iter().filter(|s| !s.is_empty());
        for (k, input) in inputs.chain(&implicit).enumerate() {
            match producer.get(input.as_str()) {
                Some(&p) => {
                    sorted &= p < i;
                    succs[p].push(i);
                    indegree[i] += 1;
                }
                None if local.contains(input.as_str()) || is_outer(input) => {}
                None => {
                    let what = if k < explicit {
                        "input"
                    } else {
                        "value (used in a subgraph)"
                    };
                    return Err(node_diag(
                        node,
                        format!("{what} '{input}' is not defined in the graph"),
                    ));
                }
            }
        }
    }
    if sorted {
        return Ok((0..nodes.len()).collect());
    }
    // Smallest index first keeps the file's order where it is valid.
    let mut ready: BinaryHeap<Reverse<usize>> = (0..nodes.len())
        .filter(|&i| indegree[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &s in &succs[i] {
            indegree[s] -= 1;
            if indegree[s] == 0 {
                ready.push(Reverse(s));
            }
        }
    }
    if order.len() < nodes.len() {
        let stuck = indegree.iter().position(|&d| d > 0).unwrap_or(0);
        if let Some(node) = nodes.get(stuck) {
            return Err(node_diag(
                node,
                "the graph has a cycle through this node".to_string(),
            ));
        }
    }
    Ok(order)
}

/// Names a graph (with its nested subgraphs) uses without defining them:
/// its captures of outer values. Appended to `out` in first-use order.
pub fn free_names(g: &GraphProto, out: &mut Vec<String>) {
    let mut defined: HashSet<&str> = g
        .input
        .iter()
        .map(|v| v.name.as_str())
        .chain(g.initializer.iter().map(|t| t.name.as_str()))
        .collect();
    for node in &g.node {
        defined.extend(node.output.iter().map(String::as_str));
    }
    let mut seen: HashSet<String> = out.iter().cloned().collect();
    let mut add = |name: &str, out: &mut Vec<String>| {
        if !name.is_empty() && !defined.contains(name) && seen.insert(name.to_string()) {
            out.push(name.to_string());
        }
    };
    for node in &g.node {
        for input in &node.input {
            add(input, out);
        }
        for a in &node.attribute {
            for sub in a.g.iter().chain(&a.graphs) {
                let mut inner = Vec::new();
                free_names(sub, &mut inner);
                for n in &inner {
                    add(n, out);
                }
            }
        }
    }
    for o in &g.output {
        add(&o.name, out);
    }
}
