#!/usr/bin/env bash
# Counts what issue 34 bounds: core-dialect op names spelled as string
# literals in the passes and the emitter (non-test code), and string match
# arms in lower. Usage: bash scripts/core-literals.sh [-v]
set -euo pipefail
cd "$(dirname "$0")/.."
names=$(grep -oE '^[a-z0-9]+\.[a-z0-9_]+' ir/core.table | sed 's/\./\\./' | paste -sd'|')
files() { find lower/src dealloc/src bufferize/src constprop/src ir/src/transforms -name '*.rs' ! -name tests.rs ! -path '*/tests/*'; }
# Literals outside `#[cfg(test)] mod tests { .. }` (at the end of a file).
lits=$(for f in $(files); do awk '/^#\[cfg\(test\)\]/{exit} {print FILENAME":"FNR": "$0}' "$f"; done | grep -E "\"($names)\"" || true)
arms=$(for f in $(find lower/src -name '*.rs'); do awk '/^#\[cfg\(test\)\]/{exit} {print FILENAME":"FNR": "$0}' "$f"; done | grep -E '^[^:]+:[0-9]+: +"[^"]*"( *\| *"[^"]*")*( if [^=]*)? =>' || true)
echo "core op-name literals: $(printf '%s' "$lits" | grep -c . || true)"
echo "string match arms in lower: $(printf '%s' "$arms" | grep -c . || true)"
if [[ "${1:-}" == -v ]]; then printf '%s\n%s\n' "$lits" "$arms"; fi
