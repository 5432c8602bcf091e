//! What reaches the terminal: server text made visible, and output that
//! ends quietly when the reader goes away.
//!
//! Everything a server sends is untrusted. Printed raw, an escape sequence
//! (ESC, CSI, OSC…) can recolour, move the cursor, retitle the window or
//! write a hyperlink; a C1 control can do the same on terminals that honour
//! 8-bit controls; a bidirectional override or isolate can make text read
//! differently from what it is (a file name ending in `exe.txt`). So the
//! CLI prints such characters as visible escapes (`\u{1b}`, `\u{202e}`),
//! in every place it prints server text. `--json` output is serde's, exact.

use std::io::Write;

/// Whether `c` must not reach a terminal raw: C0 controls (but tab and line
/// feed), DEL, C1 controls, and the bidirectional formatting characters
/// (embeddings, overrides, isolates and marks).
pub(crate) fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// Server text for a terminal: every unsafe character as a visible escape
/// `\u{…}`; line breaks and tabs kept.
pub(crate) fn clean(text: &str) -> String {
    escape(text, false)
}

/// As [`clean`], for text that must stay on one line (a name in a table, a
/// description's first line): line breaks and tabs are escaped too.
pub(crate) fn clean_line(text: &str) -> String {
    escape(text, true)
}

fn escape(text: &str, one_line: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_unsafe(c) || (one_line && (c == '\n' || c == '\t')) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Stdout went away (a closed pipe: `mcp tools | head -1`). The command
/// stops writing and ends with the exit code it would have had.
#[derive(Debug)]
pub(crate) struct Closed;

/// Writes `text` and a line break to stdout. A closed pipe is [`Closed`],
/// never a panic (`println!` panics on it).
pub(crate) fn out_line(text: &str) -> Result<(), Closed> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}").and_then(|()| stdout.flush()).map_err(|_| Closed)
}

/// Writes a line to stderr, ignoring a closed stderr (nothing else could
/// be told).
pub(crate) fn err_line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_c1_controls_are_made_visible() {
        assert_eq!(clean("\u{1b}[31mred\u{1b}[0m"), "\\u{1b}[31mred\\u{1b}[0m");
        assert_eq!(clean("a\u{9b}2Jb"), "a\\u{9b}2Jb");
        assert_eq!(clean("bell\u{7}del\u{7f}cr\r"), "bell\\u{7}del\\u{7f}cr\\u{d}");
        assert_eq!(clean("\u{1b}]8;;http://x\u{7}link"), "\\u{1b}]8;;http://x\\u{7}link");
    }

    #[test]
    fn bidi_overrides_isolates_and_marks_are_made_visible() {
        for c in
            ['\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}']
                .into_iter()
                .chain(['\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}'])
        {
            let shown = clean(&format!("x{c}y"));
            assert_eq!(shown, format!("x\\u{{{:x}}}y", c as u32));
            assert!(!shown.contains(c));
        }
    }

    #[test]
    fn ordinary_text_is_untouched() {
        let text = "héllo, 世界 — ok\n\tnext line (שלום)";
        assert_eq!(clean(text), text);
    }

    #[test]
    fn one_line_text_escapes_line_breaks_too() {
        assert_eq!(clean_line("a\nb\tc"), "a\\u{a}b\\u{9}c");
        assert_eq!(clean("a\nb\tc"), "a\nb\tc");
    }
}
