//! The daemon's import graph keeps its layers: read from the sources, not from the compiler.
//!
//! Every `crate::…` path in `src/**/*.rs` (in `use` lines, `use crate::{a, b::c}` groups, and
//! inline paths such as `crate::store::now()`) is an edge from the file's top-level module to
//! the path's top-level module (`crate::MossHome` and other items `lib.rs` re-exports resolve to
//! the module they come from). Comments are skipped; test code counts like any other, except
//! that a test may open a database with the real schema (`crate::schema`, which gathers the
//! families' migrations). The rules:
//!
//! 1. No cycle runs through `store` or `config`: neither reaches itself again.
//! 2. `store/` imports only the leaf modules ([`LEAVES`]); `config.rs` imports only the leaf
//!    modules and `store` (whose settings it re-exports); a leaf module imports only leaf
//!    modules. So the lowest layers never sit above the registry, the families or the server.
//! 3. A family (`capsule/`, `reasoning/`, `tasks/`, `memory/`) reaches another family only
//!    through that family's declared interface, `crate::<family>::interface`; and no family file
//!    climbs out of its folder with `super::super::` (which this test does not follow).
//! 4. The registry (`family.rs`) and the MCP edge (`mcp/`) import no REST code (`api`). The
//!    `tool!` macro's template names `$crate::api` for the routes it writes into a family's
//!    table; that code is the family's, not the registry's.
//!
//! A failure names the file, the line and the path.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// Modules that import nothing above them: what `store/` and `config.rs` may use.
const LEAVES: &[&str] = &["error", "log", "home", "paths", "budget", "tokens"];
/// The families, each a folder under `src/`.
const FAMILIES: &[&str] = &["capsule", "reasoning", "tasks", "memory", "moss"];
/// The module gathering the families' migrations (above the store, like the families).
const SCHEMA: &str = "schema";
/// The module through which a family offers items to other families.
const INTERFACE: &str = "interface";

/// One `crate::` path found in a file.
#[derive(Debug, Clone)]
struct Import {
    /// The file, relative to `src/`.
    file: String,
    line: usize,
    /// The path's segments after `crate::`, resolved through `lib.rs`'s re-exports.
    path: Vec<String>,
}

