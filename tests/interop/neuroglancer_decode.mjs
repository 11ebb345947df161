// Decodes precomputed jpeg, png and compresso chunks with Neuroglancer's own shipped decoders, for
// tests/interop/test_neuroglancer_decoders.py.
//
//   node neuroglancer_decode.mjs CLIENT_DIR REQUESTS_JSON
//
// CLIENT_DIR is the built Neuroglancer client that the PyPI `neuroglancer` package installs
// (neuroglancer/static/client). REQUESTS_JSON lists the chunks:
//   [{"operation": "decodeJpeg" | "decodePng" | "decodeCompresso", "input": PATH, "output": PATH,
//     "chunk_size_xyz": [x, y, z], "channels": N, "bytes_per_voxel": B}, ...]
// Each output file receives the bytes the decoder hands back, which Neuroglancer's backend then views
// as the chunk's voxels: x fastest, then y, z and the channel (C order [c, z, y, x]), host endian.
//
// Why the worker bundle and not the .wasm files alone: in the browser the backend sends every chunk
// to the "async computation" web worker (src/async_computation/*.ts), one bundled script that holds
// the jpeg decoder (jpgjs, plain JavaScript, minified into the bundle, not a .wasm), the glue that
// loads and calls the libspng and compresso .wasm modules, and the checks on each chunk's size and
// channels. Running that script, as shipped, is running Neuroglancer's decoding and nothing of ours.
// It is a classic web worker script, so this file gives it the few worker globals it uses: `self`,
// `location` (its public path for the other files), `importScripts` (its second chunk), `fetch` of
// its own .wasm files from disk (nothing else: no network) for WebAssembly.instantiateStreaming, and
// `postMessage`, on which the worker answers. Each chunk is then posted to its `onmessage` with the arguments that Neuroglancer's
// backend passes (src/sliceview/backend_chunk_decoders/{jpeg,png,compresso}.ts).

import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import vm from "node:vm";

const [clientDir, requestsPath] = process.argv.slice(2);
if (!clientDir || !requestsPath) {
  console.error("usage: node neuroglancer_decode.mjs CLIENT_DIR REQUESTS_JSON");
  process.exit(2);
}

// The bundle's file names carry content hashes that change with every release, so the worker is
// found by what it holds: it is the script that registers the chunk decoders and listens for
// messages.
function findWorkerScript() {
  const candidates = readdirSync(clientDir).filter((name) => {
    if (!name.endsWith(".js")) return false;
    const text = readFileSync(path.join(clientDir, name), "latin1");
    return text.includes('"decodeJpeg"') && text.includes("self.onmessage");
  });
  if (candidates.length !== 1) {
    throw new Error(
      `expected one async-computation worker script (registering "decodeJpeg" and setting ` +
        `self.onmessage) in ${clientDir}, found ${JSON.stringify(candidates)}`,
    );
  }
  return path.join(clientDir, candidates[0]);
}

function localFile(url) {
  const parsed = new URL(url);
  if (parsed.protocol !== "file:") {
    throw new Error(`the Neuroglancer worker asked for ${url}; only its own files on disk are served`);
  }
  return fileURLToPath(parsed);
}

let answer = null; // resolves the message the worker is working on
let nextId = 1;
let resolveReady;
const ready = new Promise((resolve) => (resolveReady = resolve));

function installWorkerGlobals(workerScript) {
  globalThis.self = globalThis;
  globalThis.location = pathToFileURL(workerScript);
  globalThis.importScripts = (...urls) => {
    for (const url of urls) {
      const file = localFile(String(url));
      vm.runInThisContext(readFileSync(file, "utf8"), { filename: file });
    }
  };
  // The worker fetches each .wasm and hands the response to WebAssembly.instantiateStreaming. A
  // response here is just the file's bytes, compiled and instantiated with the imports the worker
  // gives, so that this does not depend on which Node.js versions have fetch and Response
  // (Debian's 18 has them only through node-undici).
  globalThis.fetch = async (url) => ({ wasmFile: readFileSync(localFile(String(url))) });
  WebAssembly.instantiateStreaming = async (response, imports) =>
    WebAssembly.instantiate((await response).wasmFile, imports);
  globalThis.postMessage = (message) => {
    if (message === null) {
      resolveReady(); // the worker says it is listening
    } else if (answer !== null) {
      answer(message);
    } else {
      throw new Error(`the Neuroglancer worker sent an unrequested message: ${JSON.stringify(message)}`);
    }
  };
}

// The arguments Neuroglancer's backend passes for a chunk of chunkDataSize [x, y, z, channels].
function argumentsFor(request, data) {
  const [x, y, z] = request.chunk_size_xyz;
  const area = x * y * z;
  switch (request.operation) {
    case "decodeJpeg": // data, width, height, area, numComponents, convertToGrayscale
      return [data, undefined, undefined, area, request.channels, false];
    case "decodePng": // data, width, height, area, numComponents, bytesPerPixel, convertToGrayscale
      return [data, undefined, undefined, area, request.channels, request.bytes_per_voxel, false];
    case "decodeCompresso": // data
      return [data];
    default:
      throw new Error(`unknown operation "${request.operation}" for ${request.input}`);
  }
}

async function decode(request) {
  // A view of a whole ArrayBuffer of its own, as the backend makes of a fetched chunk: the png and
  // compresso glue read the header through `data.buffer` and so ignore a view's byte offset.
  const data = new Uint8Array(readFileSync(request.input));
  const id = nextId++;
  const reply = new Promise((resolve) => (answer = resolve));
  await self.onmessage({ data: { t: request.operation, id, args: argumentsFor(request, data) } });
  const message = await reply;
  answer = null;
  if (message.id !== id) {
    throw new Error(`the Neuroglancer worker answered message ${message.id}, expected ${id}`);
  }
  if (message.error !== undefined) {
    throw new Error(`Neuroglancer's ${request.operation} failed on ${request.input}: ${message.error}`);
  }
  // decodeJpeg and decodePng answer {width, height, numComponents, uint8Array}; decodeCompresso
  // answers the voxel bytes themselves.
  const voxels = message.value instanceof Uint8Array ? message.value : message.value.uint8Array;
  writeFileSync(request.output, voxels);
}

const workerScript = findWorkerScript();
installWorkerGlobals(workerScript);
vm.runInThisContext(readFileSync(workerScript, "utf8"), { filename: workerScript });
await ready;
const requests = JSON.parse(readFileSync(requestsPath, "utf8"));
for (const request of requests) {
  await decode(request);
}
console.log(`decoded ${requests.length} chunks with ${path.basename(workerScript)}`);
