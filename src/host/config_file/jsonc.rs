//! JSON with comments, as VS Code and Cursor write their files: `//` and
//! `/* */` comments and trailing commas are removed before serde reads the
//! text. Comments become spaces (newlines are kept), so serde's line and
//! column numbers still point into the original file.

/// `text` with its comments blanked out and its trailing commas removed.
/// Text inside strings is left alone.
pub(super) fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(escaped) = chars.next() {
                        out.push(escaped);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    out.push(if c == '\n' { '\n' } else { ' ' });
                    last = c;
                }
            }
            ('}' | ']', _) => {
                drop_trailing_comma(&mut out);
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

fn drop_trailing_comma(out: &mut String) {
    let trimmed = out.trim_end_matches(char::is_whitespace);
    if trimmed.ends_with(',') {
        let at = trimmed.len() - 1;
        out.replace_range(at..at + 1, " ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_go_strings_stay() {
        let text = "{\n // a comment\n \"a\": \"x // not a comment\", /* block\n */ \"b\": [1, 2,],\n}";
        let v: serde_json::Value = serde_json::from_str(&strip(text)).unwrap();
        assert_eq!(v, serde_json::json!({"a": "x // not a comment", "b": [1, 2]}));
        assert_eq!(strip(text).lines().count(), text.lines().count());
        let escaped = r#"{"a": "quote \" // still a string"}"#;
        assert_eq!(strip(escaped), escaped);
    }
}
