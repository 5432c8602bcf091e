//! The module graph runs one way: a lower floor never imports a higher one.
//!
//! protocol → config and compat → transport (and auth) → connection → era → layer →
//! catalog → binding → host (and providers). Read from the source itself,
//! comments aside, so that a `use` that goes up fails here, with its file
//! and line.

use std::path::Path;

/// Each floor, with the modules above it that it must not name.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "protocol",
        &[
            "config",
            "compat",
            "transport",
            "connection",
            "era",
            "layer",
            "catalog",
            "binding",
            "host",
            "providers",
        ],
    ),
    ("config", &["transport", "connection", "era", "layer", "catalog", "binding", "host", "providers"]),
    ("compat.rs", &["transport", "connection", "era", "layer", "catalog", "binding", "host", "providers"]),
    ("transport", &["connection", "era", "layer", "catalog", "binding", "host", "providers"]),
    // Authorization sits with the HTTP transport it will serve.
    ("auth", &["connection", "era", "layer", "catalog", "binding", "host", "providers"]),
    ("connection", &["era", "layer", "catalog", "binding", "host", "providers"]),
    ("era", &["layer", "catalog", "binding", "host", "providers"]),
    ("layer", &["catalog", "binding", "host", "providers"]),
    ("catalog", &["binding", "host", "providers"]),
    ("binding", &["host", "providers"]),
];

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

/// Whether `code` names `crate::<module>`, directly or in a `use crate::{..}`
/// group.
fn names(code: &str, module: &str, in_crate_group: bool) -> bool {
    let direct = code.match_indices(&format!("crate::{module}")).any(|(i, m)| {
        let after = code[i + m.len()..].chars().next();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    });
    let grouped =
        in_crate_group && code.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| word == module);
    direct || grouped
}

#[test]
fn no_module_imports_from_a_higher_floor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (floor, above) in FLOORS {
        let mut files = Vec::new();
        sources(&src.join(floor), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let mut in_group = false;
            for (n, line) in text.lines().enumerate() {
                let code = code(line);
                // What a `use crate::{..}` group names, on this line.
                let group = match code.find("crate::{") {
                    Some(i) => Some(&code[i + "crate::{".len()..]),
                    None if in_group => Some(code),
                    None => None,
                };
                for module in *above {
                    if names(code, module, false) || group.is_some_and(|g| names(g, module, true)) {
                        violations.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                    }
                }
                if group.is_some() {
                    let closed = code.contains("};") || (code.contains("crate::{") && code.contains('}'));
                    in_group = !closed;
                }
            }
        }
    }
    assert!(violations.is_empty(), "imports that go up a floor:\n{}", violations.join("\n"));
}

#[test]
fn the_check_sees_an_import_that_goes_up() {
    assert!(names("use crate::binding::Event;", "binding", false));
    assert!(names("    let x = crate::binding::sampling_depth();", "binding", false));
    assert!(!names("use crate::bindings_of_mine::X;", "binding", false));
    assert!(names("    binding::Event,", "binding", true));
    assert!(names("binding::X, layer::Y};", "layer", true));
    assert!(!code("/// see crate::binding::Binding").contains("crate::binding"));
}