impl Import {
    fn describe(&self) -> String {
        format!(
            "src/{}:{}: crate::{}",
            self.file,
            self.line,
            self.path.join("::")
        )
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's top-level module: `store/fts/mod.rs` → `store`, `config.rs` → `config`, `lib.rs`
/// → `` (the crate root).
fn top_module(file: &str) -> String {
    let first = file.split('/').next().unwrap();
    match first.strip_suffix(".rs") {
        Some("lib" | "main") => String::new(),
        Some(name) => name.to_string(),
        None => first.to_string(),
    }
}

/// The code of a line: without its `//` comment (doc comments included).
fn code(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths of a `use` group's body (`a, b::c, d::{e, f}`), each split in segments.
fn group_paths(body: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut depth = 0;
    let mut start = 0;
    let mut items = Vec::new();
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&body[start..]);
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        if let Some(open) = item.find('{') {
            let head: Vec<String> = item[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            let close = item.rfind('}').unwrap();
            let mut p = prefix.to_vec();
            p.extend(head);
            group_paths(&item[open + 1..close], &p, out);
        } else {
            let mut p = prefix.to_vec();
            p.extend(
                item.split(" as ")
                    .next()
                    .unwrap()
                    .split("::")
                    .map(|s| s.trim().to_string())
                    .filter(|s| s != "self" && !s.is_empty()),
            );
            out.push(p);
        }
    }
}

/// Every `crate::` path of `text`, with its line. A `use crate::{…}` group may span lines.
fn crate_paths(text: &str) -> Vec<(usize, Vec<String>)> {
    let lines: Vec<&str> = text.lines().map(code).collect();
    let joined = lines.join("\n");
    let line_of = |at: usize| joined[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = joined[from..].find("crate::") {
        let at = from + i;
        from = at + "crate::".len();
        if at > 0 && joined[..at].chars().next_back().is_some_and(is_ident) {
            continue; // `moss_crate::` or the like
        }
        let rest = &joined[from..];
        if rest.starts_with('{') {
            let mut depth = 0;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map(|(i, _)| i)
                .expect("a closed use group");
            let mut paths = Vec::new();
            group_paths(&rest[1..end], &[], &mut paths);
            out.extend(paths.into_iter().map(|p| (line_of(at), p)));
            continue;
        }
        let mut segments = Vec::new();
        let mut s = rest;
        loop {
            let len = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
            if len == 0 {
                break;
            }
            segments.push(s[..len].to_string());
            s = &s[len..];
            match s.strip_prefix("::") {
                Some(next) if next.starts_with(|c: char| is_ident(c)) => s = next,
                Some(next) if next.starts_with('{') => {
                    let close = next.find('}').expect("a closed use group");
                    let mut paths = Vec::new();
                    group_paths(&next[1..close], &segments, &mut paths);
                    out.extend(paths.into_iter().map(|p| (line_of(at), p)));
                    segments.clear();
                    break;
                }
                _ => break,
            }
        }
        if !segments.is_empty() {
            out.push((line_of(at), segments));
        }
    }
    out
}

/// `lib.rs`'s re-exports (`pub use home::MossHome;`): item → the module it comes from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in lib.lines().map(code) {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.trim_end_matches(';');
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        for item in items.trim_matches(|c| c == '{' || c == '}').split(',') {
            let item = item.split(" as ").last().unwrap().trim();
            map.insert(item.to_string(), module.to_string());
        }
    }
    map
}

/// Every import of the crate's sources, and the top-level modules there are.
fn imports() -> (Vec<Import>, BTreeSet<String>) {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let lib = std::fs::read_to_string(root.join("lib.rs")).unwrap();
    let reexported = reexports(&lib);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| top_module(&f.strip_prefix(&root).unwrap().to_string_lossy()))
        .filter(|m| !m.is_empty())
        .collect();
    let mut all = Vec::new();
    for f in &files {
        let file = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        // Test code starts at a file's `#[cfg(test)]` module, or is the whole of a `tests.rs`.
        let tests_from = if file.ends_with("tests.rs") {
            0
        } else {
            text.lines()
                .position(|l| l.trim() == "#[cfg(test)]")
                .map_or(usize::MAX, |i| i + 1)
        };
        for (line, mut path) in crate_paths(&text) {
            if let Some(module) = path.first().and_then(|p| reexported.get(p)) {
                path.insert(0, module.clone());
            }
            // A test may open a database with the real schema, which the families list.
            if line >= tests_from && path.first().map(String::as_str) == Some(SCHEMA) {
                continue;
            }
            all.push(Import {
                file: file.clone(),
                line,
                path,
            });
        }
        if FAMILIES.contains(&top_module(&file).as_str()) {
            for (i, l) in text.lines().enumerate() {
                assert!(
                    !code(l).contains("super::super::"),
                    "src/{file}:{}: a family file reaches out of its folder with \
                     `super::super::`; name the path from `crate::` instead",
                    i + 1
                );
            }
        }
    }
    (all, modules)
}

/// The edges between top-level modules, each with the first import that makes it.
fn graph(
    imports: &[Import],
    modules: &BTreeSet<String>,
) -> BTreeMap<String, BTreeMap<String, Import>> {
    let mut edges: BTreeMap<String, BTreeMap<String, Import>> = BTreeMap::new();
    for i in imports {
        let from = top_module(&i.file);
        let Some(to) = i.path.first().filter(|t| modules.contains(*t)) else {
            continue; // an item of the crate root, or a macro such as `crate::tool!`
        };
        if from.is_empty() || &from == to {
            continue;
        }
        edges
            .entry(from)
            .or_default()
            .entry(to.clone())
            .or_insert_with(|| i.clone());
    }
    edges
}

/// A path of imports from `start` back to `start`, if there is one.
fn cycle(edges: &BTreeMap<String, BTreeMap<String, Import>>, start: &str) -> Option<Vec<Import>> {
    let mut came: BTreeMap<String, Import> = BTreeMap::new();
    let mut queue = VecDeque::from([start.to_string()]);
    while let Some(m) = queue.pop_front() {
        for (to, import) in edges.get(&m).into_iter().flatten() {
            if to == start {
                let mut path = vec![import.clone()];
                let mut at = m.clone();
                while at != start {
                    let step = came[&at].clone();
                    at = top_module(&step.file);
                    path.push(step);
                }
                path.reverse();
                return Some(path);
            }
            if !came.contains_key(to) {
                came.insert(to.clone(), import.clone());
                queue.push_back(to.clone());
            }
        }
    }
    None
}

