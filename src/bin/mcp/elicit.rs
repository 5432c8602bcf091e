//! Elicitation on the terminal: the server's questions on stderr, the
//! person's answers from stdin (so it works through a pipe too), field by
//! field from the requested schema; or, with `--accept-defaults`, the
//! schema's defaults without prompting.

use mcp_stack::handlers::{ElicitRequest, ElicitResult, ElicitationMode};
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};

use crate::terminal::{clean, clean_line, err_line};

/// `eprintln!` that never panics on a closed stderr.
macro_rules! say {
    ($($arg:tt)*) => { err_line(&format!($($arg)*)) };
}

/// Reads one answer line; `None` at end of input.
fn read_answer(prompt: &str) -> Option<String> {
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "{prompt}").and_then(|()| stderr.flush());
    drop(stderr);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_string()),
    }
}

/// What the person typed at one field.
enum Entry {
    Value(Value),
    Skip,
    Decline,
    Cancel,
}

/// Asks a person (or accepts the defaults) on the terminal. Runs on a
/// blocking thread.
pub(crate) fn ask(req: &ElicitRequest, accept_defaults: bool) -> ElicitResult {
    say!("\n[{}] asks: {}", req.binding, clean(&req.message));
    if req.mode == ElicitationMode::Url {
        let url = clean_line(req.url.as_deref().unwrap_or_default());
        let host = url.split("://").nth(1).and_then(|rest| rest.split(['/', '?', '#']).next()).unwrap_or("");
        say!("  URL:  {url}\n  host: {host}\n  (the CLI does not open it; open it yourself if you trust it)");
        if accept_defaults {
            say!("  --accept-defaults: accepted");
            return ElicitResult::accept_url();
        }
        return match read_answer("  accept? [a]ccept / [d]ecline / [c]ancel: ").as_deref().map(str::trim) {
            Some("a" | "accept" | "y" | "yes") => ElicitResult::accept_url(),
            Some("d" | "decline" | "n" | "no") => ElicitResult::decline(),
            _ => ElicitResult::cancel(),
        };
    }
    let schema = req.schema.clone().unwrap_or_else(|| json!({}));
    if accept_defaults {
        let content = req.defaults();
        return match req.validate(&content) {
            Ok(()) => {
                say!("  --accept-defaults: {}", clean(&Value::Object(content.clone()).to_string()));
                ElicitResult::accept(content)
            }
            Err(e) => {
                say!("  --accept-defaults: cannot accept ({}); cancelled", clean(e.message()));
                ElicitResult::cancel()
            }
        };
    }
    for _attempt in 0..3 {
        let mut content = Map::new();
        for (name, prop, required) in fields(&schema) {
            match ask_field(name, prop, required) {
                Entry::Value(v) => {
                    content.insert(name.to_string(), v);
                }
                Entry::Skip => {}
                Entry::Decline => return ElicitResult::decline(),
                Entry::Cancel => return ElicitResult::cancel(),
            }
        }
        if let Err(e) = req.validate(&content) {
            say!("  not valid: {}; again", clean(e.message()));
            continue;
        }
        say!("  answer: {}", clean(&Value::Object(content.clone()).to_string()));
        return match read_answer("  send it? [Y]es / [n]o (decline) / [c]ancel: ").as_deref().map(str::trim) {
            Some("" | "y" | "Y" | "yes") => ElicitResult::accept(content),
            Some("n" | "no" | "d" | "decline") => ElicitResult::decline(),
            _ => ElicitResult::cancel(),
        };
    }
    ElicitResult::cancel()
}

/// The schema's properties, required ones first (in the schema's order),
/// then the others by name.
fn fields(schema: &Value) -> Vec<(&str, &Value, bool)> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else { return Vec::new() };
    let mut out: Vec<(&str, &Value, bool)> =
        required.iter().filter_map(|r| props.get(*r).map(|p| (*r, p, true))).collect();
    out.extend(
        props.iter().filter(|(k, _)| !required.contains(&k.as_str())).map(|(k, p)| (k.as_str(), p, false)),
    );
    out
}

