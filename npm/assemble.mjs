#!/usr/bin/env node
// Assembles the npm packages from built binaries: the main package (the launcher, with
// one optional dependency per platform package) and the platform packages of each binary
// given.
//
//   node npm/assemble.mjs --out DIR [--version X.Y.Z] --binary TARGET=PATH [--binary ...]
//
// TARGET is a Rust target from npm/platforms.json (x86_64-unknown-linux-musl ...). The
// version defaults to Cargo.toml's. Each package is written to DIR/<package name>/,
// ready for `npm pack` or `npm publish`. The release workflow and tests/npm_package.rs
// both run this.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.dirname(here);

function fail(message) {
  process.stderr.write(`assemble: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { out: null, version: null, binaries: [] };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => (inline !== undefined ? inline : argv[++i]);
    if (flag === "--out") options.out = value();
    else if (flag === "--version") options.version = value();
    else if (flag === "--binary") {
      const spec = value() || "";
      const at = spec.indexOf("=");
      if (at <= 0) fail(`--binary wants TARGET=PATH, got '${spec}'`);
      options.binaries.push({ target: spec.slice(0, at), file: spec.slice(at + 1) });
    } else if (flag === "-h" || flag === "--help") {
      process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1, 10).join("\n") + "\n");
      process.exit(0);
    } else fail(`unknown argument '${argv[i]}'`);
  }
  if (!options.out) fail("--out DIR is required");
  if (options.binaries.length === 0) fail("give at least one --binary TARGET=PATH");
  return options;
}

function cargoVersion() {
  const manifest = fs.readFileSync(path.join(repo, "Cargo.toml"), "utf8");
  const pkg = manifest.split(/^\[/m).find((section) => section.startsWith("package]"));
  const match = pkg && pkg.match(/^version\s*=\s*"([^"]+)"/m);
  if (!match) fail("no version in Cargo.toml's [package]");
  return match[1];
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + "\n");
}

function copyDocs(dir) {
  for (const name of ["README.md", "LICENSE"]) fs.copyFileSync(path.join(repo, name), path.join(dir, name));
}

const options = parseArgs(process.argv.slice(2));
const version = options.version || cargoVersion();
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) fail(`'${version}' is not a version`);
const { packages: platforms } = JSON.parse(fs.readFileSync(path.join(here, "platforms.json"), "utf8"));
const template = JSON.parse(fs.readFileSync(path.join(here, "baton-context", "package.json"), "utf8"));
const out = path.resolve(options.out);
fs.mkdirSync(out, { recursive: true });

// The main package: the launcher, and every platform package as an optional dependency
// (npm installs only the one whose os/cpu/libc match the machine).
const mainDir = path.join(out, template.name);
fs.rmSync(mainDir, { recursive: true, force: true });
fs.mkdirSync(path.join(mainDir, "bin"), { recursive: true });
const launcher = path.join(mainDir, "bin", "baton.js");
fs.copyFileSync(path.join(here, "baton-context", "bin", "baton.js"), launcher);
fs.chmodSync(launcher, 0o755);
copyDocs(mainDir);
const optionalDependencies = {};
for (const platform of platforms) optionalDependencies[`${template.name}-${platform.suffix}`] = version;
writeJson(path.join(mainDir, "package.json"), { ...template, version, optionalDependencies });
const written = [mainDir];

// A target's binary goes into every package that carries it (on Linux, the glibc and the
// musl package both carry the musl build).
const packagesOf = (target) => platforms.filter((p) => p.target === target);
for (const { target, file } of options.binaries) {
  if (packagesOf(target).length === 0) fail(`no npm package for target '${target}' (see npm/platforms.json)`);
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat || !stat.isFile()) fail(`no binary at ${file}`);
}
for (const { target, file } of options.binaries) for (const platform of packagesOf(target)) {
  const name = `${template.name}-${platform.suffix}`;
  const dir = path.join(out, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  const binary = path.join(dir, "bin", "baton");
  fs.copyFileSync(file, binary);
  fs.chmodSync(binary, 0o755);
  copyDocs(dir);
  const manifest = {
    name,
    version,
    description: `The baton binary for ${platform.os} ${platform.cpu}${platform.libc ? ` (${platform.libc})` : ""}; install ${template.name}, which picks it.`,
    license: template.license,
    repository: template.repository,
    os: [platform.os],
    cpu: [platform.cpu],
    ...(platform.libc ? { libc: [platform.libc] } : {}),
    files: ["bin/baton", "README.md", "LICENSE"],
    preferUnplugged: true,
  };
  writeJson(path.join(dir, "package.json"), manifest);
  written.push(dir);
}

for (const dir of written) process.stdout.write(`${dir}\n`);
