//! The JSON arguments of `call` and `get-prompt`: inline, from stdin (`-`)
//! or from a file (`@FILE`), bounded, and, for a prompt, made strings.
//!
//! Linux caps one command-line argument at 128 KiB, so large arguments come
//! from stdin or a file. Either is read up to the frame limit
//! (`--max-frame-bytes`, the largest message the servers are sent) and
//! refused past it with a message that names the bound and the flag, so
//! that nothing is read without end and nothing is cut.

use serde_json::{Map, Value};
use std::io::Read;
use std::path::Path;

/// Why the arguments cannot be used: said to the person as it is.
#[derive(Debug, PartialEq)]
pub(crate) struct BadArguments(pub(crate) String);

/// The argument text `spec` names: itself, stdin (`-`) or a file (`@FILE`),
/// at most `limit` bytes.
pub(crate) fn text(spec: &str, limit: usize) -> Result<String, BadArguments> {
    if spec == "-" {
        return bounded(std::io::stdin().lock(), limit, "stdin");
    }
    if let Some(path) = spec.strip_prefix('@') {
        let path = Path::new(path);
        let file = std::fs::File::open(path)
            .map_err(|e| BadArguments(format!("cannot read the arguments file {}: {e}", path.display())))?;
        return bounded(file, limit, &format!("the file {}", path.display()));
    }
    if spec.len() > limit {
        return Err(over(spec.len(), limit, "the command line"));
    }
    Ok(spec.to_string())
}

fn over(read: usize, limit: usize, from: &str) -> BadArguments {
    BadArguments(format!(
        "the arguments from {from} are over {limit} bytes (at least {read}), the largest message sent; \
         raise --max-frame-bytes if the server takes more"
    ))
}

fn bounded(reader: impl Read, limit: usize, from: &str) -> Result<String, BadArguments> {
    let mut bytes = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| BadArguments(format!("cannot read the arguments from {from}: {e}")))?;
    if bytes.len() > limit {
        return Err(over(bytes.len(), limit, from));
    }
    String::from_utf8(bytes).map_err(|_| BadArguments(format!("the arguments from {from} are not UTF-8")))
}

/// The arguments as a JSON object.
pub(crate) fn object(text: &str) -> Result<Map<String, Value>, BadArguments> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(BadArguments(format!("the arguments must be a JSON object, not {}", kind(&other)))),
        Err(e) => Err(BadArguments(format!("the arguments are not JSON: {e}"))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A prompt's arguments are strings (the specification's
/// `GetPromptRequest`): a number or a boolean is sent as its JSON text
/// (`3`, `true`), which is what a person typing it meant; null, an array or
/// an object has no one string form and is refused, naming the argument.
pub(crate) fn prompt_strings(arguments: Map<String, Value>) -> Result<Map<String, Value>, BadArguments> {
    arguments
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(_) => Ok((name, value)),
            Value::Number(n) => Ok((name, Value::String(n.to_string()))),
            Value::Bool(b) => Ok((name, Value::String(b.to_string()))),
            other => Err(BadArguments(format!(
                "prompt arguments are strings; {name:?} is {} (numbers and booleans are sent as their text)",
                kind(&other)
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inline_text_files_and_their_bounds() {
        assert_eq!(text(r#"{"a":1}"#, 100).unwrap(), r#"{"a":1}"#);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("args.json");
        std::fs::write(&path, r#"{"big":"xxxxxxxxxx"}"#).unwrap();
        assert_eq!(text(&format!("@{}", path.display()), 100).unwrap(), r#"{"big":"xxxxxxxxxx"}"#);
        let e = text(&format!("@{}", path.display()), 10).unwrap_err();
        assert!(e.0.contains("over 10 bytes") && e.0.contains("--max-frame-bytes"), "{}", e.0);
        let e = text("@/nonexistent/args.json", 100).unwrap_err();
        assert!(e.0.contains("/nonexistent/args.json"), "{}", e.0);
        assert!(text(&"x".repeat(11), 10).is_err());
    }

    #[test]
    fn the_arguments_are_an_object_and_say_what_they_were_instead() {
        assert!(object("{}").unwrap().is_empty());
        assert_eq!(object("[1]").unwrap_err().0, "the arguments must be a JSON object, not an array");
        assert!(object("{").unwrap_err().0.starts_with("the arguments are not JSON"));
    }

    #[test]
    fn prompt_arguments_become_strings_or_are_refused_by_name() {
        let map = |v: Value| v.as_object().unwrap().clone();
        let ok = prompt_strings(map(json!({"n": 3, "b": true, "s": "x", "f": 1.5}))).unwrap();
        assert_eq!(Value::Object(ok), json!({"n": "3", "b": "true", "s": "x", "f": "1.5"}));
        let e = prompt_strings(map(json!({"list": [1]}))).unwrap_err();
        assert!(e.0.contains("\"list\" is an array"), "{}", e.0);
    }
}
