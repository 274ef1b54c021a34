#!/usr/bin/env python3
"""Lists Rust functions longer than a limit (default 120 lines).

usage: scripts/fn-lengths.py [--limit N] [--tests] DIR_OR_FILE...

A function runs from its `fn` line to the closing brace at the same
indentation. Test modules (`#[cfg(test)]`) and `tests/` folders are
skipped unless --tests is given.
"""
import re, sys, os

def functions(path, with_tests):
    lines = open(path, encoding='utf-8').read().split('\n')
    in_test = None
    out = []
    i = 0
    fn_re = re.compile(r'^(\s*)(pub(\([a-z:]+\))?\s+)?(const\s+)?(unsafe\s+)?(extern\s+"C"\s+)?fn\s+(\w+)')
    while i < len(lines):
        line = lines[i]
        if not with_tests and line.strip() == '#[cfg(test)]':
            # skip the following item (module or fn) by brace matching
            depth, j, opened = 0, i + 1, False
            while j < len(lines):
                depth += lines[j].count('{') - lines[j].count('}')
                opened = opened or '{' in lines[j]
                if opened and depth <= 0:
                    break
                j += 1
            i = j + 1
            continue
        m = fn_re.match(line)
        if m and not line.rstrip().endswith(';'):
            indent = m.group(1)
            j = i
            while j < len(lines) and not (lines[j].startswith(indent + '}') and len(lines[j].rstrip()) == len(indent) + 1):
                if j > i and fn_re.match(lines[j]) and len(fn_re.match(lines[j]).group(1)) <= len(indent):
                    break
                j += 1
            out.append((j - i + 1, m.group(7), i + 1))
        i += 1
    return out

def main():
    args = sys.argv[1:]
    limit, with_tests = 120, False
    if '--limit' in args:
        k = args.index('--limit'); limit = int(args[k + 1]); del args[k:k + 2]
    if '--tests' in args:
        args.remove('--tests'); with_tests = True
    files = []
    for a in args or ['.']:
        if os.path.isfile(a):
            files.append(a)
            continue
        for root, dirs, fs in os.walk(a):
            dirs[:] = [d for d in dirs if d not in ('target', '.git') and (with_tests or d != 'tests')]
            files += [os.path.join(root, f) for f in fs if f.endswith('.rs') and (with_tests or f != 'tests.rs')]
    found = []
    for f in sorted(files):
        for n, name, line in functions(f, with_tests):
            if n > limit:
                found.append((n, f'{f}:{line}', name))
    for n, loc, name in sorted(found, reverse=True):
        print(f'{n:5} {loc} {name}')
    print(f'{len(found)} functions over {limit} lines', file=sys.stderr)

main()
