//! What a child is started with: the command, its environment (the
//! allowlist, the proxy settings and their secrets, the definition's own
//! variables), its process group and pipes; and the splitting of a
//! shell-like command line.
//!
//! Apart from the factory because this is where a host's secrets could
//! leak to a server, and it reads best on its own.

use std::process::Stdio;
use tokio::process::Command;

use super::{StdioFactory, INHERITED_ENV, INHERITED_PROXY_ENV};
use crate::error::{Error, FailureClass};

impl StdioFactory {
    /// The command that starts one child, as the [module docs](super) say:
    /// an empty environment but for the allowlist, the proxy settings (their
    /// secrets registered for redaction) and the definition's variables; a
    /// process group of its own; piped stdin, stdout and stderr.
    pub(super) fn command(&self) -> Result<Command, Error> {
        if self.program.is_empty() {
            return Err(Error::new(FailureClass::InvalidConfig, "stdio program is empty"));
        }
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).env_clear();
        for key in INHERITED_ENV {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
        let mut secrets = Vec::new();
        for key in INHERITED_PROXY_ENV {
            if let Some(value) = std::env::var_os(key) {
                if !key.eq_ignore_ascii_case("NO_PROXY") {
                    secrets.extend(
                        proxy_secrets(&value.to_string_lossy()).iter().map(|s| crate::redact::register(s)),
                    );
                }
                cmd.env(key, value);
            }
        }
        *self.proxy_secrets.lock().unwrap_or_else(|e| e.into_inner()) = secrets;
        for (key, value) in &self.env {
            let bytes = key.as_encoded_bytes();
            if bytes.is_empty() || bytes.contains(&b'=') || bytes.contains(&0) {
                return Err(Error::new(
                    FailureClass::InvalidConfig,
                    format!("{}: invalid environment variable name {:?}", self.origin, key.to_string_lossy()),
                ));
            }
            cmd.env(key, value);
        }
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        Ok(cmd)
    }
}

/// What of a proxy setting is secret: the whole value, and the user
/// information and password of a URL that carries them.
fn proxy_secrets(value: &str) -> Vec<String> {
    let mut secrets = vec![value.to_string()];
    let rest = value.split_once("://").map_or(value, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if let Some((userinfo, _host)) = authority.rsplit_once('@') {
        secrets.push(userinfo.to_string());
        if let Some((_user, password)) = userinfo.split_once(':') {
            secrets.push(password.to_string());
        }
    }
    secrets
}

/// Splits a command line as a POSIX shell would, without expanding anything.
pub(super) fn split_command_line(line: &str) -> Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote"),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote"),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err("trailing backslash"),
            },
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<String> {
        split_command_line(line).unwrap()
    }

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(split("cmd arg1 'arg two'"), ["cmd", "arg1", "arg two"]);
        assert_eq!(split("  a\t b  "), ["a", "b"]);
        assert_eq!(split(r#"a "b \"c\" \$d \x" e\ f"#), ["a", r#"b "c" $d \x"#, "e f"]);
        assert_eq!(split("a '' \"\" b"), ["a", "", "", "b"]);
        assert_eq!(split("'it''s' x"), ["its", "x"]);
        assert_eq!(split("x'y'\"z\"w"), ["xyzw"]);
        assert_eq!(split("$HOME ~ *"), ["$HOME", "~", "*"]);
        assert!(split("").is_empty());
        assert!(split_command_line("a 'b").is_err());
        assert!(split_command_line("a \"b").is_err());
        assert!(split_command_line("a \\").is_err());
    }

    #[test]
    fn proxy_credentials_are_secrets() {
        assert_eq!(
            proxy_secrets("http://alice:s3cr3t-pw@proxy.corp:3128/"),
            ["http://alice:s3cr3t-pw@proxy.corp:3128/", "alice:s3cr3t-pw", "s3cr3t-pw"]
        );
        assert_eq!(proxy_secrets("proxy.corp:3128"), ["proxy.corp:3128"]);
        assert_eq!(proxy_secrets("http://tok@p:1"), ["http://tok@p:1", "tok"]);
    }

    #[test]
    fn invalid_variable_names_are_refused() {
        let err = StdioFactory::new("sh").env("A=B", "x").command().unwrap_err();
        assert_eq!(err.class(), FailureClass::InvalidConfig);
    }
}
