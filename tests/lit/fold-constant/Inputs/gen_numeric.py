#!/usr/bin/python3
"""Writes seeded random numeric graphs for the fold-constant soundness sweep:
Usage: gen_numeric.py DIR FIRST LAST (graphs gFIRST..gLAST-1.graph). Each
graph has [2, 3] tensors of every dtype family: graph inputs, constants with
the special values mixed in (+-0, +-inf, NaN, 65504, 2^24 + 1, extremes),
and a random mix of element-wise arithmetic, unary float ops, casts,
comparisons, Where, ReduceSum, Transpose and Shape. Some drawn graphs do not
type (an op given a dtype it rejects); the sweep skips those."""
import os
import random
import sys
FLOATS = ['f32', 'f16', 'bf16', 'f64']
INTS = ['i32', 'i8', 'u8', 'i64']
def lit(dt, rnd):
    vals = []
    for _ in range(6):
        if dt in FLOATS:
            v = rnd.choice(['0', '-0', '1', '-1', '2.5', '1e-8', '70000', 'inf', '-inf', 'nan', '0.1', '-3.75', '65504', '16777217'])
        elif dt == 'bool':
            v = rnd.choice(['0', '1'])
        elif dt.startswith('u'):
            v = str(rnd.choice([0, 1, 2, 7, 200, 255]))
        else:
            v = str(rnd.choice([0, 1, -1, 2, -7, 100, 127, -128]))
        vals.append(v)
    return f"{dt}[2, 3] {{{', '.join(vals)}}}"
def gen(seed):
    rnd = random.Random(seed)
    lines = []; vals = []  # (name, dtype)
    n = 0
    def new(): 
        nonlocal n; n += 1; return f"v{n}"
    for k in range(rnd.randint(0, 2)):
        dt = rnd.choice(FLOATS + INTS)
        nm = new(); lines.append(f"  {nm} = Data() {{index = {k}, out0.dtype = {dt}, out0.shape = [2, 3]}}"); vals.append((nm, dt))
    for _ in range(rnd.randint(2, 5)):
        dt = rnd.choice(FLOATS + INTS + ['bool'])
        nm = new(); lines.append(f"  {nm} = Const() {{value = {lit(dt, rnd)}}}"); vals.append((nm, dt))
    for _ in range(rnd.randint(3, 12)):
        a, adt = rnd.choice(vals)
        kind = rnd.random()
        nm = new()
        same = [v for v in vals if v[1] == adt]
        if kind < 0.3 and adt != 'bool':
            b, _ = rnd.choice(same)
            op = rnd.choice(['Add', 'Sub', 'Mul', 'Div', 'Max', 'Min'])
            lines.append(f"  {nm} = {op}({a}, {b})"); vals.append((nm, adt))
        elif kind < 0.45 and adt in FLOATS:
            op = rnd.choice(['Neg', 'Abs', 'Exp', 'Sqrt', 'Relu', 'Floor', 'Ceil', 'Sigmoid', 'Tanh', 'Reciprocal'])
            lines.append(f"  {nm} = {op}({a})"); vals.append((nm, adt))
        elif kind < 0.6:
            to = rnd.choice(FLOATS + INTS + ['bool'])
            lines.append(f"  {nm} = Cast({a}) {{to = {to}}}"); vals.append((nm, to))
        elif kind < 0.7 and adt != 'bool':
            b, _ = rnd.choice(same)
            op = rnd.choice(['Equal', 'Less', 'Greater'])
            lines.append(f"  {nm} = {op}({a}, {b})"); vals.append((nm, 'bool'))
        elif kind < 0.8:
            bools = [v for v in vals if v[1] == 'bool']
            if not bools:
                lines.append(f"  {nm} = Shape({a})"); vals.append((nm, 'shape'))
                continue
            c, _ = rnd.choice(bools); b, _ = rnd.choice(same)
            lines.append(f"  {nm} = Where({c}, {a}, {b})"); vals.append((nm, adt))
        elif kind < 0.9 and adt in FLOATS + ['i32', 'i64']:
            lines.append(f"  {nm} = ReduceSum({a}) {{keepdims = 1}}"); vals.append((nm, 'red'))
        else:
            lines.append(f"  {nm} = Transpose({a}) {{perm = [1, 0]}}"); vals.append((nm, 'tr'))
    outs = [v[0] for v in vals[-3:]]
    # feed some outputs through an op so both direct and indirect uses exist
    lines.append(f"  out = NetOutput({', '.join(outs)})")
    return "graph g {\n" + "\n".join(lines) + "\n}\n"
out_dir, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(out_dir, exist_ok=True)
for s in range(first, last):
    with open(os.path.join(out_dir, f"g{s}.graph"), "w") as f:
        f.write(gen(s))
