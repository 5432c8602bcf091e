//! Text handling shared by every ranker: bounding and cleaning untrusted
//! strings, splitting them into terms, stopwords and a small stemmer.
//!
//! Everything here works on already-bounded input: [`clean`] is always called
//! first with a byte cap, so the cost of the later passes is bounded by that
//! cap and never by the size of what a server sent.

/// Returns at most `max_bytes` of `input`, cut on a character boundary, with
/// terminal escape sequences removed and every other control or bidi/format
/// character turned into a space.
///
/// Only the first `max_bytes` bytes of `input` are ever looked at.
pub(crate) fn clean(input: &str, max_bytes: usize) -> String {
    let mut end = input.len().min(max_bytes);
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    let bounded = &input[..end];
    let mut out = String::with_capacity(bounded.len());
    let mut chars = bounded.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // Zero-width characters would otherwise glue or split words invisibly.
            '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' => {}
            c if c.is_control() || is_bidi_control(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Consumes the rest of an escape sequence whose ESC was just read: CSI
/// (`ESC [ ... final`), OSC/DCS-like strings (`ESC ] ... BEL` or `ESC \`), or a
/// single following character.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']' | 'P' | '_' | '^' | 'X') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Words that carry no meaning for finding a tool. Checked before stemming.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "am",
    "an",
    "and",
    "any",
    "anybody",
    "anyone",
    "anything",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "been",
    "but",
    "by",
    "can",
    "could",
    "couldn",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "don",
    "e",
    "eg",
    "etc",
    "everything",
    "for",
    "from",
    "had",
    "has",
    "hasn",
    "have",
    "haven",
    "he",
    "hello",
    "her",
    "hey",
    "hi",
    "his",
    "i",
    "ie",
    "if",
    "im",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "just",
    "let",
    "lets",
    "like",
    "ll",
    "maybe",
    "me",
    "might",
    "mine",
    "must",
    "my",
    "myself",
    "need",
    "no",
    "nor",
    "not",
    "of",
    "ok",
    "on",
    "one",
    "onto",
    "or",
    "our",
    "ours",
    "please",
    "pls",
    "re",
    "really",
    "she",
    "should",
    "shouldn",
    "so",
    "some",
    "somebody",
    "someone",
    "something",
    "stuff",
    "such",
    "than",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "to",
    "too",
    "us",
    "ve",
    "very",
    "via",
    "wanna",
    "want",
    "was",
    "wasn",
    "we",
    "were",
    "what",
    "whats",
    "which",
    "will",
    "with",
    "won",
    "would",
    "wouldn",
    "you",
    "your",
    "yours",
];

/// Whether `word` (lowercase) is a stopword.
pub(crate) fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Splits `text` into lowercase, stemmed terms, appending them to `out`.
///
/// Words are runs of alphanumeric characters, so `_ - . / space` and all
/// punctuation separate them; each word is further split at camelCase and
/// letter/digit boundaries (`getPullRequest` gives `get pull request`,
/// `HTTPServer` gives `http server`). Short words mixing letters and digits are
/// also kept whole (`s3`, `k8s`, `ec2`, `oauth2`). Single characters, pure
/// numbers and stopwords are dropped.
pub(crate) fn tokenize_into(text: &str, out: &mut Vec<String>) {
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let has_digit = word.chars().any(|c| c.is_ascii_digit());
        let has_alpha = word.chars().any(char::is_alphabetic);
        let parts = split_word(word);
        // Keep "s3", "k8s" and "GitHub", "CodeQL", "OAuth" whole as well, so
        // a query typing them as one word still matches.
        let mixed = has_digit && has_alpha && word.len() <= 8;
        let camel = !has_digit && parts.len() > 1 && word.len() <= 16;
        if (mixed || camel) && parts.len() <= 3 {
            push_term(&word.to_lowercase(), out);
        }
        for part in parts {
            push_term(&part.to_lowercase(), out);
        }
    }
}

/// Convenience wrapper around [`tokenize_into`].
pub(crate) fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokenize_into(text, &mut out);
    out
}

