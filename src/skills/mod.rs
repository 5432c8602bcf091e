//! Skills (SEP-2640, the extension `io.modelcontextprotocol/skills`): what
//! a server's `skills/list` says a skill is, and the checks a loaded
//! skill's files must pass. Listing and loading are the binding's
//! ([`Binding::list_skills_page`](crate::Binding::list_skills_page),
//! [`Binding::load_skill`](crate::Binding::load_skill)).
//!
//! A skill entry names its `SKILL.md` (`uri`), the frontmatter of that file
//! rendered as JSON (at least `name` and `description`), and either every
//! file of the skill (`resources`: URI, `sha256:` digest of the file's
//! bytes, size in bytes; `SKILL.md` among them) or `"dynamic"` (the files
//! are not known in advance, and nothing can be verified: such a skill is
//! listed, never loaded). Anything else in `resources` makes the entry
//! unusable, and it is dropped with a warning.
//!
//! The client's rules, each a bound or a check on what the server sent:
//!
//! - an entry is read within bounds: at most `Limits::max_skill_files`
//!   files (512, the SEP's bound, `SKILL.md` included), at most
//!   `Limits::max_skill_bytes` declared in all (16 MiB); every file under
//!   the same scheme and authority as its `SKILL.md` (a skill of this
//!   server never points at another's); digests of the form
//!   `sha256:<64 lowercase hex>`;
//! - nothing is fetched before the host loads the skill (not on connect,
//!   listing or approval);
//! - every file fetched is checked against its entry: the size first, then
//!   the digest over the bytes (a text's UTF-8, a blob's decoded bytes);
//! - `SKILL.md`'s frontmatter (YAML between `---` lines) must equal the
//!   listed frontmatter field by field;
//! - a file the entry does not list is never fetched.
//!
//! A failed check is a [`FailureClass::VerificationFailed`] error naming
//! the skill and the file, never the file's content.
//!
//! Two skills with one name (on one server) are both listed, in server
//! order, with a warning naming their URIs: neither is the "real" one, so
//! the client picks none. A lookup by name ([`skill_by_name`]) refuses the
//! name then (`invalid_arguments`, naming every URI), rather than taking
//! the first.

mod frontmatter;

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::Digest as _;

use crate::error::{normalize_message, Error, FailureClass};

pub(crate) use frontmatter::parse as parse_frontmatter;

/// The longest skill or file URI taken.
const MAX_URI_BYTES: usize = 8 << 10;
/// The longest listed frontmatter taken, as JSON.
const MAX_FRONTMATTER_BYTES: usize = 64 << 10;

/// A skill a server offers (one `skills/list` entry).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillInfo {
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// Its name (the frontmatter's `name`), bounded.
    pub name: String,
    /// What it is for (the frontmatter's `description`), bounded.
    pub description: String,
    /// The frontmatter of its `SKILL.md`, as listed: what a loaded
    /// `SKILL.md` must equal.
    pub frontmatter: Map<String, Value>,
    /// Its files, when listed; `None` for a `"dynamic"` skill, which
    /// cannot be verified and is never loaded.
    pub files: Option<Vec<SkillFile>>,
}

/// One file of a skill, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillFile {
    /// Where it is read (`resources/read`).
    pub uri: String,
    /// `sha256:` and the lowercase hex digest of its bytes.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A skill loaded and verified: its `SKILL.md` and every listed file, in
/// the listed order, each with its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSkill {
    /// The entry it was loaded from.
    pub skill: SkillInfo,
    /// Each file with its bytes, `SKILL.md` first.
    pub files: Vec<(SkillFile, Vec<u8>)>,
}

impl LoadedSkill {
    /// The text of `SKILL.md`.
    pub fn instructions(&self) -> &str {
        self.files.first().and_then(|(_, bytes)| std::str::from_utf8(bytes).ok()).unwrap_or_default()
    }
}

/// The most URIs one duplicate warning or lookup error names.
const MAX_NAMED_DUPLICATES: usize = 8;

