//! Skills (SEP-2640) through a binding: listed with `skills/list`, loaded
//! only when the host asks, every file fetched with `resources/read` and
//! verified against its listing (see [`crate::skills`]).
//!
//! Nothing is fetched on connect, on listing, or when a host shows or
//! approves a skill: [`Binding::load_skill`] is the one place that reads a
//! skill's files, and [`Binding::read_skill_file`] reads one listed file
//! when the host needs it. A file a listing does not name is never read.

use serde_json::Value;

use super::{Binding, Listing};
use crate::content::ResourceResult;
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::{methods, SKILLS_EXTENSION};
use crate::request::{push_warning, CallOpts};
use crate::skills::{duplicate_warnings, LoadedSkill, SkillBounds, SkillFile, SkillInfo};

impl Binding {
    /// One page of the server's skills (`skills/list`): the first when
    /// `cursor` is `None`, else the page at a previous page's
    /// `next_cursor`; at most `Limits::max_catalog_items` entries. An entry
    /// that cannot be used (malformed, over `Limits::max_skill_files` or
    /// `Limits::max_skill_bytes`, a file under another scheme or authority
    /// than its `SKILL.md`) is dropped with a warning, the others kept. Two
    /// skills of the page with one name are both kept, with a warning (see
    /// [`crate::skills`]). A server that does not declare the Skills
    /// extension is not asked (an empty listing, with a warning). Nothing
    /// of a skill is fetched.
    pub async fn list_skills_page(&self, cursor: Option<&str>) -> Result<Listing<SkillInfo>, Error> {
        let Some(convert) = self.skill_reader() else { return Ok(undeclared()) };
        let max = self.inner.limits.max_catalog_items;
        let mut page =
            self.list_page(methods::SKILLS_LIST, "skills", cursor, max, "list_skills", convert).await?;
        for warning in duplicate_warnings(methods::SKILLS_LIST, &page.items) {
            push_warning(&mut page.warnings, warning);
        }
        Ok(page)
    }

    /// Every skill the server lists, page after page, within the bounds
    /// of every list ([`Binding::list_tools`]'s: a repeated cursor ends it,
    /// at most `Limits::max_catalog_pages` pages and
    /// `Limits::max_catalog_items` skills in all, counted as each page is
    /// read; a warning says when the rest was not read). Entries are
    /// checked as [`Binding::list_skills_page`] checks them; skills sharing
    /// a name are all kept, with a warning naming their URIs.
    pub async fn list_skills(&self) -> Result<Listing<SkillInfo>, Error> {
        let Some(convert) = self.skill_reader() else { return Ok(undeclared()) };
        let max = self.inner.limits.max_catalog_items;
        let mut all = self.list_all(methods::SKILLS_LIST, "skills", max, "list_skills", convert).await?;
        for warning in duplicate_warnings(methods::SKILLS_LIST, &all.items) {
            push_warning(&mut all.warnings, warning);
        }
        Ok(all)
    }

    /// How a `skills/list` entry is read, if the server declares skills.
    fn skill_reader(&self) -> Option<impl FnMut(Value) -> Result<SkillInfo, String>> {
        if !self.current_session().capabilities.declares_extension(SKILLS_EXTENSION) {
            return None;
        }
        let limits = &self.inner.limits;
        let bounds =
            SkillBounds { max_files: limits.max_skill_files, max_bytes: limits.max_skill_bytes as u64 };
        Some(move |entry: Value| {
            SkillInfo::from_wire(&entry, bounds).map_err(|why| format!("{}{why}", entry_name(&entry)))
        })
    }

    /// Loads `skill`: reads its `SKILL.md`, checks it against the listing
    /// (size, digest, frontmatter field by field), then each other listed
    /// file in turn, each checked before the next is read. The first check
    /// that fails ends the load with `verification_failed`, naming the
    /// skill and the file, never the content; a `"dynamic"` skill (nothing
    /// to verify against) is refused with `invalid_arguments` before
    /// anything is read. Each read has the deadline of `opts`.
    pub async fn load_skill(&self, skill: &SkillInfo, opts: CallOpts) -> Result<LoadedSkill, Error> {
        let named = |e: Error| e.with_binding(&self.inner.name).with_op("load_skill");
        let Some(files) = &skill.files else {
            return Err(named(skill.failure(
                FailureClass::InvalidArguments,
                &skill.uri,
                "the skill's files are dynamic: nothing to verify them against, so it is not loaded",
            )));
        };
        let mut loaded = LoadedSkill { skill: skill.clone(), files: Vec::with_capacity(files.len()) };
        for file in files {
            let bytes = self.fetch_verified(skill, file, opts.clone()).await.map_err(named)?;
            loaded.files.push((file.clone(), bytes));
        }
        Ok(loaded)
    }

    /// Reads the file `uri` of `skill` when the host needs it, verified as
    /// [`Binding::load_skill`] verifies each file (its `SKILL.md` with its
    /// frontmatter). A file the listing does not name is refused with
    /// `verification_failed` and never read.
    pub async fn read_skill_file(
        &self,
        skill: &SkillInfo,
        uri: &str,
        opts: CallOpts,
    ) -> Result<Vec<u8>, Error> {
        let named = |e: Error| e.with_binding(&self.inner.name).with_op("read_skill_file");
        let Some(file) = skill.file(uri) else {
            return Err(named(skill.failure(
                FailureClass::VerificationFailed,
                uri,
                "the skill does not list it",
            )));
        };
        self.fetch_verified(skill, file, opts).await.map_err(named)
    }

    /// One listed file, read and checked.
    async fn fetch_verified(
        &self,
        skill: &SkillInfo,
        file: &SkillFile,
        opts: CallOpts,
    ) -> Result<Vec<u8>, Error> {
        let read = self.read_resource(&file.uri, opts).await?;
        let bytes = file_bytes(skill, file, read)?;
        skill.verify(file, &bytes)?;
        if file.uri == skill.uri {
            let text = std::str::from_utf8(&bytes).map_err(|_| {
                skill.failure(FailureClass::VerificationFailed, &file.uri, "its SKILL.md is not UTF-8")
            })?;
            skill.verify_frontmatter(text)?;
        }
        Ok(bytes)
    }
}

/// The listing of a server that does not declare skills: empty, said so.
fn undeclared() -> Listing<SkillInfo> {
    let mut listing = Listing { items: Vec::new(), warnings: Vec::new(), next_cursor: None };
    push_warning(&mut listing.warnings, format!("the server does not declare {SKILLS_EXTENSION}"));
    listing
}

/// The bytes of the one content item of `read` for `file` (see
/// `ResourceContent::whole_bytes`).
fn file_bytes(skill: &SkillInfo, file: &SkillFile, read: ResourceResult) -> Result<Vec<u8>, Error> {
    let item = read.only_item(&file.uri).ok_or_else(|| {
        skill.failure(
            FailureClass::VerificationFailed,
            &file.uri,
            "resources/read did not answer with exactly one item for it",
        )
    })?;
    item.whole_bytes().map_err(|(class, why)| skill.failure(class, &file.uri, why))
}

/// ` (name)` for a warning about an entry, when it has a usable name.
fn entry_name(entry: &Value) -> String {
    entry["frontmatter"]["name"]
        .as_str()
        .map(|n| format!("skill {:?}: ", normalize_message(n, 64)))
        .unwrap_or_default()
}