fn push_term(lower: &str, out: &mut Vec<String>) {
    if lower.chars().count() < 2 || lower.chars().all(|c| c.is_ascii_digit()) || is_stopword(lower) {
        return;
    }
    out.push(stem(lower));
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
}

fn class(c: char) -> Class {
    if c.is_ascii_digit() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else {
        Class::Lower
    }
}

/// Splits one alphanumeric word at camelCase and letter/digit boundaries.
fn split_word(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (pos, c) = chars[i];
        let prev = class(chars[i - 1].1);
        let cur = class(c);
        let boundary = match (prev, cur) {
            (Class::Lower, Class::Upper) => true,
            (Class::Digit, Class::Lower | Class::Upper) | (Class::Lower | Class::Upper, Class::Digit) => true,
            // "HTTPServer": split before the last capital of a run followed by lowercase.
            // A lone trailing "s" is a plural ("PRs", "URLs"), not a new word.
            (Class::Upper, Class::Upper) => match chars.get(i + 1) {
                Some(&(_, 's')) => i + 2 < chars.len(),
                Some(&(_, n)) => class(n) == Class::Lower,
                None => false,
            },
            _ => false,
        };
        if boundary {
            parts.push(&word[start..pos]);
            start = pos;
        }
    }
    parts.push(&word[start..]);
    parts
}

/// Words the suffix rules would damage.
const STEM_KEEP: &[&str] = &[
    "alias",
    "always",
    "analysis",
    "atlas",
    "aws",
    "axis",
    "bring",
    "bus",
    "canvas",
    "cms",
    "cors",
    "css",
    "dns",
    "during",
    "finding",
    "gas",
    "gps",
    "has",
    "his",
    "https",
    "ios",
    "its",
    "kms",
    "lens",
    "macos",
    "news",
    "nothing",
    "ops",
    "postgres",
    "redis",
    "ring",
    "series",
    "setting",
    "sing",
    "sms",
    "something",
    "species",
    "spring",
    "state",
    "status",
    "string",
    "thing",
    "this",
    "was",
    "yes",
];

const ED_KEEP: &[&str] =
    &["bed", "bred", "embed", "feed", "fed", "led", "need", "red", "seed", "shed", "speed"];