#[test]
fn no_cycle_runs_through_store_or_config() {
    let (imports, modules) = imports();
    let edges = graph(&imports, &modules);
    for layer in ["store", "config"] {
        if let Some(path) = cycle(&edges, layer) {
            panic!(
                "{layer} reaches itself again through:\n  {}",
                path.iter()
                    .map(Import::describe)
                    .collect::<Vec<_>>()
                    .join("\n  ")
            );
        }
    }
}

#[test]
fn store_config_and_the_leaves_import_only_what_is_below_them() {
    let (imports, modules) = imports();
    let mut bad = Vec::new();
    for i in &imports {
        let from = top_module(&i.file);
        let Some(to) = i.path.first().filter(|t| modules.contains(*t)) else {
            continue;
        };
        if &from == to {
            continue;
        }
        let allowed: &[&str] = match from.as_str() {
            "store" => LEAVES,
            "config" => &[LEAVES, &["store"]].concat(),
            m if LEAVES.contains(&m) => LEAVES,
            _ => continue,
        };
        if !allowed.contains(&to.as_str()) {
            bad.push(format!(
                "{} ({from} may import only {})",
                i.describe(),
                allowed.join(", ")
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "imports above the layer:\n  {}",
        bad.join("\n  ")
    );
}

#[test]
fn families_reach_each_other_only_through_their_interfaces() {
    let (imports, _) = imports();
    let mut bad = Vec::new();
    for i in &imports {
        let from = top_module(&i.file);
        let Some(to) = i.path.first() else { continue };
        if !FAMILIES.contains(&from.as_str()) || !FAMILIES.contains(&to.as_str()) || &from == to {
            continue;
        }
        if i.path.get(1).map(String::as_str) != Some(INTERFACE) {
            bad.push(format!(
                "{} ({from} reaches into {to}: use crate::{to}::{INTERFACE}, or move the \
                 helper to a shared module)",
                i.describe()
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "families importing another family's private items:\n  {}",
        bad.join("\n  ")
    );
}

#[test]
fn the_registry_and_mcp_import_no_rest_code() {
    let (imports, _) = imports();
    let mut bad = Vec::new();
    for i in &imports {
        let from = top_module(&i.file);
        if (from != "family" && from != "mcp") || i.path.first().map(String::as_str) != Some("api")
        {
            continue;
        }
        let text = std::fs::read_to_string(src().join(&i.file)).unwrap();
        let line = text.lines().nth(i.line - 1).unwrap_or_default();
        if line.contains("$crate::api") {
            continue;
        }
        bad.push(i.describe());
    }
    assert!(
        bad.is_empty(),
        "the registry or the MCP edge importing REST code (move the shared part out of api/):\n  {}",
        bad.join("\n  ")
    );
}

/// The reader of paths itself: groups, nested groups, inline paths, comments and re-exports.
#[test]
fn paths_are_read_from_use_groups_inline_paths_and_reexports() {
    let text = "use crate::{a, b::{c, d::E}, f as g};\n\
                // use crate::commented;\n\
                let x = crate::h::i(); /// crate::doc\n\
                use crate::j::{self, K};\n\
                my_crate::not_this();\n";
    let paths: Vec<String> = crate_paths(text)
        .into_iter()
        .map(|(line, p)| format!("{line}:{}", p.join("::")))
        .collect();
    assert_eq!(
        paths,
        [
            "1:a",
            "1:b::c",
            "1:b::d::E",
            "1:f",
            "3:h::i",
            "4:j",
            "4:j::K"
        ]
    );
    let map = reexports("pub use home::MossHome;\npub use server::{DaemonOptions, start};\n");
    assert_eq!(map["MossHome"], "home");
    assert_eq!(map["start"], "server");
    assert_eq!(top_module("store/fts/mod.rs"), "store");
    assert_eq!(top_module("config.rs"), "config");
}
