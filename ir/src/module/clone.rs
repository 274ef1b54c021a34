//! Deep copies of ops: operands renamed through a value map, nested
//! regions and blocks copied with fresh arguments.

use super::*;
use std::collections::HashMap;

/// Old value → its copy; values not in the map are used as they are
/// (defined outside what is copied).
pub type ValueMap = HashMap<ValueId, ValueId>;

impl Module {
    /// Copies `op` (with everything nested in it) to `ip`, reading its
    /// operands through `map` and recording its results' copies there.
    pub fn clone_op(&mut self, op: OpId, ip: InsertPoint, map: &mut ValueMap) -> OpId {
        let blocks = HashMap::new();
        self.clone_op_with(op, ip, map, &blocks)
    }

    fn clone_op_with(
        &mut self,
        op: OpId,
        ip: InsertPoint,
        map: &mut ValueMap,
        blocks: &HashMap<BlockId, BlockId>,
    ) -> OpId {
        let mapped = |v: &ValueId| *map.get(v).unwrap_or(v);
        let operands = self.regular_operands(op).iter().map(mapped).collect();
        let successors = (0..self.num_successors(op))
            .filter_map(|i| {
                let (b, _) = self.successor(op, i)?;
                let args = self.successor_args(op, i).iter().map(mapped).collect();
                Some((*blocks.get(&b).unwrap_or(&b), args))
            })
            .collect();
        let data = &self.ops[op];
        let spec = OpSpec {
            operands,
            result_types: data
                .results
                .iter()
                .map(|&r| self.values[r].ty.clone())
                .collect(),
            attrs: data.attrs.clone(),
            regions: data.regions.len(),
            successors,
            loc: data.loc.clone(),
        };
        let old_results = data.results.clone();
        let old_regions = data.regions.clone();
        let new = self.create_op(self.ops[op].name, spec);
        self.insert(new, ip);
        for (&r, &c) in old_results.iter().zip(&self.ops[new].results.clone()) {
            map.insert(r, c);
        }
        for (&from, &to) in old_regions.iter().zip(&self.ops[new].regions.clone()) {
            self.clone_region(from, to, map);
        }
        new
    }

    /// Copies the blocks of `from` into the empty region `to`.
    fn clone_region(&mut self, from: RegionId, to: RegionId, map: &mut ValueMap) {
        let mut blocks = HashMap::new();
        let src: Vec<BlockId> = self.regions[from].blocks.clone();
        for &b in &src {
            let args = self.blocks[b].args.clone();
            let types: Vec<Type> = args.iter().map(|&a| self.values[a].ty.clone()).collect();
            let nb = self.append_block(to, &types);
            for (&a, &na) in args.iter().zip(&self.blocks[nb].args.clone()) {
                map.insert(a, na);
            }
            blocks.insert(b, nb);
        }
        for &b in &src {
            let ops: Vec<OpId> = self.block_ops(b).collect();
            let dst = blocks[&b];
            for o in ops {
                self.clone_op_with(o, InsertPoint::End(dst), map, &blocks);
            }
        }
    }
}
