// Runs a wasm32-wasip1 program under Node.js's WASI (preview 1), as a
// cargo runner: `node wasi_run.mjs PROGRAM.wasm [ARGS...]`. The program
// gets its arguments, the environment (TICKPROF_* settings reach it) and
// the current directory, preopened as `.`; the process exits with the
// program's exit code. Needs Node.js 20 or later (WASI `version`).
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';

const [file, ...args] = process.argv.slice(2);
if (!file) {
  console.error('usage: node wasi_run.mjs PROGRAM.wasm [ARGS...]');
  process.exit(2);
}
const wasi = new WASI({
  version: 'preview1',
  args: [file, ...args],
  env: process.env,
  preopens: { '.': process.cwd() },
  returnOnExit: true,
});
const module = new WebAssembly.Module(readFileSync(file));
const instance = new WebAssembly.Instance(module, {
  wasi_snapshot_preview1: wasi.wasiImport,
});
process.exitCode = wasi.start(instance);
