//! `WWW-Authenticate` parsing (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1).
//!
//! A 401 or 403 from an MCP server names, in a `Bearer` challenge, where its
//! Protected Resource Metadata lives (`resource_metadata`), the scopes the
//! request needs (`scope`) and why it failed (`error`). The header may hold
//! several challenges, separated by commas like their parameters; a new
//! challenge is told from a parameter by having no `=` after its first
//! token. Input is bounded ([`MAX_HEADER_BYTES`], [`MAX_CHALLENGES`],
//! [`MAX_PARAMS`]) and anything off the grammar is refused, never guessed.

use std::fmt;

/// The most bytes of `WWW-Authenticate` parsed, over all header values.
pub(crate) const MAX_HEADER_BYTES: usize = 8 * 1024;
/// The most challenges in one response.
pub(crate) const MAX_CHALLENGES: usize = 16;
/// The most parameters in one challenge.
pub(crate) const MAX_PARAMS: usize = 32;

/// One challenge: a scheme and its parameters (or a token68).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    scheme: String,
    token68: Option<String>,
    params: Vec<(String, String)>,
}

impl Challenge {
    #[cfg(feature = "fuzzing")]
    /// The scheme as sent (compare with [`Challenge::is_scheme`]).
    pub(crate) fn scheme(&self) -> &str {
        &self.scheme
    }

    /// Whether the scheme is `name`, case-insensitively (RFC 9110 §11.1).
    pub(crate) fn is_scheme(&self, name: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(name)
    }

    /// A parameter's value (unquoted, unescaped); names are case-insensitive.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    #[cfg(any(test, feature = "fuzzing"))]
    /// The parameters in order, names lowercased.
    pub(crate) fn params(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    #[cfg(any(test, feature = "fuzzing"))]
    /// The token68 form (`Basic abc==`), if the challenge used it.
    pub(crate) fn token68(&self) -> Option<&str> {
        self.token68.as_deref()
    }
}

/// The parameters of the first `Bearer` challenge that MCP acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BearerChallenge {
    /// RFC 9728 §5.1: the Protected Resource Metadata URL.
    pub resource_metadata: Option<String>,
    /// RFC 6750 §3: space-separated scopes the request needs.
    pub scope: Option<String>,
    /// RFC 6750 §3.1: `invalid_request`, `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
    /// A human-readable explanation from the server.
    pub error_description: Option<String>,
    /// The protection space.
    pub realm: Option<String>,
}

impl BearerChallenge {
    /// The first `Bearer` challenge among `challenges`, else the first
    /// `DPoP` one: a server that takes only DPoP-bound tokens challenges
    /// with `DPoP` (RFC 9449 §7.1) and the same parameters (RFC 9728 §5.1
    /// `resource_metadata`, RFC 6750 `scope` and `error`).
    pub(crate) fn find(challenges: &[Challenge]) -> Option<Self> {
        let c = challenges
            .iter()
            .find(|c| c.is_scheme("Bearer"))
            .or_else(|| challenges.iter().find(|c| c.is_scheme("DPoP")))?;
        let get = |n: &str| c.param(n).map(str::to_owned);
        Some(Self {
            resource_metadata: get("resource_metadata"),
            scope: get("scope"),
            error: get("error"),
            error_description: get("error_description"),
            realm: get("realm"),
        })
    }

    /// Parses header values and takes the first `Bearer` challenge.
    ///
    /// `Ok(None)` when the header parses but has no `Bearer` challenge.
    pub(crate) fn from_headers<'a>(
        values: impl IntoIterator<Item = &'a http::HeaderValue>,
    ) -> Result<Option<Self>, ChallengeError> {
        Ok(Self::find(&parse_headers(values)?))
    }

    /// The scopes of `scope`, split on spaces.
    pub(crate) fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scope.as_deref().unwrap_or("").split(' ').filter(|s| !s.is_empty())
    }
}

/// Why a `WWW-Authenticate` header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChallengeError {
    reason: &'static str,
    offset: usize,
}

