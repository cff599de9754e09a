# Random well-typed chains of the ops the simplify rules match (casts over
# every dtype, transposes, the reshape family, identities, splat-constant
# arithmetic with broadcasting, slices, expands, pads, one-input concats),
# some intermediate values and the input as graph outputs. Deterministic by
# seed. Usage: gen_random.py OUT_DIR FIRST_SEED END_SEED
import random, sys, math
DT = ['bool','i8','u8','i16','u16','i32','u32','i64','u64','f16','bf16','f32','f64']
FL = ['f16','bf16','f32','f64']
def lit(dt, v):
    if dt in FL:
        return '-0.0' if (v == 0 and math.copysign(1, v) < 0) else repr(float(v))
    return str(int(v))
def gen(seed):
    r = random.Random(seed)
    dt = r.choice(DT)
    shape = r.choice([[2,3],[1,2,1,3],[6],[2,1,3],[3,1]])
    lines = [f'  x = Data() {{index = 0, out0.dtype = {dt}, out0.shape = [{", ".join(map(str,shape))}]}}']
    cur, n, outs = 'x', 0, []
    def name():
        nonlocal n; n += 1; return f'n{n}'
    for _ in range(r.randint(2, 8)):
        k = r.choice(['cast','cast','transpose','reshape','flatten','squeeze','unsqueeze','identity','arith','arith','neg','out','slice','expand','pad','concat'])
        v = name()
        if k == 'cast':
            to = r.choice(DT); lines.append(f'  {v} = Cast({cur}) {{to = {to}}}'); dt = to
        elif k == 'transpose':
            p = list(range(len(shape))); r.shuffle(p)
            if r.random() < 0.3:
                lines.append(f'  {v} = Transpose({cur})'); p = list(reversed(range(len(shape))))
            else:
                lines.append(f'  {v} = Transpose({cur}) {{perm = [{", ".join(map(str,p))}]}}')
            shape = [shape[i] for i in p]
        elif k == 'reshape':
            tot = math.prod(shape)
            cands = [[tot], [-1], list(reversed(shape)), [1, tot], [0, -1] if len(shape) > 0 else [tot]]
            if tot == 6: cands += [[2,3],[3,2],[3,-1],[1,2,3]]
            s = r.choice(cands)
            c = name(); lines.append(f'  {c} = Const() {{value = i64[{len(s)}] {{{", ".join(map(str,s))}}}}}')
            lines.append(f'  {v} = Reshape({cur}, {c})')
            out = []
            for i, d in enumerate(s):
                out.append(shape[i] if d == 0 else d)
            if -1 in out:
                known = math.prod(d for d in out if d != -1); out[out.index(-1)] = tot // known
            shape = out
        elif k == 'flatten':
            a = r.randint(-len(shape), len(shape))
            lines.append(f'  {v} = Flatten({cur}) {{axis = {a}}}')
            aa = a + len(shape) if a < 0 else a
            shape = [math.prod(shape[:aa]), math.prod(shape[aa:])]
        elif k == 'squeeze':
            ones = [i for i, d in enumerate(shape) if d == 1]
            if not ones:
                lines.append(f'  {v} = Squeeze({cur})')
            else:
                i = r.choice(ones); ax = i - len(shape) if r.random() < 0.5 else i
                if r.random() < 0.3:
                    lines.append(f'  {v} = Squeeze({cur}) {{axes = [{ax}]}}')
                else:
                    c = name(); lines.append(f'  {c} = Const() {{value = i64[1] {{{ax}}}}}')
                    lines.append(f'  {v} = Squeeze({cur}, {c})')
                shape = shape[:i] + shape[i+1:]
        elif k == 'unsqueeze':
            rk = len(shape) + 1; ax = r.randint(-rk, rk - 1)
            if r.random() < 0.3:
                lines.append(f'  {v} = Unsqueeze({cur}) {{axes = [{ax}]}}')
            else:
                c = name(); lines.append(f'  {c} = Const() {{value = i64[1] {{{ax}}}}}')
                lines.append(f'  {v} = Unsqueeze({cur}, {c})')
            a = ax + rk if ax < 0 else ax
            shape = shape[:a] + [1] + shape[a:]
        elif k == 'identity':
            lines.append(f'  {v} = Identity({cur}) {{out0.dtype = {dt}, out0.shape = [{", ".join(map(str,shape))}]}}')
        elif k == 'arith':
            if dt == 'bool': continue
            op, val = r.choice([('Mul',1),('Div',1),('Add',-0.0),('Add',0.0),('Sub',0.0),('Sub',-0.0),('Mul',2)])
            cs = r.choice([[1], shape[-1:] if shape else [1], shape, [2] + shape])
            c = name(); lines.append(f'  {c} = Const() {{value = {dt}[{", ".join(map(str,cs))}] splat({lit(dt,val)})}}')
            args = f'{cur}, {c}' if r.random() < 0.7 else f'{c}, {cur}'
            if op in ('Sub','Div'): args = f'{cur}, {c}'
            lines.append(f'  {v} = {op}({args})')
            rank = max(len(cs), len(shape)); a = [1]*(rank-len(shape)) + shape; b = [1]*(rank-len(cs)) + cs
            shape = [max(p, q) for p, q in zip(a, b)]
        elif k == 'neg':
            if dt in FL or dt in ('i8','i16','i32','i64'):
                lines.append(f'  {v} = Neg({cur})')
            else: continue
        elif k == 'slice':
            if not shape: continue
            ax = r.randrange(len(shape)); st = r.choice([0, -shape[ax], 1 if shape[ax] > 1 else 0]); en = r.choice([shape[ax], 9223372036854775807])
            c1, c2, c3 = name(), name(), name()
            lines += [f'  {c1} = Const() {{value = i64[1] {{{st}}}}}', f'  {c2} = Const() {{value = i64[1] {{{en}}}}}', f'  {c3} = Const() {{value = i64[1] {{{ax}}}}}']
            lines.append(f'  {v} = Slice({cur}, {c1}, {c2}, {c3})')
            s0 = st + shape[ax] if st < 0 else st
            shape = shape[:ax] + [shape[ax] - s0] + shape[ax+1:]
        elif k == 'expand':
            es = r.choice([shape[-1:] if shape else [1], shape, [2] + shape])
            c = name(); lines.append(f'  {c} = Const() {{value = i64[{len(es)}] {{{", ".join(map(str,es))}}}}}')
            lines.append(f'  {v} = Expand({cur}, {c})')
            rank = max(len(es), len(shape)); a = [1]*(rank-len(shape)) + shape; b = [1]*(rank-len(es)) + es
            shape = [max(p, q) for p, q in zip(a, b)]
        elif k == 'pad':
            pads = [0] * (2 * len(shape))
            if r.random() < 0.3 and pads: pads[-1] = 1; shape = shape[:-1] + [shape[-1] + 1]
            c = name(); lines.append(f'  {c} = Const() {{value = i64[{len(pads)}] {{{", ".join(map(str,pads))}}}}}')
            lines.append(f'  {v} = Pad({cur}, {c})')
        elif k == 'concat':
            lines.append(f'  {v} = Concat({cur}) {{axis = 0}}')
        elif k == 'out':
            outs.append(cur); continue
        cur = v
    outs.append(cur)
    if r.random() < 0.3: outs.append('x')
    lines.append(f'  out = NetOutput({", ".join(outs)})')
    return 'graph root {\n' + '\n'.join(lines) + '\n}\n'
for s in range(int(sys.argv[2]), int(sys.argv[3])):
    with open(f'{sys.argv[1]}/g{s}.graph', 'w') as f:
        f.write(gen(s))
