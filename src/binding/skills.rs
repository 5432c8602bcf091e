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
use crate::skills::{LoadedSkill, SkillBounds, SkillFile, SkillInfo};

impl Binding {
    /// One page of the server's skills (`skills/list`): the first when
    /// `cursor` is `None`, else the page at a previous page's
    /// `next_cursor`; at most `Limits::max_catalog_items` entries. An entry
    /// that cannot be used (malformed, over `Limits::max_skill_files` or
    /// `Limits::max_skill_bytes`, a file under another scheme or authority
    /// than its `SKILL.md`) is dropped with a warning, the others kept. A
    /// server that does not declare the Skills extension is not asked (an
    /// empty listing, with a warning). Nothing of a skill is fetched.
    pub async fn list_skills_page(&self, cursor: Option<&str>) -> Result<Listing<SkillInfo>, Error> {
        if !self.current_session().capabilities.declares_extension(SKILLS_EXTENSION) {
            let mut listing = Listing { items: Vec::new(), warnings: Vec::new(), next_cursor: None };
            push_warning(&mut listing.warnings, format!("the server does not declare {SKILLS_EXTENSION}"));
            return Ok(listing);
        }
        let limits = &self.inner.limits;
        let bounds =
            SkillBounds { max_files: limits.max_skill_files, max_bytes: limits.max_skill_bytes as u64 };
        let convert = |entry: Value| {
            SkillInfo::from_wire(&entry, bounds).map_err(|why| format!("{}{why}", entry_name(&entry)))
        };
        let max = limits.max_catalog_items;
        self.list_page(methods::SKILLS_LIST, "skills", cursor, max, "list_skills", convert).await
    }

    /// Every skill the server lists, page after page: at most
    /// `Limits::max_catalog_pages` pages and `Limits::max_catalog_items`
    /// skills in all (a warning says when the rest was not read).
    pub async fn list_skills(&self) -> Result<Listing<SkillInfo>, Error> {
        let limits = self.inner.limits;
        let mut all = self.list_skills_page(None).await?;
        let mut pages = 1;
        while let Some(cursor) = all.next_cursor.take() {
            if pages >= limits.max_catalog_pages || all.items.len() >= limits.max_catalog_items {
                push_warning(
                    &mut all.warnings,
                    format!("skills/list: stopped after {pages} pages and {} skills", all.items.len()),
                );
                break;
            }
            let page = self.list_skills_page(Some(&cursor)).await?;
            all.items.extend(page.items);
            if all.items.len() > limits.max_catalog_items {
                push_warning(
                    &mut all.warnings,
                    format!(
                        "skills/list: kept the first {} skills, dropped {} (max_catalog_items)",
                        limits.max_catalog_items,
                        all.items.len() - limits.max_catalog_items
                    ),
                );
                all.items.truncate(limits.max_catalog_items);
            }
            all.warnings.extend(page.warnings);
            all.next_cursor = page.next_cursor;
            pages += 1;
        }
        Ok(all)
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
