//! The module graph runs one way: a lower floor never imports a higher one.
//!
//! protocol → config and compat → cache, tasks and skills → transport → auth → connection → era →
//! layer → catalog → handlers → binding → host (and providers). Read from the source
//! itself, comments aside, so that a `use` that goes up fails here, with its
//! file and line.
//!
//! A module is named by a `crate::module` path, by a `use crate::{module::..}`
//! group, or by a name the crate root re-exports from it (`crate::Binding`
//! names `binding`, since `src/lib.rs` has `pub use binding::{Binding, ..}`).

use std::collections::HashMap;
use std::path::Path;

/// The floors, lowest first; modules on one floor may name each other, a
/// module never names one on a higher floor. The README's layout states the
/// same order (see `the_readme_states_these_floors`).
const FLOORS: &[&[&str]] = &[
    &["protocol"],
    &["config", "compat"],
    // Where cached results and started tasks' records are kept: the stores
    // and their keys, what a task is, and what a skill is and the checks
    // its files pass; nothing of a connection (the cache layer is in
    // `layer`, the task handle and skill loading in `binding`).
    &["cache", "tasks", "skills"],
    // Authorization builds on the HTTP transport (it is a layer on its
    // per-hop service); the transport never names it.
    &["transport"],
    &["auth"],
    &["connection"],
    &["era"],
    &["layer"],
    &["catalog"],
    // What the client serves when the server asks: it depends on the
    // configuration, not on the binding.
    &["handlers"],
    &["binding"],
    &["host", "providers"],
];

/// Each checked module, with the modules above it that it must not name.
fn rules() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut rules = Vec::new();
    for (i, floor) in FLOORS.iter().enumerate() {
        let above: Vec<&str> = FLOORS[i + 1..].iter().flat_map(|f| f.iter().copied()).collect();
        for module in *floor {
            rules.push((*module, above.clone()));
        }
    }
    rules
}

/// A module's source: its folder, or its one file.
fn source_of(src: &Path, module: &str) -> std::path::PathBuf {
    let folder = src.join(module);
    if folder.is_dir() {
        folder
    } else {
        src.join(format!("{module}.rs"))
    }
}

fn sources(path: &Path, out: &mut Vec<std::path::PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    for entry in std::fs::read_dir(path).unwrap() {
        sources(&entry.unwrap().path(), out);
    }
}

/// The code of a line: what precedes a `//` comment.
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// What the crate root re-exports, from the text of `src/lib.rs`: each name
/// (`Binding`, `Limits`, `limits`) and the module it comes from
/// (`binding`, `config`), read from its `pub use module::{A, B};` and
/// `pub use module::path::C;` statements.
fn root_names(lib: &str) -> HashMap<String, String> {
    let text: Vec<&str> = lib.lines().map(code).collect();
    let text = text.join(" ");
    let mut names = HashMap::new();
    for statement in text.split(';') {
        let Some(at) = statement.find("pub use ") else { continue };
        let path = statement[at + "pub use ".len()..].trim();
        let Some((module, rest)) = path.split_once("::") else { continue };
        let module = module.trim();
        let rest = rest.trim();
        let items = match rest.strip_prefix('{') {
            Some(group) => {
                let group = group.strip_suffix('}').expect("a `pub use` group ends with `}`");
                assert!(!group.contains('{'), "nested groups in a root `pub use` are not read: {statement}");
                group.split(',').map(str::trim).filter(|item| !item.is_empty()).collect()
            }
            None => vec![rest],
        };
        for item in items {
            // `path::Name`, `Name`, or `Name as Alias`: the root name is the last word.
            let name = item.rsplit(|c: char| !is_ident(c)).find(|word| !word.is_empty()).unwrap_or(item);
            if name != "self" && name != "*" {
                names.insert(name.to_string(), module.to_string());
            }
        }
    }
    names
}

/// Every module `text` names through a crate path, with its line (from 1):
/// `crate::module..`, `crate::Name` (resolved through `roots`), and the
/// first segment of each path of a `use crate::{..}` group (which may span
/// lines; a nested group's paths are under their parent, so not read).
fn named_modules(text: &str, roots: &HashMap<String, String>) -> Vec<(usize, String)> {
    let resolve = |head: &str| roots.get(head).cloned().unwrap_or_else(|| head.to_string());
    let mut named = Vec::new();
    // The brace depth inside a `crate::{..}` group, and whether the next
    // word at depth 1 starts a path.
    let mut depth = 0usize;
    let mut at_head = false;
    for (n, line) in text.lines().enumerate() {
        let code = code(line);
        let mut rest = code;
        let mut offset = 0;
        // Bounded: every turn consumes at least one character of the line.
        while !rest.is_empty() {
            if depth > 0 {
                let c = rest.chars().next().unwrap();
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => at_head = true,
                    c if is_ident(c) => {
                        let word: String = rest.chars().take_while(|c| is_ident(*c)).collect();
                        if depth == 1 && at_head {
                            named.push((n + 1, resolve(&word)));
                            at_head = false;
                        }
                        offset += word.len();
                        rest = &code[offset..];
                        continue;
                    }
                    _ => {}
                }
                offset += c.len_utf8();
                rest = &code[offset..];
                continue;
            }
            let Some(i) = rest.find("crate::") else { break };
            let before = rest[..i].chars().next_back();
            offset += i + "crate::".len();
            rest = &code[offset..];
            if before.is_some_and(is_ident) {
                // `mycrate::..`, not this crate.
                continue;
            }
            if rest.starts_with('{') {
                depth = 1;
                at_head = true;
                offset += 1;
                rest = &code[offset..];
                continue;
            }
            let word: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            if !word.is_empty() {
                named.push((n + 1, resolve(&word)));
            }
        }
    }
    named
}

