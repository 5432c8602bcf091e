//! A `SKILL.md`'s frontmatter: the YAML between a first `---` line and the
//! next `---` (or `...`) line, read into JSON to compare with what
//! `skills/list` says of it.
//!
//! The YAML is a server's, so it is read within bounds, from the parser's
//! events rather than its document loader: at most 64 KiB of frontmatter,
//! 10,000 nodes and 32 levels, and no aliases (a loader copies an alias's
//! anchor each time it is named, which lets a few hundred bytes expand to
//! gigabytes). Plain scalars resolve as YAML's core schema does (null,
//! booleans, integers, floats, else strings); quoted ones are strings;
//! mapping keys are taken as their text.

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, EventReceiver, Parser};
use yaml_rust2::scanner::TScalarStyle;
use yaml_rust2::Yaml;

const MAX_FRONTMATTER_BYTES: usize = 64 << 10;
const MAX_NODES: usize = 10_000;
const MAX_DEPTH: usize = 32;

/// The frontmatter of `text` (a `SKILL.md`), as a JSON object; `Err` says
/// why there is none that can be read.
pub(crate) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let yaml = block(text).ok_or("it has no frontmatter between --- lines")?;
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(format!("it is over {MAX_FRONTMATTER_BYTES} bytes"));
    }
    let mut builder = Builder::default();
    Parser::new_from_str(yaml).load(&mut builder, false).map_err(|e| format!("not YAML ({e})"))?;
    if let Some(error) = builder.error {
        return Err(error);
    }
    match builder.done {
        Some(Value::Object(map)) => Ok(map),
        None => Ok(Map::new()),
        Some(_) => Err("it is not a mapping".into()),
    }
}

/// The YAML between the opening and the closing delimiter lines.
fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let start = first.len();
    let mut at = start;
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            return Some(&text[start..at]);
        }
        at += line.len();
    }
    None
}

enum Frame {
    Sequence(Vec<Value>),
    Mapping(Map<String, Value>, Option<String>),
}

/// Builds one document's JSON from the parser's events, within bounds.
#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    done: Option<Value>,
    nodes: usize,
    error: Option<String>,
}

impl Builder {
    fn fail(&mut self, error: impl Into<String>) {
        self.error.get_or_insert_with(|| error.into());
    }

    fn count(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            self.fail(format!("it has more than {MAX_NODES} nodes"));
        }
        self.error.is_none()
    }

    /// Places a finished node in its parent (or as the document); `key` is
    /// its text when it may be a mapping key.
    fn place(&mut self, value: Value, key: Option<String>) {
        match self.stack.last_mut() {
            None => {
                if self.done.is_some() {
                    self.fail("it holds more than one document");
                }
                self.done = Some(value);
            }
            Some(Frame::Sequence(items)) => items.push(value),
            Some(Frame::Mapping(map, pending)) => match pending.take() {
                Some(k) => {
                    map.insert(k, value);
                }
                None => match key {
                    Some(k) => *pending = Some(k),
                    None => self.fail("a mapping key is not a scalar"),
                },
            },
        }
    }
}

impl EventReceiver for Builder {
    fn on_event(&mut self, event: Event) {
        if self.error.is_some() {
            return;
        }
        let node = matches!(event, Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..));
        if node && !self.count() {
            return;
        }
        match event {
            Event::Alias(..) => self.fail("it uses an alias"),
            Event::Scalar(text, style, ..) => {
                let value = scalar(&text, style);
                self.place(value, Some(text));
            }
            Event::SequenceStart(..) | Event::MappingStart(..) if self.stack.len() >= MAX_DEPTH => {
                self.fail(format!("it nests deeper than {MAX_DEPTH} levels"));
            }
            Event::SequenceStart(..) => self.stack.push(Frame::Sequence(Vec::new())),
            Event::MappingStart(..) => self.stack.push(Frame::Mapping(Map::new(), None)),
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Sequence(items)) => self.place(Value::Array(items), None),
                Some(Frame::Mapping(map, _)) => self.place(Value::Object(map), None),
                None => self.fail("unbalanced"),
            },
            _ => {}
        }
    }
}

/// A scalar's JSON: a quoted or block one is a string; a plain one
/// resolves as YAML's core schema does.
fn scalar(text: &str, style: TScalarStyle) -> Value {
    if style != TScalarStyle::Plain {
        return Value::String(text.to_string());
    }
    match Yaml::from_str(text) {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::Number(i.into()),
        Yaml::Real(r) => r
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map_or_else(|| Value::String(text.to_string()), Value::Number),
        _ => Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_frontmatter_reads_as_json() {
        let text = "---\nname: pdf-processing\ndescription: \"Fill forms: PDFs\"\nversion: 2\nbeta: true\ntags: [a, b]\nmeta:\n  owner: x\n---\n# Body\n";
        let parsed = parse(text).unwrap();
        assert_eq!(
            Value::Object(parsed),
            json!({ "name": "pdf-processing", "description": "Fill forms: PDFs", "version": 2, "beta": true,
                    "tags": ["a", "b"], "meta": { "owner": "x" } })
        );
        assert_eq!(parse("---\r\nname: x\r\n---\r\nbody").unwrap()["name"], "x");
    }

    #[test]
    fn what_cannot_be_read_says_why() {
        assert!(parse("# no frontmatter").unwrap_err().contains("no frontmatter"));
        assert!(parse("---\nname: x\n").unwrap_err().contains("no frontmatter"), "unclosed");
        assert!(parse("---\n- a\n- b\n---\n").unwrap_err().contains("not a mapping"));
        let bomb = "---\na: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n---\n";
        assert!(parse(bomb).unwrap_err().contains("alias"));
        let deep = format!("---\nk: {}{}\n---\n", "[".repeat(40), "]".repeat(40));
        assert!(parse(&deep).unwrap_err().contains("deeper"));
        let wide = format!("---\nk: [{}]\n---\n", vec!["1"; 10_001].join(","));
        assert!(parse(&wide).unwrap_err().contains("nodes"));
        assert!(parse("---\n{[a]: 1}\n---\n").is_err(), "a key that is not a scalar");
    }
}