/// The skill called `name` among `skills` (a listing's items): `not_found`
/// when there is none, `invalid_arguments` naming each one's URI when
/// several share the name (see the [module docs](self)).
pub fn skill_by_name<'a>(skills: &'a [SkillInfo], name: &str) -> Result<&'a SkillInfo, Error> {
    let mut found = skills.iter().filter(|s| s.name == name);
    let Some(first) = found.next() else {
        return Err(Error::new(
            FailureClass::NotFound,
            format!("no skill {:?}", normalize_message(name, 128)),
        ));
    };
    if found.next().is_none() {
        return Ok(first);
    }
    let same: Vec<&SkillInfo> = skills.iter().filter(|s| s.name == name).collect();
    Err(Error::new(
        FailureClass::InvalidArguments,
        format!(
            "{} skills are named {:?}, so the name does not say which: {}",
            same.len(),
            normalize_message(name, 128),
            uris(&same)
        ),
    ))
}

/// A warning for each name that several of `skills` share, naming their
/// URIs (each name once, in the order first listed).
pub(crate) fn duplicate_warnings(method: &str, skills: &[SkillInfo]) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<&SkillInfo>)> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for skill in skills {
        match at.get(skill.name.as_str()) {
            Some(&i) => groups[i].1.push(skill),
            None => {
                at.insert(&skill.name, groups.len());
                groups.push((&skill.name, vec![skill]));
            }
        }
    }
    groups
        .into_iter()
        .filter(|(_, same)| same.len() > 1)
        .map(|(name, same)| {
            format!(
                "{method}: {} skills are named {:?} ({}); all are listed, and the name alone does not pick one",
                same.len(),
                normalize_message(name, 128),
                uris(&same)
            )
        })
        .collect()
}

/// The URIs of `skills`, bounded.
fn uris(skills: &[&SkillInfo]) -> String {
    let mut named: Vec<String> =
        skills.iter().take(MAX_NAMED_DUPLICATES).map(|s| normalize_message(&s.uri, 256)).collect();
    if skills.len() > MAX_NAMED_DUPLICATES {
        named.push(format!("and {} more", skills.len() - MAX_NAMED_DUPLICATES));
    }
    named.join(", ")
}

/// The bounds an entry is read within.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SkillBounds {
    pub(crate) max_files: usize,
    pub(crate) max_bytes: u64,
}

impl SkillInfo {
    /// Reads one `skills/list` entry; `Err` says why it cannot be used (the
    /// caller drops it with that warning).
    pub(crate) fn from_wire(entry: &Value, bounds: SkillBounds) -> Result<SkillInfo, String> {
        let entry = entry.as_object().ok_or("not an object")?;
        let uri = entry.get("uri").and_then(Value::as_str).ok_or("no uri")?;
        if uri.is_empty() || uri.len() > MAX_URI_BYTES {
            return Err(format!("its uri is empty or over {MAX_URI_BYTES} bytes"));
        }
        let frontmatter =
            entry.get("frontmatter").and_then(Value::as_object).ok_or("no frontmatter object")?;
        if serde_json::to_vec(frontmatter).map_or(true, |f| f.len() > MAX_FRONTMATTER_BYTES) {
            return Err(format!("its frontmatter is over {MAX_FRONTMATTER_BYTES} bytes"));
        }
        let text = |key: &str| frontmatter.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
        let (Some(name), Some(description)) = (text("name"), text("description")) else {
            return Err("its frontmatter lacks a name or a description".into());
        };
        let files = match entry.get("resources") {
            Some(Value::String(s)) if s == "dynamic" => None,
            Some(Value::Array(files)) => Some(read_files(uri, files, bounds)?),
            _ => return Err("its resources are neither a list nor \"dynamic\"".into()),
        };
        Ok(SkillInfo {
            uri: uri.to_string(),
            name: normalize_message(name, 256),
            description: normalize_message(description, 2048),
            frontmatter: frontmatter.clone(),
            files,
        })
    }

