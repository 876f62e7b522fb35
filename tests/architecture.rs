//! The shape check (docs/ARCHITECTURE.md): every `crate::` path in `src/` points to the same
//! layer or a lower one, and the top-level modules import each other without a cycle; and
//! nothing but the command line's one way out (`cli/screen.rs`) prints to the terminal.
//!
//! The source is parsed with `syn`, so grouped imports (`use crate::{a, b::c}`), paths in
//! expressions and macros' token streams are all seen, and code under `#[cfg(test)]` (test
//! modules, test-only files) is left out: a test may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The layers, lowest first. A module may import from its own layer or any lower one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    Util,
    Edge,
    Model,
    Service,
    Cli,
}

/// Where each module sits, by path prefix; the longest matching prefix wins. Every
/// top-level module must be listed, so a new one has to be placed on purpose.
const LAYERS: &[(&str, Layer)] = &[
    ("util", Layer::Util),
    ("fsx", Layer::Util),
    ("places", Layer::Util),
    ("state", Layer::Util),
    ("stdin", Layer::Edge),
    ("host", Layer::Edge),
    ("gitx", Layer::Edge),
    ("transcript", Layer::Edge),
    ("config", Layer::Model),
    ("planning", Layer::Model),
    ("figure", Layer::Model),
    ("handoff::doc", Layer::Model),
    ("metrics", Layer::Service),
    ("session_state", Layer::Service),
    ("hook", Layer::Service),
    ("monitor", Layer::Service),
    ("handoff", Layer::Service),
    ("resume", Layer::Service),
    ("statusline", Layer::Service),
    ("report", Layer::Service),
    ("status", Layer::Service),
    ("checkpoint_github", Layer::Service),
    ("install", Layer::Service),
    ("doctor", Layer::Service),
    ("manual_handoff", Layer::Service),
    ("relay", Layer::Service),
    ("run_record", Layer::Service),
    ("demo", Layer::Service),
    ("cli", Layer::Cli),
];

fn layer_of(module_path: &[String]) -> Option<Layer> {
    let joined = module_path.join("::");
    LAYERS
        .iter()
        .filter(|(prefix, _)| joined == *prefix || joined.starts_with(&format!("{prefix}::")))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, layer)| *layer)
}

/// One `crate::…` reference found in a file.
#[derive(Debug, Clone)]
struct Reference {
    from: Vec<String>,
    to: Vec<String>,
    file: PathBuf,
    line: usize,
}

fn has_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .meta
                .require_list()
                .map(|list| list.tokens.to_string().split_whitespace().any(|t| t == "test"))
                .unwrap_or(false)
    })
}

/// Collects the `crate::` paths of one file, skipping `#[cfg(test)]` items.
struct Collector {
    module: Vec<String>,
    file: PathBuf,
    found: Vec<Reference>,
    /// `mod x;` declared under `#[cfg(test)]`: a file compiled for tests only.
    test_only_children: BTreeSet<String>,
}