impl ChallengeError {
    /// What is wrong.
    pub fn reason(&self) -> &'static str {
        self.reason
    }
}

impl fmt::Display for ChallengeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

impl std::error::Error for ChallengeError {}

/// Parses every value of the `WWW-Authenticate` header of one response.
pub(crate) fn parse_headers<'a>(
    values: impl IntoIterator<Item = &'a http::HeaderValue>,
) -> Result<Vec<Challenge>, ChallengeError> {
    let mut all = Vec::new();
    let mut total = 0usize;
    for value in values {
        total += value.len();
        if total > MAX_HEADER_BYTES {
            return Err(ChallengeError { reason: "header too long", offset: MAX_HEADER_BYTES });
        }
        let mut parsed = parse_bytes(value.as_bytes())?;
        if all.len() + parsed.len() > MAX_CHALLENGES {
            return Err(ChallengeError { reason: "too many challenges", offset: total });
        }
        all.append(&mut parsed);
    }
    Ok(all)
}

#[cfg(test)]
/// Parses one `WWW-Authenticate` value into its challenges.
pub(crate) fn parse(value: &str) -> Result<Vec<Challenge>, ChallengeError> {
    parse_bytes(value.as_bytes())
}

fn parse_bytes(input: &[u8]) -> Result<Vec<Challenge>, ChallengeError> {
    if input.len() > MAX_HEADER_BYTES {
        return Err(ChallengeError { reason: "header too long", offset: MAX_HEADER_BYTES });
    }
    let mut p = Parser { input, pos: 0 };
    let mut challenges = Vec::new();
    loop {
        p.skip_list_separators();
        if p.at_end() {
            break;
        }
        if challenges.len() == MAX_CHALLENGES {
            return Err(p.error("too many challenges"));
        }
        challenges.push(p.challenge()?);
    }
    if challenges.is_empty() {
        return Err(p.error("no challenge"));
    }
    Ok(challenges)
}

struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, reason: &'static str) -> ChallengeError {
        ChallengeError { reason, offset: self.pos }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.input.len()
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    fn skip_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn skip_list_separators(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.pos += 1;
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.pos;
        while self.peek().is_some_and(is_tchar) {
            self.pos += 1;
        }
        // tchars are ASCII, so the slice is UTF-8.
        (self.pos > start).then(|| String::from_utf8_lossy(&self.input[start..self.pos]).into_owned())
    }

    fn challenge(&mut self) -> Result<Challenge, ChallengeError> {
        let scheme = match self.token() {
            Some(scheme) => scheme,
            None => return Err(self.error("expected an auth scheme")),
        };
        let mut challenge = Challenge { scheme, token68: None, params: Vec::new() };
        match self.peek() {
            None | Some(b',') => return Ok(challenge),
            Some(b' ' | b'\t') => self.skip_ows(),
            Some(_) => return Err(self.error("expected a space after the scheme")),
        }
        let mut first = true;
        loop {
            self.skip_ows();
            match self.peek() {
                None => break,
                Some(b',') => {
                    self.skip_list_separators();
                    if self.at_end() {
                        break;
                    }
                }
                Some(_) if first => {}
                Some(_) => return Err(self.error("expected a comma")),
            }
            if first {
                if let Some(token68) = self.token68() {
                    challenge.token68 = Some(token68);
                    break;
                }
            }
            let start = self.pos;
            let Some(name) = self.token().map(|t| t.to_ascii_lowercase()) else {
                return Err(self.error("expected a parameter"));
            };
            self.skip_ows();
            if self.peek() != Some(b'=') {
                if first {
                    return Err(self.error("expected '='"));
                }
                // After a comma, a token with no `=` starts the next challenge.
                self.pos = start;
                break;
            }
            self.pos += 1;
            self.skip_ows();
            let value = match self.peek() {
                Some(b'"') => self.quoted_string()?,
                _ => match self.token() {
                    Some(value) => value,
                    None => return Err(self.error("expected a parameter value")),
                },
            };
            if challenge.params.iter().any(|(n, _)| *n == name) {
                return Err(self.error("duplicate parameter"));
            }
            if challenge.params.len() == MAX_PARAMS {
                return Err(self.error("too many parameters"));
            }
            challenge.params.push((name, value));
            first = false;
        }
        Ok(challenge)
    }

    /// A token68 (`abc+/==`) that makes up the whole challenge body, if
    /// there is one here; consumed only then.
    fn token68(&mut self) -> Option<String> {
        let start = self.pos;
        let mut end = start;
        while self.input.get(end).is_some_and(|&b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)) {
            end += 1;
        }
        if end == start {
            return None;
        }
        while self.input.get(end) == Some(&b'=') {
            end += 1;
        }
        let mut next = end;
        while matches!(self.input.get(next), Some(b' ' | b'\t')) {
            next += 1;
        }
        if !matches!(self.input.get(next), None | Some(b',')) {
            return None;
        }
        self.pos = next;
        // The bytes are ASCII.
        Some(String::from_utf8_lossy(&self.input[start..end]).into_owned())
    }

    fn quoted_string(&mut self) -> Result<String, ChallengeError> {
        self.pos += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated quoted string")),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b) if is_qpair(b) => out.push(b),
                        _ => return Err(self.error("invalid escape")),
                    }
                    self.pos += 1;
                }
                Some(b) if is_qdtext(b) => {
                    out.push(b);
                    self.pos += 1;
                }
                Some(_) => return Err(self.error("invalid character in quoted string")),
            }
        }
        String::from_utf8(out).map_err(|_| self.error("quoted string is not UTF-8"))
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_qdtext(b: u8) -> bool {
    b == b'\t'
        || b == b' '
        || b == 0x21
        || (0x23..=0x5B).contains(&b)
        || (0x5D..=0x7E).contains(&b)
        || b >= 0x80
}