/// The choices of an enum property: (value, label).
fn choices(prop: &Value) -> Vec<(Value, String)> {
    let labelled = |options: &Value| -> Vec<(Value, String)> {
        options
            .as_array()
            .map(|o| {
                o.iter()
                    .filter_map(|c| {
                        let v = c.get("const")?.clone();
                        let label = c["title"].as_str().map(str::to_owned).unwrap_or_else(|| v.to_string());
                        Some((v, label))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(values) = prop["enum"].as_array() {
        let names = prop["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let label = names.and_then(|n| n.get(i)).and_then(Value::as_str).map(str::to_owned);
                (
                    v.clone(),
                    label.unwrap_or_else(|| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())),
                )
            })
            .collect();
    }
    if prop.get("oneOf").is_some() {
        return labelled(&prop["oneOf"]);
    }
    let items = &prop["items"];
    if items.get("enum").is_some() || items.get("anyOf").is_some() || items.get("oneOf").is_some() {
        let mut inner = choices(items);
        if inner.is_empty() {
            inner = labelled(&items["anyOf"]);
        }
        return inner;
    }
    Vec::new()
}

fn pick(text: &str, options: &[(Value, String)]) -> Option<Value> {
    let text = text.trim();
    if let Ok(n) = text.parse::<usize>() {
        if (1..=options.len()).contains(&n) {
            return Some(options[n - 1].0.clone());
        }
    }
    options.iter().find(|(v, label)| v.as_str() == Some(text) || label == text).map(|(v, _)| v.clone())
}

fn ask_field(name: &str, prop: &Value, required: bool) -> Entry {
    let kind = prop["type"].as_str().unwrap_or("string");
    let options = choices(prop);
    let title = prop["title"].as_str().map(|t| format!(" ({})", clean(t))).unwrap_or_default();
    say!("  {}{title}{}", clean(name), if required { " — required" } else { "" });
    if let Some(d) = prop["description"].as_str() {
        say!("    {}", clean(d));
    }
    for (i, (_, label)) in options.iter().enumerate() {
        say!("    {}. {}", i + 1, clean(label));
    }
    let default = prop.get("default");
    let hint = match (kind, options.is_empty()) {
        ("array", false) => "choices, comma-separated",
        (_, false) => "a choice",
        ("boolean", _) => "y/n",
        ("integer", _) => "an integer",
        ("number", _) => "a number",
        _ => "text",
    };
    let default_text = default.map(|d| format!(", default {}", clean(&d.to_string()))).unwrap_or_default();
    loop {
        let Some(line) = read_answer(&format!("    {hint}{default_text}: ")) else { return Entry::Cancel };
        match line.trim() {
            ":decline" => return Entry::Decline,
            ":cancel" => return Entry::Cancel,
            "" => match default {
                Some(d) => return Entry::Value(d.clone()),
                None if !required => return Entry::Skip,
                None => {
                    say!("    required");
                    continue;
                }
            },
            _ => {}
        }
        let parsed = match (kind, options.is_empty()) {
            ("array", false) => {
                line.split(',').map(|part| pick(part, &options)).collect::<Option<Vec<_>>>().map(Value::Array)
            }
            (_, false) => pick(&line, &options),
            ("boolean", _) => match line.trim() {
                "y" | "yes" | "true" => Some(Value::Bool(true)),
                "n" | "no" | "false" => Some(Value::Bool(false)),
                _ => None,
            },
            ("integer", _) => line.trim().parse::<i64>().ok().map(Value::from),
            ("number", _) => {
                line.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)
            }
            _ => Some(Value::String(line)),
        };
        match parsed {
            Some(v) => return Entry::Value(v),
            None => say!("    not {hint}"),
        }
    }
}
