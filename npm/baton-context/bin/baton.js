#!/usr/bin/env node
// The `baton` command of the npm package: finds the prebuilt native binary that npm
// installed with it (the optional dependency for this platform) and runs it with the
// same arguments, standard streams and exit status.
//
// The native binary is what `baton install` registers in the hosts' settings (it records
// its own path), so the hook run after every tool call never starts Node: this launcher
// only serves commands a person types.
"use strict";

const { spawnSync } = require("child_process");
const fs = require("fs");
const path = require("path");

const main = require("../package.json");

const BUILT_FOR = "linux x64 and arm64 (glibc or musl), macOS x64 and arm64";

function linuxLibc() {
  try {
    // The report's network section can wait on DNS; the header alone is wanted.
    if ("excludeNetwork" in process.report) process.report.excludeNetwork = true;
    const header = process.report.getReport().header;
    return header.glibcVersionRuntime ? "gnu" : "musl";
  } catch (_) {
    return fs.existsSync("/etc/alpine-release") ? "musl" : "gnu";
  }
}

// The platform packages that can run here, best first. Both Linux builds are static, so
// the other C library's build is a working second choice.
function candidates() {
  const { platform, arch } = process;
  if (arch !== "x64" && arch !== "arm64") return [];
  if (platform === "darwin") return [`${main.name}-darwin-${arch}`];
  if (platform === "linux") {
    const libc = linuxLibc();
    const other = libc === "gnu" ? "musl" : "gnu";
    return [`${main.name}-linux-${arch}-${libc}`, `${main.name}-linux-${arch}-${other}`];
  }
  return [];
}

function nativeBinary() {
  for (const name of candidates()) {
    let manifest;
    try {
      manifest = require.resolve(`${name}/package.json`);
    } catch (_) {
      continue;
    }
    const binary = path.join(path.dirname(manifest), "bin", "baton");
    if (fs.existsSync(binary)) return binary;
  }
  return null;
}

function noBinary() {
  const here = `${process.platform} ${process.arch}`;
  const wanted = candidates();
  const lines = [`baton: no prebuilt baton binary is installed for this machine (${here}).`];
  if (wanted.length > 0) {
    lines.push(
      `npm did not install ${wanted[0]}: optional dependencies were probably left out`,
      "(--omit=optional, --no-optional, or a lockfile made on another platform).",
      `Install again with them: npm install -g ${main.name}`,
    );
  } else {
    lines.push(`Prebuilt binaries exist for ${BUILT_FOR}.`);
  }
  lines.push(
    "Or build it from source (needs Rust, https://rustup.rs):",
    `  cargo install ${main.name} && baton install`,
  );
  process.stderr.write(lines.join("\n") + "\n");
  return 1;
}

function run() {
  const binary = nativeBinary();
  if (binary === null) return noBinary();
  const result = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
  if (result.error) {
    process.stderr.write(`baton: cannot run ${binary}: ${result.error.message}\n`);
    return 1;
  }
  if (result.signal) {
    // Die of the same signal, so the shell sees what the binary saw.
    process.kill(process.pid, result.signal);
    return 1;
  }
  return result.status === null ? 1 : result.status;
}

process.exitCode = run();