fn is_qpair(b: u8) -> bool {
    b == b'\t' || b == b' ' || (0x21..=0x7E).contains(&b) || b >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bearer(value: &str) -> BearerChallenge {
        BearerChallenge::find(&parse(value).unwrap()).expect("a Bearer challenge")
    }

    #[test]
    fn a_dpop_challenge_counts_when_there_is_no_bearer_one() {
        let d = bearer(r#"DPoP algs="ES256", resource_metadata="https://mcp/prm", error="use_dpop_nonce""#);
        assert_eq!(d.resource_metadata.as_deref(), Some("https://mcp/prm"));
        assert_eq!(d.error.as_deref(), Some("use_dpop_nonce"));
        let both =
            bearer(r#"DPoP resource_metadata="https://d/prm", Bearer resource_metadata="https://b/prm""#);
        assert_eq!(both.resource_metadata.as_deref(), Some("https://b/prm"));
        assert!(BearerChallenge::find(&parse(r#"Basic realm="x""#).unwrap()).is_none());
    }

    #[test]
    fn the_spec_example_with_line_folding_whitespace() {
        let b = bearer(
            "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource\",\n                         scope=\"files:read\""
                .replace('\n', " ")
                .as_str(),
        );
        assert_eq!(
            b.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(b.scope.as_deref(), Some("files:read"));
        assert_eq!(b.error, None);
    }

    #[test]
    fn insufficient_scope_with_every_field() {
        let b = bearer(
            r#"Bearer error="insufficient_scope", scope="files:write files:read", resource_metadata="https://x/prm", error_description="File write \"permission\" required", realm=mcp"#,
        );
        assert_eq!(b.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(b.scopes().collect::<Vec<_>>(), ["files:write", "files:read"]);
        assert_eq!(b.error_description.as_deref(), Some("File write \"permission\" required"));
        assert_eq!(b.realm.as_deref(), Some("mcp"));
    }

    #[test]
    fn scheme_and_parameter_names_are_case_insensitive() {
        let b = bearer("bEaReR Resource_Metadata=\"u\", SCOPE=a");
        assert_eq!(b.resource_metadata.as_deref(), Some("u"));
        assert_eq!(b.scope.as_deref(), Some("a"));
    }

    #[test]
    fn several_challenges_in_one_value() {
        let all =
            parse(r#"Basic realm="x", Bearer scope="a b", error=invalid_token, DPoP algs="ES256""#).unwrap();
        assert_eq!(all.len(), 3);
        assert!(all[0].is_scheme("basic"));
        assert_eq!(all[0].param("realm"), Some("x"));
        assert_eq!(all[1].param("error"), Some("invalid_token"));
        assert_eq!(all[2].param("algs"), Some("ES256"));
        let b = BearerChallenge::find(&all).unwrap();
        assert_eq!(b.scope.as_deref(), Some("a b"));
    }

    #[test]
    fn token68_then_another_challenge() {
        let all = parse("Negotiate abc+/==, Bearer").unwrap();
        assert_eq!(all[0].token68(), Some("abc+/=="));
        assert!(all[1].is_scheme("bearer"));
        assert_eq!(BearerChallenge::find(&all), Some(BearerChallenge::default()));
    }

    #[test]
    fn bare_scheme_and_empty_list_elements() {
        let all = parse(" , Bearer ,, ").unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].params().count(), 0);
    }

    #[test]
    fn several_header_values() {
        let values = [
            http::HeaderValue::from_static("Basic realm=a"),
            http::HeaderValue::from_static("Bearer scope=s"),
        ];
        let b = BearerChallenge::from_headers(&values).unwrap().unwrap();
        assert_eq!(b.scope.as_deref(), Some("s"));
        let none = [http::HeaderValue::from_static("Basic realm=a")];
        assert_eq!(BearerChallenge::from_headers(&none).unwrap(), None);
    }

    #[test]
    fn hostile_inputs_are_refused() {
        for bad in [
            "",
            "   ",
            "Bearer scope=\"unterminated",
            "Bearer scope=\"bad\\\u{1}escape\"",
            "Bearer scope=\"ctl\u{7}\"",
            "Bearer scope=a, scope=b",
            "Bearer scope=a, error=",
            "Bearer =x",
            "Bearer foo bar",
            "Bearer scope=a b",
            "Bearer\"x\"",
            "Bearer scope=\"a\"x",
            "\"Bearer\"",
        ] {
            assert!(parse(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn sizes_are_bounded() {
        let long = format!("Bearer scope=\"{}\"", "a".repeat(MAX_HEADER_BYTES));
        assert_eq!(parse(&long).unwrap_err().reason(), "header too long");
        let many = vec!["Bearer"; MAX_CHALLENGES + 1].join(", ");
        assert_eq!(parse(&many).unwrap_err().reason(), "too many challenges");
        let params: Vec<String> = (0..=MAX_PARAMS).map(|i| format!("p{i}=v")).collect();
        let wide = format!("Bearer {}", params.join(", "));
        assert_eq!(parse(&wide).unwrap_err().reason(), "too many parameters");
        let value = http::HeaderValue::from_str(&"Bearer, ".repeat(MAX_HEADER_BYTES / 16)).unwrap();
        let values = vec![value; 3];
        assert!(parse_headers(&values).is_err());
    }

    #[test]
    fn escapes_keep_the_escaped_byte() {
        let all = parse(r#"Bearer error_description="a\\b\"c\d""#).unwrap();
        assert_eq!(all[0].param("error_description"), Some(r#"a\b"cd"#));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(input in ".{0,300}") {
            let _ = parse(&input);
        }

        #[test]
        fn quoted_values_round_trip(value in "[ -~]{0,64}") {
            let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
            let all = parse(&format!("Bearer scope=\"{escaped}\"")).unwrap();
            proptest::prop_assert_eq!(all[0].param("scope"), Some(value.as_str()));
        }
    }
}
