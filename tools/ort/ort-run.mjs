#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (onnxruntime-node, CPU), graphvet's
// reference runtime: .npy inputs in, .npy outputs out, optionally ORT's own
// optimized model written out, and the session-creation times that measure
// ORT's optimizer. See docs/onnx-import.md, "ONNX Runtime as the reference".
//
//   node tools/ort/ort-run.mjs MODEL.onnx [--input NAME=FILE.npy ...]
//       [--outputs-dir DIR] [--optimize disabled|basic|extended|layout|all]
//       [--optimized-model OUT.onnx] [--threads N] [--timing-repeats N] [--json]
//
// ORT is looked up in $GRAPHVET_ORT_DIR, else in build/ort of this checkout
// (ci/fetch-ort installs it there). Exit 0 ran, 2 bad input or ORT refused the
// model (`FILE: error: ...`), 3 ORT is not installed.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const EXIT_BAD_INPUT = 2;
const EXIT_NO_ORT = 3;
const LEVELS = ['disabled', 'basic', 'extended', 'layout', 'all'];

class UsageError extends Error {
  constructor(where, message) {
    super(`${where}: error: ${message}`);
  }
}

// numpy descr -> [ORT tensor type, typed array, graphvet dtype name]. f16
// travels as its bits (Node 20 has no Float16Array), and so does bool.
const DTYPES = {
  '<f4': ['float32', Float32Array, 'f32'],
  '<f8': ['float64', Float64Array, 'f64'],
  '<f2': ['float16', Uint16Array, 'f16'],
  '<i8': ['int64', BigInt64Array, 'i64'],
  '<i4': ['int32', Int32Array, 'i32'],
  '<i2': ['int16', Int16Array, 'i16'],
  '|i1': ['int8', Int8Array, 'i8'],
  '<u8': ['uint64', BigUint64Array, 'u64'],
  '<u4': ['uint32', Uint32Array, 'u32'],
  '<u2': ['uint16', Uint16Array, 'u16'],
  '|u1': ['uint8', Uint8Array, 'u8'],
  '|b1': ['bool', Uint8Array, 'bool'],
};
const DESCR_OF_ORT = Object.fromEntries(Object.entries(DTYPES).map(([d, [t]]) => [t, d]));

function usage() {
  return `usage: node tools/ort/ort-run.mjs MODEL.onnx [--input NAME=FILE.npy ...]
       [--outputs-dir DIR] [--optimize ${LEVELS.join('|')}]
       [--optimized-model OUT.onnx] [--threads N] [--timing-repeats N] [--json]

Runs MODEL.onnx in ONNX Runtime (CPU). Every model input is fed from a .npy
file (NAME is the input's name, or its position K). --outputs-dir writes each
output K as DIR/output_K.npy (as graphvet run --save does) and DIR/NAME.npy,
with DIR/outputs.json. --optimize sets graphOptimizationLevel (default all),
--optimized-model makes ORT write the model it optimized. Session creation is
timed at the chosen level and at 'disabled' (the fastest of --timing-repeats
creations each, default 3), in wall-clock and in CPU time: the difference is
ORT's optimization time.
--threads sets intraOpNumThreads (default 1).
--version prints ORT's version (exit 3 when it is not installed).
Exit 0 ran, 2 bad input or ORT refused the model, 3 ORT is not installed.`;
}

function parseArgs(argv) {
  const o = { inputs: [], optimize: 'all', threads: 1, timingRepeats: 3, json: false };
  const value = (i, flag) => {
    if (i + 1 >= argv.length) throw new UsageError('ort-run', `${flag} needs a value`);
    return argv[i + 1];
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const inline = eq > 0 ? a.slice(eq + 1) : undefined;
    const take = () => (inline !== undefined ? inline : value(i++, flag));
    if (flag === '--help' || flag === '-h') {
      o.help = true;
    } else if (flag === '--version') {
      o.version = true;
    } else if (flag === '--json') {
      o.json = true;
    } else if (flag === '--input') {
      o.inputs.push(take());
    } else if (flag === '--outputs-dir') {
      o.outputsDir = take();
    } else if (flag === '--optimize') {
      o.optimize = take();
      if (!LEVELS.includes(o.optimize))
        throw new UsageError('ort-run', `--optimize '${o.optimize}': expected one of ${LEVELS.join(', ')}`);
    } else if (flag === '--optimized-model') {
      o.optimizedModel = take();
    } else if (flag === '--threads') {
      const t = take();
      if (!/^[1-9][0-9]{0,2}$/.test(t)) throw new UsageError('ort-run', `--threads '${t}': expected 1..999`);
      o.threads = Number(t);
    } else if (flag === '--timing-repeats') {
      const t = take();
      if (!/^[1-9][0-9]?$/.test(t)) throw new UsageError('ort-run', `--timing-repeats '${t}': expected 1..99`);
      o.timingRepeats = Number(t);
    } else if (a.startsWith('-') && a !== '-') {
      throw new UsageError('ort-run', `unknown option '${a}'\n${usage()}`);
    } else if (o.model === undefined) {
      o.model = a;
    } else {
      throw new UsageError('ort-run', `a second model '${a}': give one MODEL.onnx`);
    }
  }
  if (!o.help && !o.version && o.model === undefined) throw new UsageError('ort-run', `no model given\n${usage()}`);
  return o;
}

