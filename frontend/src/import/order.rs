//! Node order: ONNX requires topologically sorted nodes; files that break
//! the rule are sorted (Kahn, stable), and cycles are reported.

use super::node_diag;
use crate::proto::NodeProto;
use ir::Diagnostic;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// Indices of `nodes` in an order where every value is defined before use.
/// `outer` holds the names defined before any node (inputs, initializers).
pub fn topo_order(nodes: &[NodeProto], outer: &HashSet<&str>) -> Result<Vec<usize>, Diagnostic> {
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        for out in node.output.iter().filter(|o| !o.is_empty()) {
            if outer.contains(out.as_str()) || producer.insert(out, i).is_some() {
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
        for input in node.input.iter().filter(|s| !s.is_empty()) {
            match producer.get(input.as_str()) {
                Some(&p) => {
                    sorted &= p < i;
                    succs[p].push(i);
                    indegree[i] += 1;
                }
                None if outer.contains(input.as_str()) => {}
                None => {
                    return Err(node_diag(
                        node,
                        format!("input '{input}' is not defined in the graph"),
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
