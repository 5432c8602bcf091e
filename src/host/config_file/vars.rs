//! `${…}` substitution in the string values of a config file.
//!
//! The rules are in the [parent module's docs](super#variables). Values
//! taken from the environment are inserted as they are and never scanned
//! again, so a variable's value cannot name another variable.

use super::MAX_VALUE_BYTES;

/// Variables the editors define for themselves. They are not environment
/// variables, and this crate cannot know their values.
const EDITOR_VARIABLES: &[&str] = &[
    "workspaceFolder",
    "workspaceFolderBasename",
    "workspaceRoot",
    "userHome",
    "cwd",
    "file",
    "fileDirname",
    "fileBasename",
    "pathSeparator",
    "execPath",
];

/// The longest variable reference read, in bytes, between `${` and `}`.
const MAX_REFERENCE_BYTES: usize = 256;

/// Looks up one environment variable.
pub(super) type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Replaces every `${env:NAME}`, `${NAME}`, `${env:NAME:-default}` and
/// `${NAME:-default}` in `input`. The error is a sentence without the value.
pub(super) fn substitute(input: &str, env: Lookup<'_>) -> Result<String, String> {
    if !input.contains("${") {
        return bounded(input.to_string());
    }
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .filter(|&end| end <= MAX_REFERENCE_BYTES)
            .ok_or_else(|| "has a \"${\" without its closing \"}\"".to_string())?;
        out.push_str(&resolve(&after[..end], env)?);
        if out.len() > MAX_VALUE_BYTES {
            return Err(format!("is over {MAX_VALUE_BYTES} bytes once its variables are substituted"));
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    bounded(out)
}

fn bounded(value: String) -> Result<String, String> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(format!("is over {MAX_VALUE_BYTES} bytes"));
    }
    Ok(value)
}

fn resolve(reference: &str, env: Lookup<'_>) -> Result<String, String> {
    let (body, default) = match reference.split_once(":-") {
        Some((body, default)) => (body, Some(default)),
        None => (reference, None),
    };
    let name = match body.split_once(':') {
        Some(("env", name)) => name,
        Some(("input", _)) => {
            return Err(format!(
                "uses the input variable ${{{}}}: VS Code inputs are not supported",
                quote(reference)
            ))
        }
        Some(_) => return Err(format!("uses the unsupported variable ${{{}}}", quote(reference))),
        None if EDITOR_VARIABLES.contains(&body) => {
            return Err(format!("uses the editor variable ${{{body}}}, which only an editor can fill in"))
        }
        None => body,
    };
    if !is_variable_name(name) {
        return Err(format!("uses ${{{}}}, which does not name an environment variable", quote(reference)));
    }
    match (env(name), default) {
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.to_string()),
        (None, None) => Err(format!("uses the environment variable {name}, which is not set")),
    }
}

fn is_variable_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn quote(text: &str) -> String {
    crate::error::normalize_message(text, 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "LOOP" => Some("${TOKEN}".into()),
            _ => None,
        }
    }

    #[test]
    fn both_forms_and_defaults_are_substituted() {
        assert_eq!(substitute("Bearer ${env:TOKEN}", &env).unwrap(), "Bearer s3cret");
        assert_eq!(substitute("${TOKEN}-${TOKEN}", &env).unwrap(), "s3cret-s3cret");
        assert_eq!(substitute("${env:MISSING:-x}${MISSING:-}", &env).unwrap(), "x");
        assert_eq!(substitute("$HOME and $ alone", &env).unwrap(), "$HOME and $ alone");
    }

    #[test]
    fn values_are_not_scanned_again() {
        assert_eq!(substitute("${LOOP}", &env).unwrap(), "${TOKEN}");
    }

    #[test]
    fn what_cannot_be_filled_in_is_an_error_without_the_value() {
        let e = substitute("${env:MISSING}", &env).unwrap_err();
        assert!(e.contains("MISSING") && e.contains("not set"), "{e}");
        assert!(substitute("${input:token}", &env).unwrap_err().contains("input"));
        assert!(substitute("${workspaceFolder}/x", &env).unwrap_err().contains("editor variable"));
        assert!(substitute("${env:TOKEN", &env).unwrap_err().contains("closing"));
        assert!(substitute("${1abc}", &env).is_err());
        assert!(substitute("${command:x}", &env).unwrap_err().contains("unsupported"));
    }
}