#[test]
fn no_module_imports_from_a_higher_floor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let roots = root_names(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    // The check is only as good as this map: a `lib.rs` it can no longer
    // read must fail here, not let every root name through.
    assert_eq!(roots.get("Binding").map(String::as_str), Some("binding"), "{roots:?}");
    assert_eq!(roots.get("Event").map(String::as_str), Some("events"), "{roots:?}");
    let mut violations = Vec::new();
    for (floor, above) in rules() {
        let mut files = Vec::new();
        sources(&source_of(&src, floor), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (n, module) in named_modules(&text, &roots) {
                if above.contains(&module.as_str()) {
                    violations.push(format!(
                        "{}:{n}: names {module}: {}",
                        file.display(),
                        lines[n - 1].trim()
                    ));
                }
            }
        }
    }
    assert!(violations.is_empty(), "imports that go up a floor:\n{}", violations.join("\n"));
}

#[test]
fn the_check_sees_an_import_that_goes_up() {
    let roots = root_names(
        "#![forbid(unsafe_code)]\n\
         pub mod binding;\n\
         pub use binding::{\n    Binding, Definition,\n    Event,\n};\n\
         pub use config::{limits, Limits};\n\
         #[cfg(feature = \"x\")]\n\
         pub use host::Host;\n\
         pub use layer::retry::RetryPolicy as Retry; // a comment: pub use nothing::Here;\n",
    );
    let expected: HashMap<String, String> = [
        ("Binding", "binding"),
        ("Definition", "binding"),
        ("Event", "binding"),
        ("limits", "config"),
        ("Limits", "config"),
        ("Host", "host"),
        ("Retry", "layer"),
    ]
    .into_iter()
    .map(|(name, module)| (name.to_string(), module.to_string()))
    .collect();
    assert_eq!(roots, expected);

    let modules = |text: &str| -> Vec<(usize, String)> { named_modules(text, &roots) };
    let one = |module: &str| vec![(1, module.to_string())];
    assert_eq!(modules("use crate::binding::Event;"), one("binding"));
    assert_eq!(modules("    let x = crate::binding::sampling_depth();"), one("binding"));
    assert_eq!(modules("use crate::bindings_of_mine::X;"), one("bindings_of_mine"));
    // Through the crate root's re-exports.
    assert_eq!(modules("use crate::Binding;"), one("binding"));
    assert_eq!(modules("    let h: crate::Host = todo!();"), one("host"));
    assert_eq!(modules("fn f(l: &crate::Limits) {}"), one("config"));
    assert_eq!(modules("use crate::Error;"), one("Error"));
    // Groups, on one line or several; a nested group's paths are its parent's.
    assert_eq!(
        modules("use crate::{Binding, error::Error};"),
        vec![(1, "binding".into()), (1, "error".into())]
    );
    assert_eq!(
        modules(
            "use crate::{\n    error::Error,\n    Host, protocol::{Event, methods},\n};\nuse x::Binding;"
        ),
        vec![(2, "error".into()), (3, "host".into()), (3, "protocol".into())]
    );
    assert_eq!(
        modules("use crate::{transport::http::{HttpBuilder}, auth::OAuth};"),
        vec![(1, "transport".into()), (1, "auth".into())]
    );
    // Not this crate, and not code.
    assert!(modules("use mycrate::binding::X;").is_empty());
    assert!(modules("/// see crate::binding::Binding").is_empty());
    assert!(modules("let x = 1; // crate::Host").is_empty());
}

#[test]
fn the_readme_states_these_floors() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let at =
        readme.find("Modules import only from the floors below them").expect("the README states the floors");
    // The line that lists them: the first that starts with "protocol,".
    let line = readme[at..].lines().find(|l| l.starts_with("protocol,")).expect("the floors' line");
    let stated: Vec<&str> = line
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| FLOORS.iter().any(|f| f.contains(w)))
        .collect();
    let order: Vec<&str> = FLOORS.iter().flat_map(|f| f.iter().copied()).collect();
    assert_eq!(stated, order, "README: {line}");
}