impl Collector {
    fn record(&mut self, segments: Vec<String>, line: usize) {
        // Two segments at least (`crate::x`): `crate` alone says nothing.
        if segments.len() >= 2 && segments[0] == "crate" {
            self.found.push(Reference {
                from: self.module.clone(),
                to: segments[1..].to_vec(),
                file: self.file.clone(),
                line,
            });
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                let mut full = prefix.clone();
                if name.ident != "self" {
                    full.push(name.ident.to_string());
                }
                self.record(full, name.ident.span().start().line);
            }
            syn::UseTree::Rename(rename) => {
                let mut full = prefix.clone();
                full.push(rename.ident.to_string());
                self.record(full, rename.ident.span().start().line);
            }
            syn::UseTree::Glob(glob) => {
                self.record(prefix.clone(), glob.star_token.spans[0].start().line);
            }
            syn::UseTree::Group(group) => {
                for item in &group.items {
                    self.use_tree(prefix, item);
                }
            }
        }
    }

    /// Paths inside macro calls (`format!`, `matches!` …) are only tokens to syn: find
    /// `crate :: a :: b` runs in them.
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let flat: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        let mut index = 0;
        while index < flat.len() {
            match &flat[index] {
                proc_macro2::TokenTree::Group(group) => self.tokens(group.stream()),
                proc_macro2::TokenTree::Ident(ident) if ident == "crate" => {
                    let line = ident.span().start().line;
                    let mut segments = vec!["crate".to_string()];
                    let mut next = index + 1;
                    while next + 2 < flat.len() + 1 {
                        let colons = matches!((flat.get(next), flat.get(next + 1)),
                            (Some(proc_macro2::TokenTree::Punct(a)), Some(proc_macro2::TokenTree::Punct(b)))
                                if a.as_char() == ':' && b.as_char() == ':');
                        match (colons, flat.get(next + 2)) {
                            (true, Some(proc_macro2::TokenTree::Ident(segment))) => {
                                segments.push(segment.to_string());
                                next += 3;
                            }
                            _ => break,
                        }
                    }
                    self.record(segments, line);
                    index = next;
                    continue;
                }
                _ => {}
            }
            index += 1;
        }
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Mod(m) => &m.attrs,
        syn::Item::Fn(f) => &f.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Use(u) => &u.attrs,
        syn::Item::Struct(s) => &s.attrs,
        syn::Item::Enum(e) => &e.attrs,
        syn::Item::Const(c) => &c.attrs,
        syn::Item::Static(s) => &s.attrs,
        syn::Item::Trait(t) => &t.attrs,
        syn::Item::Macro(m) => &m.attrs,
        syn::Item::Type(t) => &t.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = item_attrs(item);
        if has_cfg_test(attrs) {
            if let syn::Item::Mod(m) = item {
                if m.content.is_none() {
                    self.test_only_children.insert(m.ident.to_string());
                }
            }
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        // An inline module: its items are still this file's, one level down.
        if let Some((_, items)) = &item.content {
            self.module.push(item.ident.to_string());
            for inner in items {
                self.visit_item(inner);
            }
            self.module.pop();
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !has_cfg_test(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = path.segments.first().map(|s| s.ident.span().start().line).unwrap_or(0);
        self.record(segments, line);
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

/// Where a file writes to stdout or stderr by itself: a `print!`-family macro, `io::stdout()`
/// or `io::stderr()` (but to ask `.is_terminal()`), the raw descriptors. Test code is left
/// out.
struct Printers {
    found: Vec<String>,
}

const PRINT_MACROS: &[&str] = &["print", "println", "eprint", "eprintln", "dbg"];
const STREAMS: &[&str] = &["stdout", "stderr", "STDOUT_FILENO", "STDERR_FILENO"];
/// What a stream is named under: `io::stdout`, `libc::STDOUT_FILENO`.
const STREAM_OWNERS: &[&str] = &["io", "libc"];

impl Printers {
    fn note(&mut self, what: String, line: usize) {
        self.found.push(format!("line {line}: {what}"));
    }

    /// A stream named inside a macro's tokens (`writeln!(std::io::stdout(), …)`).
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let flat: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        for (at, token) in flat.iter().enumerate() {
            match token {
                proc_macro2::TokenTree::Group(group) => self.tokens(group.stream()),
                proc_macro2::TokenTree::Ident(ident) if STREAMS.iter().any(|s| ident == s) => {
                    let owner = at.checked_sub(3).and_then(|o| match &flat[o] {
                        proc_macro2::TokenTree::Ident(owner) => Some(owner.to_string()),
                        _ => None,
                    });
                    if owner.is_some_and(|o| STREAM_OWNERS.contains(&o.as_str())) {
                        self.note(ident.to_string(), ident.span().start().line)
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Printers {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !has_cfg_test(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !has_cfg_test(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if let Some(last) = mac.path.segments.last() {
            if PRINT_MACROS.iter().any(|m| last.ident == m) {
                self.note(format!("{}!", last.ident), last.ident.span().start().line);
            }
        }
        self.tokens(mac.tokens.clone());
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        // Asking whether a stream is a terminal prints nothing.
        if call.method == "is_terminal" {
            for arg in &call.args {
                self.visit_expr(arg);
            }
            return;
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let [.., owner, stream] = names.as_slice() {
            if STREAM_OWNERS.contains(&owner.as_str()) && STREAMS.contains(&stream.as_str()) {
                let line = path.segments.last().map(|s| s.ident.span().start().line).unwrap_or(0);
                self.note(stream.clone(), line);
            }
        }
        syn::visit::visit_path(self, path);
    }
}

/// The files of `src/` that print by themselves, with where.
fn printing_files(src: &Path) -> BTreeMap<PathBuf, Vec<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read source");
        let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut printers = Printers { found: Vec::new() };
        if !has_cfg_test(&syntax.attrs) {
            printers.visit_file(&syntax);
        }
        if !printers.found.is_empty() {
            out.insert(file.strip_prefix(src).expect("under src").to_path_buf(), printers.found);
        }
    }
    out
}

/// The module path of a file under `src/` (`src/host/claude.rs` → `host::claude`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> =
        relative.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::` reference in the library, test-only code left out.
fn references(src: &Path) -> Vec<Reference> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut test_only: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut all = Vec::new();
    // Parents come before their children in sorted order (`gitx/mod.rs` < `gitx/testutil.rs`
    // is not guaranteed), so collect first and filter test-only files afterwards.
    let mut per_file = Vec::new();
    for file in files {
        if file.ends_with("main.rs") {
            continue; // the binary's entry: a few lines into `cli`, outside the library.
        }
        let text = std::fs::read_to_string(&file).expect("read source");
        let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let module = module_of(src, &file);
        let mut collector = Collector {
            module: module.clone(),
            file: file.clone(),
            found: Vec::new(),
            test_only_children: BTreeSet::new(),
        };
        if !has_cfg_test(&syntax.attrs) {
            collector.visit_file(&syntax);
        }
        for child in &collector.test_only_children {
            let mut path = module.clone();
            path.push(child.clone());
            test_only.insert(path);
        }
        per_file.push((module, collector.found));
    }
    for (module, found) in per_file {
        if test_only.iter().any(|t| module.starts_with(t)) {
            continue;
        }
        all.extend(found);
    }
    all
}

/// The violations of the layering, one line each.
fn back_edges(refs: &[Reference]) -> Vec<String> {
    let mut out = BTreeSet::new();
    for r in refs {
        let (Some(from), Some(to)) = (layer_of(&r.from), layer_of(&r.to)) else {
            continue;
        };
        if to > from {
            out.insert(format!(
                "{}:{}: {} ({from:?}) imports crate::{} ({to:?})",
                r.file.display(),
                r.line,
                r.from.join("::"),
                r.to.join("::"),
            ));
        }
    }
    out.into_iter().collect()
}

/// Cycles among top-level modules (Tarjan's strongly connected components of size > 1).
fn cycles(refs: &[Reference]) -> Vec<Vec<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in refs {
        let (Some(from), Some(to)) = (r.from.first(), r.to.first()) else {
            continue;
        };
        graph.entry(to.clone()).or_default();
        if from != to {
            graph.entry(from.clone()).or_default().insert(to.clone());
        }
    }
    struct Tarjan<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on_stack: BTreeSet<String>,
        next: usize,
        components: Vec<Vec<String>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, node: &str) {
            self.index.insert(node.to_string(), self.next);
            self.low.insert(node.to_string(), self.next);
            self.next += 1;
            self.stack.push(node.to_string());
            self.on_stack.insert(node.to_string());
            for next in self.graph.get(node).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node.to_string(), low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node.to_string(), low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(&top);
                    let done = top == node;
                    component.push(top);
                    if done {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.components.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        graph: &graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        components: Vec::new(),
    };
    for node in graph.keys() {
        if !tarjan.index.contains_key(node) {
            tarjan.visit(node);
        }
    }
    tarjan.components
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_top_level_module_has_a_layer() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(src_dir()).expect("read src") {
        let path = entry.expect("entry").path();
        let name = path.file_stem().expect("name").to_string_lossy().to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        if layer_of(std::slice::from_ref(&name)).is_none() {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "place these modules in a layer (tests/architecture.rs LAYERS and docs/ARCHITECTURE.md): {missing:?}"
    );
}

#[test]
fn imports_point_down_only() {
    let refs = references(&src_dir());
    assert!(refs.len() > 100, "the scan found only {} references", refs.len());
    let edges = back_edges(&refs);
    let mut report = String::new();
    for edge in &edges {
        let _ = writeln!(report, "  {edge}");
    }
    assert!(edges.is_empty(), "{} imports point up a layer:\n{report}", edges.len());
}

#[test]
fn top_level_modules_import_each_other_without_a_cycle() {
    let refs = references(&src_dir());
    let found = cycles(&refs);
    assert!(found.is_empty(), "import cycles among top-level modules: {found:?}");
}

#[test]
fn the_scan_sees_grouped_imports_paths_and_macros_and_skips_tests() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("util")).expect("mkdir");
    std::fs::write(
        src.join("util/mod.rs"),
        "use crate::{cli::Thing, host::{a, b}};\n\
         fn f() { crate::monitor::go(); format!(\"{}\", crate::report::x()); }\n\
         #[cfg(test)]\nmod tests { use crate::cli::Other; }\n\
         #[cfg(test)]\nmod testutil;\n",
    )
    .expect("write");
    std::fs::write(src.join("util/testutil.rs"), "use crate::cli::Hidden;\n").expect("write");
    std::fs::write(src.join("host.rs"), "use crate::util::fsx;\n").expect("write");
    let refs = references(&src);
    let targets: BTreeSet<String> = refs.iter().map(|r| r.to.join("::")).collect();
    let expected: BTreeSet<String> =
        ["cli::Thing", "host::a", "host::b", "monitor::go", "report::x", "util::fsx"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    assert_eq!(targets, expected);
    let edges = back_edges(&refs);
    assert_eq!(edges.len(), 5, "{edges:#?}"); // util → cli, host ×2, monitor, report
    let found = cycles(&refs);
    assert_eq!(found, vec![vec!["host".to_string(), "util".to_string()]]);
}

/// Issue 32: text a command prints goes out through `cli/screen.rs`, which shows the
/// control characters of text baton did not write; a new command cannot forget it.
#[test]
fn only_the_one_way_out_prints() {
    // The binary's entry flushes what a command left; the pty passes the host's own
    // screen through, and the relay's line, whose text `status_bytes` escapes.
    let allowed = ["cli/screen.rs", "main.rs", "util/pty.rs"];
    let printing = printing_files(&src_dir());
    let found: Vec<String> = printing
        .iter()
        .filter(|(file, _)| !allowed.iter().any(|a| Path::new(a) == file.as_path()))
        .map(|(file, sites)| format!("{}: {}", file.display(), sites.join(", ")))
        .collect();
    assert!(
        found.is_empty(),
        "print through cli/screen.rs (`out!`, `outln!`, `errln!`, `Screen`), not directly:\n  {}",
        found.join("\n  ")
    );
    assert!(printing.contains_key(Path::new("cli/screen.rs")), "the scan sees the way out itself");
}

#[test]
fn the_print_scan_sees_macros_streams_and_skips_tests_and_terminal_checks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(
        src.join("a.rs"),
        "fn f() { println!(\"x\"); let _ = std::io::stdout().is_terminal(); }\n\
         fn g() { writeln!(std::io::stderr(), \"y\").ok(); }\n\
         fn h(out: &mut impl std::io::Write) { let _ = io::stdout(); let stdout = Screen::stdout(); }\n\
         #[cfg(test)]\nmod tests { fn t() { eprintln!(\"z\"); } }\n",
    )
    .expect("write");
    std::fs::write(src.join("b.rs"), "fn quiet() { let _ = std::io::stdout().is_terminal(); }\n")
        .expect("write");
    let printing = printing_files(&src);
    assert_eq!(printing.keys().collect::<Vec<_>>(), vec![Path::new("a.rs")]);
    assert_eq!(printing[Path::new("a.rs")], vec!["line 1: println!", "line 2: stderr", "line 3: stdout"]);
}