    /// The listed file at `uri`, if the entry lists it.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.files.as_ref()?.iter().find(|f| f.uri == uri)
    }

    /// An error about this skill's file `uri`, of `class`.
    pub(crate) fn failure(&self, class: FailureClass, uri: &str, what: &str) -> Error {
        Error::new(
            class,
            format!(
                "skill {:?}, file {:?}: {what}",
                normalize_message(&self.name, 128),
                normalize_message(uri, 256)
            ),
        )
    }

    /// Checks `bytes`, fetched for `file`, against the listing: the size,
    /// then the digest.
    pub(crate) fn verify(&self, file: &SkillFile, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() as u64 != file.size {
            return Err(self.failure(
                FailureClass::VerificationFailed,
                &file.uri,
                &format!("{} bytes served, {} listed", bytes.len(), file.size),
            ));
        }
        let digest = format!("sha256:{}", crate::canonical::hex(&sha2::Sha256::digest(bytes)));
        if digest != file.digest {
            return Err(self.failure(
                FailureClass::VerificationFailed,
                &file.uri,
                "its sha256 digest differs from the listed one",
            ));
        }
        Ok(())
    }

    /// Checks a fetched `SKILL.md`'s frontmatter against the listed one,
    /// field by field.
    pub(crate) fn verify_frontmatter(&self, text: &str) -> Result<(), Error> {
        let fail = |what: String| self.failure(FailureClass::VerificationFailed, &self.uri, &what);
        let served = parse_frontmatter(text).map_err(|e| fail(format!("its frontmatter: {e}")))?;
        let mut keys: Vec<&String> = served.keys().chain(self.frontmatter.keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            if served.get(key) != self.frontmatter.get(key) {
                return Err(fail(format!(
                    "its frontmatter field {:?} differs from the listed one",
                    normalize_message(key, 64)
                )));
            }
        }
        Ok(())
    }
}

/// A listed `resources` array: bounded, each file well formed and under
/// the skill's own scheme and authority, `SKILL.md` among them.
fn read_files(skill_uri: &str, files: &[Value], bounds: SkillBounds) -> Result<Vec<SkillFile>, String> {
    if files.len() > bounds.max_files {
        return Err(format!("it lists more than {} files", bounds.max_files));
    }
    let origin = origin_of(skill_uri).ok_or("its uri has no scheme and authority")?;
    let mut read = Vec::with_capacity(files.len());
    let mut total = 0u64;
    for (i, file) in files.iter().enumerate() {
        let uri =
            file.get("uri").and_then(Value::as_str).filter(|u| !u.is_empty() && u.len() <= MAX_URI_BYTES);
        let digest = file.get("digest").and_then(Value::as_str).filter(|d| is_sha256(d));
        let size = file.get("size").and_then(Value::as_u64);
        let (Some(uri), Some(digest), Some(size)) = (uri, digest, size) else {
            return Err(format!("its file {i} lacks a uri, a sha256: digest or a size"));
        };
        if origin_of(uri) != Some(origin) {
            return Err(format!("its file {i} is not under the skill's own {origin}"));
        }
        total = total.saturating_add(size);
        if total > bounds.max_bytes {
            return Err(format!("its files declare more than {} bytes", bounds.max_bytes));
        }
        read.push(SkillFile { uri: uri.to_string(), digest: digest.to_string(), size });
    }
    // SKILL.md first: it is what a load reads before anything else.
    let Some(at) = read.iter().position(|f| f.uri == skill_uri) else {
        return Err("its files do not list its SKILL.md".into());
    };
    let skill_md = read.remove(at);
    read.insert(0, skill_md);
    Ok(read)
}

/// `scheme://authority` of a URI, or `None` without one.
fn origin_of(uri: &str) -> Option<&str> {
    let (scheme, rest) = uri.split_once("://")?;
    if scheme.is_empty() || !scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    Some(&uri[..scheme.len() + 3 + authority.len()])
}

fn is_sha256(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests;