/// Reads a .npy file (format 1, 2 or 3; little-endian or byte-order-free
/// dtypes; C order) into { descr, shape, data: a typed array of its own }.
function readNpy(file) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw new UsageError(file, `cannot read: ${e.code || e.message}`);
  }
  if (bytes.length < 10 || bytes.subarray(0, 6).toString('latin1') !== '\x93NUMPY')
    throw new UsageError(file, 'not a .npy file (no \\x93NUMPY magic)');
  const major = bytes[6];
  let headerLen, start;
  if (major === 1) {
    headerLen = bytes.readUInt16LE(8);
    start = 10;
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) throw new UsageError(file, '.npy header is truncated');
    headerLen = bytes.readUInt32LE(8);
    start = 12;
  } else {
    throw new UsageError(file, `.npy format version ${major} is not supported (1, 2 or 3)`);
  }
  if (start + headerLen > bytes.length) throw new UsageError(file, '.npy header is truncated');
  const header = bytes.subarray(start, start + headerLen).toString(major === 3 ? 'utf8' : 'latin1');
  const descrMatch = header.match(/['"]descr['"]\s*:\s*['"]([^'"]*)['"]/);
  const fortranMatch = header.match(/['"]fortran_order['"]\s*:\s*(True|False)/);
  const shapeMatch = header.match(/['"]shape['"]\s*:\s*\(([^)]*)\)/);
  if (!descrMatch || !fortranMatch || !shapeMatch)
    throw new UsageError(file, `.npy header is malformed: ${header.trim()}`);
  if (fortranMatch[1] === 'True')
    throw new UsageError(file, '.npy data is in Fortran order; write it in C order (np.ascontiguousarray)');
  let descr = descrMatch[1];
  if (descr.length === 3 && descr[0] === '=') descr = '<' + descr.slice(1); // native = little here
  if (descr.length === 3 && descr[2] === '1' && descr[0] === '<') descr = '|' + descr.slice(1);
  if (!(descr in DTYPES)) {
    const why = descr.startsWith('>') ? 'big-endian data is not supported' : 'unsupported dtype';
    throw new UsageError(file, `.npy dtype '${descrMatch[1]}': ${why} (supported: ${Object.keys(DTYPES).join(' ')})`);
  }
  const dims = shapeMatch[1].split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (!dims.every((d) => /^[0-9]+$/.test(d))) throw new UsageError(file, `.npy shape (${shapeMatch[1]}) is malformed`);
  const shape = dims.map(Number);
  const [, Typed] = DTYPES[descr];
  const count = shape.reduce((a, b) => a * b, 1);
  const dataStart = start + headerLen;
  const want = count * Typed.BYTES_PER_ELEMENT;
  if (bytes.length - dataStart !== want)
    throw new UsageError(file, `.npy data holds ${bytes.length - dataStart} bytes, its shape [${shape}] needs ${want}`);
  // A copy: the typed array needs its own aligned buffer.
  const data = new Typed(bytes.buffer.slice(bytes.byteOffset + dataStart, bytes.byteOffset + dataStart + want));
  return { descr, shape, data };
}

/// The bytes of a .npy file (format 1, header padded to 64 bytes as numpy does).
function formatNpy(descr, shape, data) {
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  return Buffer.concat([prefix, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
}

/// A file name from an ONNX value name: only [A-Za-z0-9_.-], never hidden.
function sanitizeName(name) {
  let s = name.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (s === '' || s.startsWith('.')) s = '_' + s;
  return s;
}

function loadOrt() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dir = process.env.GRAPHVET_ORT_DIR || path.resolve(here, '..', '..', 'build', 'ort');
  const pkg = path.join(dir, 'node_modules', 'onnxruntime-node');
  if (!fs.existsSync(path.join(pkg, 'package.json'))) {
    const e = new Error(`ort-run: error: ONNX Runtime is not installed in ${dir} (ci/fetch-ort installs it; GRAPHVET_ORT_DIR points elsewhere)`);
    e.exitCode = EXIT_NO_ORT;
    throw e;
  }
  try {
    return createRequire(path.join(dir, 'node_modules', 'x.js'))('onnxruntime-node');
  } catch (e) {
    const err = new Error(`ort-run: error: ONNX Runtime in ${dir} does not load: ${e.message}`);
    err.exitCode = EXIT_NO_ORT;
    throw err;
  }
}

/// Feeds from the --input specs: every model input exactly once, dtypes and
/// static dimensions checked against the model's own metadata.
function feedsOf(ort, session, o) {
  const meta = session.inputMetadata || session.inputNames.map((name) => ({ name }));
  const feeds = {};
  const given = [];
  for (const spec of o.inputs) {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw new UsageError('ort-run', `--input '${spec}': expected NAME=FILE.npy`);
    const key = spec.slice(0, eq);
    const file = spec.slice(eq + 1);
    let m = meta.find((x) => x.name === key);
    if (!m && /^[0-9]+$/.test(key)) m = meta[Number(key)];
    if (!m)
      throw new UsageError('ort-run', `--input '${spec}': the model has no input '${key}' (its inputs: ${meta.map((x) => x.name).join(', ')})`);
    if (m.name in feeds) throw new UsageError('ort-run', `--input '${spec}': input '${m.name}' is given twice`);
    if (!file.endsWith('.npy')) throw new UsageError(file, 'inputs are .npy files');
    const { descr, shape, data } = readNpy(file);
    const [ortType] = DTYPES[descr];
    if (m.isTensor && m.type && m.type !== ortType)
      throw new UsageError(file, `input '${m.name}' is ${m.type}, the file holds ${ortType}`);
    if (m.isTensor && Array.isArray(m.shape) && m.shape.length > 0) {
      const fits = m.shape.length === shape.length && m.shape.every((d, i) => typeof d !== 'number' || d < 0 || d === shape[i]);
      if (!fits) throw new UsageError(file, `input '${m.name}' has shape [${m.shape.join(', ')}], the file holds [${shape.join(', ')}]`);
    }
    feeds[m.name] = new ort.Tensor(ortType, data, shape);
    given.push({ name: m.name, file, dtype: DTYPES[descr][2], shape });
  }
  const missing = meta.filter((x) => !(x.name in feeds)).map((x) => x.name);
  if (missing.length > 0)
    throw new UsageError('ort-run', `no --input for the model's input${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  return { feeds, given };
}

/// A session and its creation's wall-clock time and the process's CPU time
/// (user + system, every thread) it took, in ms.
async function createTimed(ort, model, options) {
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  let session;
  try {
    session = await ort.InferenceSession.create(model, options);
  } catch (e) {
    throw new UsageError(model, `ONNX Runtime refuses the model: ${String(e.message || e).trim()}`);
  }
  const cpu = process.cpuUsage(cpuStart);
  return { session, ms: performance.now() - start, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/// Writes output K as output_K.npy (graphvet run --save's name) and
/// NAME.npy (a name taken by another file gets `.K`), plus outputs.json.
function saveOutputs(dir, outputs) {
  fs.mkdirSync(dir, { recursive: true });
  const taken = new Set(outputs.map((_, k) => `output_${k}.npy`));
  for (const [k, out] of outputs.entries()) {
    out.file = `output_${k}.npy`;
    let named = `${sanitizeName(out.name)}.npy`;
    if (named !== out.file && taken.has(named)) named = `${sanitizeName(out.name)}.${k}.npy`;
    taken.add(named);
    out.named_file = named;
    const bytes = formatNpy(out.descr, out.shape, out.data);
    fs.writeFileSync(path.join(dir, out.file), bytes);
    if (named !== out.file) fs.writeFileSync(path.join(dir, named), bytes);
  }
  const described = outputs.map((out, k) => ({
    index: k, name: out.name, file: out.file, named_file: out.named_file, dtype: out.dtype, shape: out.shape,
  }));
  fs.writeFileSync(path.join(dir, 'outputs.json'), JSON.stringify(described, null, 1) + '\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.help) {
    console.log(usage());
    return 0;
  }
  if (o.version) {
    console.log(`onnxruntime-node ${loadOrt().env.versions.node}`);
    return 0;
  }
  if (!fs.existsSync(o.model) || fs.statSync(o.model).isDirectory()) throw new UsageError(o.model, 'cannot read the model');
  const ort = loadOrt();
  const base = { intraOpNumThreads: o.threads, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 4 };
  // Session creation timed as the fastest of --timing-repeats creations at
  // each level, interleaved, after one untimed creation that pays ORT's
  // one-time set-up: the machine's noise only ever adds time.
  await (await createTimed(ort, o.model, { ...base, graphOptimizationLevel: 'disabled' })).session.release();
  let chosen = null;
  let chosenCpuMs = Infinity;
  let disabledMs = Infinity;
  let disabledCpuMs = Infinity;
  for (let i = 0; i < o.timingRepeats; ++i) {
    const atLevel = await createTimed(ort, o.model, { ...base, graphOptimizationLevel: o.optimize });
    chosenCpuMs = Math.min(chosenCpuMs, atLevel.cpuMs);
    if (chosen === null || atLevel.ms < chosen.ms) {
      if (chosen !== null) await chosen.session.release();
      chosen = atLevel;
    } else {
      await atLevel.session.release();
    }
    const disabled = await createTimed(ort, o.model, { ...base, graphOptimizationLevel: 'disabled' });
    disabledMs = Math.min(disabledMs, disabled.ms);
    disabledCpuMs = Math.min(disabledCpuMs, disabled.cpuMs);
    await disabled.session.release();
  }
  let writeMs = null;
  if (o.optimizedModel !== undefined) {
    // Its own session: writing the model would count as optimization time.
    fs.mkdirSync(path.dirname(path.resolve(o.optimizedModel)), { recursive: true });
    const writing = await createTimed(ort, o.model, {
      ...base, graphOptimizationLevel: o.optimize, optimizedModelFilePath: path.resolve(o.optimizedModel),
    });
    writeMs = writing.ms;
    await writing.session.release();
    if (!fs.existsSync(o.optimizedModel)) throw new UsageError(o.optimizedModel, 'ONNX Runtime did not write its optimized model');
  }
  const session = chosen.session;
  const { feeds, given } = feedsOf(ort, session, o);
  const runStart = performance.now();
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    throw new UsageError(o.model, `ONNX Runtime fails to run the model: ${String(e.message || e).trim()}`);
  }
  const runMs = performance.now() - runStart;
  const outputs = session.outputNames.map((name) => {
    const t = results[name];
    const descr = DESCR_OF_ORT[t.type];
    if (!descr) throw new UsageError(o.model, `output '${name}' is ${t.type}, which has no .npy form here`);
    return { name, descr, dtype: DTYPES[descr][2], shape: Array.from(t.dims), data: t.data };
  });
  if (o.outputsDir !== undefined) saveOutputs(o.outputsDir, outputs);
  const ms = (x) => (x === null ? null : Math.round(x * 1000) / 1000);
  const report = {
    model: o.model,
    onnxruntime: ort.env.versions.node,
    optimize: o.optimize,
    threads: o.threads,
    timing_repeats: o.timingRepeats,
    session_create_ms: ms(chosen.ms),
    session_create_disabled_ms: ms(disabledMs),
    optimization_ms: ms(Math.max(0, chosen.ms - disabledMs)),
    session_create_cpu_ms: ms(chosenCpuMs),
    session_create_disabled_cpu_ms: ms(disabledCpuMs),
    optimization_cpu_ms: ms(Math.max(0, chosenCpuMs - disabledCpuMs)),
    optimized_model: o.optimizedModel ?? null,
    optimized_model_write_ms: ms(writeMs),
    run_ms: ms(runMs),
    inputs: given,
    outputs: outputs.map((out, k) => ({
      index: k, name: out.name, dtype: out.dtype, shape: out.shape, file: out.file ?? null, named_file: out.named_file ?? null,
    })),
  };
  if (o.json) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    const f = (ms) => `${ms.toFixed(1)} ms`;
    console.log(`${o.model}: onnxruntime ${report.onnxruntime}, --optimize ${o.optimize}: session ${f(chosen.ms)} ` +
      `(disabled ${f(disabledMs)}, optimization ${f(report.optimization_ms)}), run ${f(runMs)}`);
    if (o.optimizedModel !== undefined) console.log(`optimized model: ${o.optimizedModel}`);
    for (const out of report.outputs)
      console.log(`output ${out.index} ${out.name}: ${out.dtype}[${out.shape.join(', ')}]${out.file ? ` -> ${path.join(o.outputsDir, out.file)}` : ''}`);
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    if (e instanceof UsageError) {
      console.error(e.message);
      process.exit(EXIT_BAD_INPUT);
    }
    console.error(e.exitCode ? e.message : `ort-run: error: ${e.stack || e}`);
    process.exit(e.exitCode || EXIT_BAD_INPUT);
  },
);