/// A small, conservative suffix stripper (plurals, `-ing`, `-ed`, final `e`).
///
/// It only has to map inflections of one word onto the same key, not produce
/// real words: `create`, `creates`, `created` and `creating` all become
/// `creat`. Non-ASCII words and words of three letters or fewer are kept.
pub(crate) fn stem(word: &str) -> String {
    // Plural abbreviations: "prs", "ids", "vms", "dbs".
    if word.len() == 3
        && word.ends_with('s')
        && word.bytes().all(|b| b.is_ascii_alphabetic())
        && !STEM_KEEP.contains(&word)
    {
        return word[..2].to_string();
    }
    if word.len() <= 3 || !word.is_ascii() || STEM_KEEP.contains(&word) {
        return word.to_string();
    }
    let mut w = word.to_string();
    // Plurals and third person.
    if w.ends_with("ies") && w.len() > 4 {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.ends_with("sses") || ["ches", "shes", "xes", "zes"].iter().any(|s| w.ends_with(s)) {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
        w.pop();
    }
    if STEM_KEEP.contains(&w.as_str()) {
        return w;
    }
    // Past tense and progressive.
    if w.ends_with("ied") && w.len() > 4 {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.ends_with("ing") && w.len() >= 6 && has_vowel(&w[..w.len() - 3]) {
        w.truncate(w.len() - 3);
        undouble(&mut w);
    } else if w.ends_with("ed")
        && !w.ends_with("eed")
        && w.len() >= 5
        && has_vowel(&w[..w.len() - 2])
        && !ED_KEEP.contains(&w.as_str())
    {
        w.truncate(w.len() - 2);
        undouble(&mut w);
    }
    if w.len() > 3 && w.ends_with('e') && !w.ends_with("ee") {
        w.pop();
    } else if w.len() >= 6 && w.ends_with('y') && !has_vowel(&w[w.len() - 2..w.len() - 1]) {
        // "healthy" and "health", "policy" and "policies": drop a final
        // consonant-y on longer words only ("ready" must not become "read").
        w.pop();
    }
    w
}

fn has_vowel(s: &str) -> bool {
    s.bytes().any(|b| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y'))
}

fn undouble(w: &mut String) {
    let b = w.as_bytes();
    let n = b.len();
    if n >= 4
        && b[n - 1] == b[n - 2]
        && !matches!(b[n - 1], b'l' | b's' | b'z' | b'a' | b'e' | b'i' | b'o' | b'u')
    {
        w.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn splits_separators_camel_case_and_digits() {
        assert_eq!(
            tokenize("get_pull-request.v2/list items"),
            ["get", "pull", "request", "v2", "list", "item"]
        );
        assert_eq!(tokenize("getPullRequest"), ["getpullrequest", "get", "pull", "request"]);
        assert_eq!(tokenize("GitHub CodeQL"), ["github", "git", "hub", "codeql", "cod", "ql"]);
        assert_eq!(tokenize("HTTPServer"), ["httpserver", "http", "server"]);
        assert_eq!(tokenize("open PRs, URLs and IDs"), ["open", "pr", "url", "id"]);
        assert_eq!(stem("healthy"), stem("health"));
        assert_eq!(stem("policies"), stem("policy"));
        assert_eq!(stem("ready"), "ready");
        assert_eq!(tokenize("listS3Buckets"), ["list", "bucket"]);
        assert_eq!(tokenize("get_pull-request"), ["get", "pull", "request"]);
        assert_eq!(tokenize("s3 k8s ec2"), ["s3", "k8s", "ec2", "ec"]);
        assert_eq!(tokenize("oauth2"), ["oauth2", "oauth"]);
    }

    #[test]
    fn drops_stopwords_numbers_and_single_letters() {
        assert_eq!(tokenize("Please close the issue 42 for me, a b c"), ["clos", "issu"]);
        assert!(tokenize("").is_empty());
        assert!(tokenize("  ,,, __ -- ").is_empty());
    }

    #[test]
    fn stems_inflections_onto_one_key() {
        for group in [
            &["create", "creates", "created", "creating"][..],
            &["repository", "repositories"],
            &["star", "stars", "starred", "starring"],
            &["branch", "branches"],
            &["message", "messages", "messaging"],
            &["query", "queries"],
            &["list", "lists", "listing", "listed"],
            &["copy", "copied", "copies"],
            &["pin", "pinned", "pinning"],
        ] {
            let first = stem(group[0]);
            for w in group {
                assert_eq!(stem(w), first, "{w}");
            }
        }
        for keep in ["status", "news", "redis", "add", "string", "settings", "embedding", "class", "analysis"]
        {
            assert!(stem(keep).len() >= 3, "{keep}");
        }
        assert_eq!(stem("settings"), "setting");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("prs"), "pr");
        assert_eq!(stem("dns"), "dns");
        assert_eq!(stem("news"), "news");
        assert_eq!(stem("embedding"), stem("embed"));
        assert_eq!(stem("adding"), stem("add"));
    }

    #[test]
    fn non_ascii_words_survive() {
        assert_eq!(tokenize("Überprüfung café"), ["überprüfung", "café"]);
    }

    #[test]
    fn clean_bounds_and_strips_controls() {
        let big = "é".repeat(10_000);
        let c = clean(&big, 1025);
        assert!(c.len() <= 1025);
        assert!(c.chars().all(|ch| ch == 'é'));
        assert_eq!(clean("a\u{1b}[31mred\u{1b}[0m b", 100), "ared b");
        assert_eq!(clean("x\u{1b}]0;title\u{7}y", 100), "xy");
        assert_eq!(clean("x\u{1b}]8;;http://e\u{1b}\\y", 100), "xy");
        assert_eq!(clean("a\nb\tc\u{0}d\u{202e}e\u{200b}f", 100), "a b c d ef");
    }
}
