//! Generations: the adopted catalog, the candidate, and the refresh task
//! that turns change notifications into candidates.
//!
//! Two pieces, so that nothing forms a cycle that would keep a forgotten
//! binding's connection open:
//!
//! - [`ChangeFeed`] is what the connection's inbound handler holds. It only
//!   records which families are stale (a counter and a flag per family) and
//!   wakes the refresh task, which it starts at the first change; it never
//!   blocks and never queues, so a burst of notifications costs a few
//!   increments.
//! - [`CatalogCell`] is what the binding holds: the generations, the service
//!   refreshes are sent through, and the refresh task's abort handle. The
//!   task holds only a weak reference to it, and dropping the cell ends the
//!   task.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;
use tokio::sync::Notify;
use tokio::time::Instant;

use jsonschema::Validator;

use super::discovery::{build, BadPage, BuildContext, KeptOffering, Offering};
use super::schema;
use super::{Catalog, Family, REFRESH_DEBOUNCE};
use crate::compat::Tolerance;
use crate::config::RetryPolicy;
use crate::content::ResultMarks;
use crate::error::{Error, FailureClass};
use crate::events::{Event, EventBus, Failure};
use crate::request::McpResponse;
use crate::session::SessionInfo;

/// The most compiled output schemas cached per binding.
const MAX_CACHED_VALIDATORS: usize = 4096;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    seq: [u64; 3],
    stale: [bool; 3],
}

impl Marks {
    fn stale_families(&self) -> Vec<Family> {
        Family::ALL.into_iter().filter(|f| self.stale[f.index()]).collect()
    }
}

/// What starts the refresh task, once ([`ChangeFeed::on_first_change`]).
type Starter = Box<dyn FnOnce() + Send>;

/// Where `list_changed` notifications land. See the module docs.
pub(crate) struct ChangeFeed {
    binding: String,
    events: EventBus,
    marks: Mutex<Marks>,
    wake: Notify,
    starter: Mutex<Option<Starter>>,
}

impl std::fmt::Debug for ChangeFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeFeed").field("binding", &self.binding).finish_non_exhaustive()
    }
}

impl ChangeFeed {
    pub(crate) fn new(binding: String, events: EventBus) -> Arc<Self> {
        Arc::new(ChangeFeed {
            binding,
            events,
            marks: Mutex::default(),
            wake: Notify::new(),
            starter: Mutex::new(None),
        })
    }

    /// Runs `start` at the first change announced from now on, or at once
    /// when a change announced earlier is still to be read (one that came
    /// while the catalog was being read). Whichever comes first runs it;
    /// it never runs twice.
    ///
    /// The refresh task is started so, not at connect: most servers never
    /// announce a change, and spawning a task cost a connect about 12 µs
    /// on one CPU (`bench/vs-rmcp`, `connect`), and an idle binding the
    /// task's memory.
    fn on_first_change(&self, start: Starter) {
        *self.starter.lock().expect("starter lock") = Some(start);
        if !self.stale().is_empty() {
            self.start();
        }
    }

    fn start(&self) {
        let start = self.starter.lock().expect("starter lock").take();
        if let Some(start) = start {
            start();
        }
    }

    /// Records that the server announced a change to `family`. Never blocks.
    pub(crate) fn list_changed(&self, family: Family) {
        let became_stale = {
            let mut m = self.marks.lock().expect("marks lock");
            let i = family.index();
            m.seq[i] = m.seq[i].wrapping_add(1);
            !std::mem::replace(&mut m.stale[i], true)
        };
        if became_stale {
            self.events.emit(Event::CatalogStale {
                binding: self.binding.clone(),
                family,
                at: SystemTime::now(),
            });
        }
        self.wake.notify_one();
        self.start();
    }

    fn snapshot(&self) -> Marks {
        *self.marks.lock().expect("marks lock")
    }

    /// Marks `families` fresh, unless a notification arrived for one of them
    /// since `snapshot` was taken (then it needs another refetch).
    fn settle(&self, families: &[Family], snapshot: &Marks) {
        let mut m = self.marks.lock().expect("marks lock");
        for f in families {
            let i = f.index();
            if m.seq[i] == snapshot.seq[i] {
                m.stale[i] = false;
            }
        }
    }

    pub(crate) fn stale(&self) -> Vec<Family> {
        self.snapshot().stale_families()
    }
}

/// What a refresh did.
#[derive(Debug, Clone, PartialEq)]
pub enum RefreshOutcome {
    /// The server's offering is the adopted one.
    Unchanged,
    /// The server's offering differs from the adopted one; this is the
    /// candidate that describes it (new, or the one already waiting).
    Candidate(Arc<Catalog>),
}

struct Generations {
    adopted: Arc<Catalog>,
    candidate: Option<Arc<Catalog>>,
    /// The newest offering fetched, family by family: a refetch of one
    /// family is combined with the others from here. Kept only when the
    /// connection advertised more than one family ([`kept_for_refresh`]).
    latest: Option<KeptOffering>,
    next: u64,
    /// Set when a refresh gave up; cleared by the next one that succeeds.
    failure: Option<Failure>,
}

/// What is kept of `offering` for the next refresh: all of it when the
/// connection advertises more than one family, for a refetch of one to be
/// combined with the others; else nothing, as a refresh then lists the one
/// family again (kept, a large tools-only catalog's text was held for the
/// binding's life for nothing, and writing it was 3% of its discovery).
fn kept_for_refresh(offering: &Offering, advertised: &[Family]) -> Option<KeptOffering> {
    (advertised.len() > 1).then(|| offering.keep())
}

/// What `Binding::status` reports about the catalog.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CatalogStatus {
    pub(crate) generation: u64,
    pub(crate) digest: String,
    pub(crate) candidate_generation: u64,
    pub(crate) candidate_digest: String,
    pub(crate) stale_families: Vec<String>,
    pub(crate) compat_profile: String,
    pub(crate) failure: Option<Failure>,
}

/// A call checked against the adopted generation.
#[derive(Debug)]
pub(crate) struct CallPlan {
    catalog: Arc<Catalog>,
    /// The tool's index in the adopted generation; its raw name when the
    /// generation does not list it.
    tool: Result<usize, String>,
}

impl CallPlan {
    /// The tool's `idempotentHint`, when the adopted generation lists it
    /// with one.
    pub(crate) fn idempotent_hint(&self) -> Option<bool> {
        let tool = &self.catalog.tools[*self.tool.as_ref().ok()?];
        tool.annotations.as_ref()?.idempotent_hint
    }

    /// Who the tool is for (MCP Apps), when the adopted generation lists
    /// it with an app declaration.
    pub(crate) fn visibility(&self) -> Option<super::apps::Visibility> {
        let tool = &self.catalog.tools[*self.tool.as_ref().ok()?];
        tool.app.as_ref().map(|app| app.visibility)
    }
}

/// A binding's generations and its refresh task. See the module docs.
pub(crate) struct CatalogCell {
    ctx: BuildContext,
    service: super::CatalogService,
    feed: Arc<ChangeFeed>,
    events: EventBus,
    state: Mutex<Generations>,
    refresh_lock: tokio::sync::Mutex<()>,
    validators: Mutex<HashMap<String, Arc<Validator>>>,
    worker: Mutex<Option<tokio::task::AbortHandle>>,
    /// What the connection now in use established and needed (see
    /// [`CatalogCell::set_connection`]); `ctx` keeps the first connection's.
    connection: Mutex<SessionInfo>,
}

impl std::fmt::Debug for CatalogCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock().expect("catalog lock");
        f.debug_struct("CatalogCell")
            .field("adopted", &st.adopted.generation)
            .field("candidate", &st.candidate.as_ref().map(|c| c.generation))
            .finish_non_exhaustive()
    }
}

impl Drop for CatalogCell {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.lock().expect("worker lock").take() {
            worker.abort();
        }
    }
}

impl CatalogCell {
    /// Discovers every family the server advertised, adopts the result as
    /// generation 1 and starts the refresh task.
    pub(crate) async fn discover(
        ctx: BuildContext,
        service: super::CatalogService,
        feed: Arc<ChangeFeed>,
        events: EventBus,
        refresh_policy: RetryPolicy,
    ) -> Result<Arc<CatalogCell>, Error> {
        let snapshot = feed.snapshot();
        let mut offering = Offering::default();
        for family in ctx.advertised() {
            ctx.fetch(service.clone(), family, &mut offering, BadPage::Keep).await?;
        }
        let latest = kept_for_refresh(&offering, &ctx.advertised());
        let catalog = Arc::new(build(&ctx, offering.digested(), 1));
        // What was announced before discovery began is answered by it.
        feed.settle(&Family::ALL, &snapshot);
        events.emit(Event::CatalogAdopted {
            binding: ctx.binding.clone(),
            generation: 1,
            digest: catalog.digest.clone(),
            previous: 0,
            at: SystemTime::now(),
        });
        let cell = Arc::new(CatalogCell {
            connection: Mutex::new(ctx.session.clone()),
            ctx,
            service,
            feed: feed.clone(),
            events,
            state: Mutex::new(Generations {
                adopted: catalog,
                candidate: None,
                latest,
                next: 2,
                failure: None,
            }),
            refresh_lock: tokio::sync::Mutex::new(()),
            validators: Mutex::default(),
            worker: Mutex::new(None),
        });
        // Weak both: the feed holds this until a change comes.
        let (weak_cell, weak_feed) = (Arc::downgrade(&cell), Arc::downgrade(&feed));
        feed.on_first_change(Box::new(move || {
            let (Some(cell), Some(feed)) = (weak_cell.upgrade(), weak_feed.upgrade()) else { return };
            let task = tokio::spawn(run(Arc::downgrade(&cell), feed, refresh_policy));
            *cell.worker.lock().expect("worker lock") = Some(task.abort_handle());
        }));
        Ok(cell)
    }

    /// Records what the connection now in use established (after a
    /// reconnect or a renewed session: the server's identity, capabilities
    /// and instructions, and the tolerances its transport needed). Refreshes
    /// from now on list the families it advertises, and the generations
    /// built from now on describe it. The adopted generation keeps
    /// describing the connection it was read over.
    pub(crate) fn set_connection(&self, session: SessionInfo) {
        *self.connection.lock().expect("connection lock") = session;
    }

    /// The build context for a new generation: the binding's, with the
    /// current connection's session and tolerances.
    fn build_context(&self) -> BuildContext {
        let mut ctx = self.ctx.clone();
        ctx.session = self.connection.lock().expect("connection lock").clone();
        ctx
    }

    /// Whether the connection now in use speaks the 2026-07-28 era, and
    /// whether its tool calls carry `Mcp-Param-*` headers (that era, over
    /// HTTP).
    pub(crate) fn modern_headers(&self) -> (bool, bool) {
        let modern = crate::protocol::is_modern_version(
            &self.connection.lock().expect("connection lock").protocol_version,
        );
        (modern, modern && self.ctx.http)
    }

    pub(crate) fn adopted(&self) -> Arc<Catalog> {
        self.state.lock().expect("catalog lock").adopted.clone()
    }

    pub(crate) fn candidate(&self) -> Option<Arc<Catalog>> {
        self.state.lock().expect("catalog lock").candidate.clone()
    }

    /// Adopts the candidate `generation`. Adopting the generation already in
    /// force is a no-op.
    pub(crate) fn adopt(&self, generation: u64) -> Result<Arc<Catalog>, Error> {
        let mut st = self.state.lock().expect("catalog lock");
        if generation == st.adopted.generation {
            return Ok(st.adopted.clone());
        }
        match st.candidate.take() {
            Some(c) if c.generation == generation => {
                let previous = std::mem::replace(&mut st.adopted, c.clone()).generation;
                self.events.emit(Event::CatalogAdopted {
                    binding: self.ctx.binding.clone(),
                    generation,
                    digest: c.digest.clone(),
                    previous,
                    at: SystemTime::now(),
                });
                Ok(c)
            }
            other => {
                let waiting = other.as_ref().map(|c| c.generation);
                st.candidate = other;
                let (class, why) = if generation < st.next {
                    (FailureClass::CatalogStale, "is no longer the candidate")
                } else {
                    (FailureClass::NotFound, "does not exist")
                };
                let now = match waiting {
                    Some(g) => format!("the candidate is {g}"),
                    None => "there is no candidate".to_string(),
                };
                Err(Error::new(class, format!("generation {generation} {why}; {now}")))
            }
        }
    }

    pub(crate) fn status(&self) -> CatalogStatus {
        let st = self.state.lock().expect("catalog lock");
        CatalogStatus {
            generation: st.adopted.generation,
            digest: st.adopted.digest.clone(),
            candidate_generation: st.candidate.as_ref().map_or(0, |c| c.generation),
            candidate_digest: st.candidate.as_ref().map(|c| c.digest.clone()).unwrap_or_default(),
            stale_families: self.feed.stale().into_iter().map(|f| f.as_str().to_string()).collect(),
            compat_profile: self.ctx.profile.id(),
            failure: st.failure.clone(),
        }
    }

    /// Refetches every advertised family now (outside the debounce), and
    /// publishes a candidate unless the offering is the adopted one.
    pub(crate) async fn refresh_all(&self) -> Result<RefreshOutcome, Error> {
        let snapshot = self.feed.snapshot();
        self.refresh(None, &snapshot).await
    }

    /// Refetches the stale families once. `Ok(())` when there was nothing
    /// to do or the refetch succeeded.
    async fn refresh_stale(&self) -> Result<(), Error> {
        let snapshot = self.feed.snapshot();
        let families = snapshot.stale_families();
        if families.is_empty() {
            return Ok(());
        }
        self.refresh(Some(&families), &snapshot).await.map(drop)
    }

    /// Refetches `families` (`None`: every family the current connection
    /// advertises; with nothing kept from the last listing, every
    /// advertised family besides) and publishes the result. One build
    /// context serves the whole refresh, so what is listed, cleared and
    /// built describes one connection.
    async fn refresh(&self, families: Option<&[Family]>, snapshot: &Marks) -> Result<RefreshOutcome, Error> {
        let _one_at_a_time = self.refresh_lock.lock().await;
        let ctx = self.build_context();
        let advertised = ctx.advertised();
        let requested = families.unwrap_or(&advertised);
        let kept = self.state.lock().expect("catalog lock").latest.as_ref().map(KeptOffering::restore);
        // With nothing kept, there is nothing to combine a refetch with:
        // every advertised family is listed again, besides those asked for.
        let families: Vec<Family> = if kept.is_some() {
            requested.to_vec()
        } else {
            Family::ALL.into_iter().filter(|f| requested.contains(f) || advertised.contains(f)).collect()
        };
        let families = &families[..];
        let mut offering = kept.unwrap_or_default();
        // A family the current connection does not advertise is not on
        // offer, whatever an earlier connection listed.
        for family in Family::ALL.into_iter().filter(|f| !advertised.contains(f)) {
            offering.clear(family);
        }
        for family in families {
            ctx.fetch(self.service.clone(), *family, &mut offering, BadPage::Fail)
                .await
                .map_err(|e| e.with_binding(&ctx.binding).with_op("refresh_catalog"))?;
        }
        let outcome = self.publish(&ctx, offering);
        self.feed.settle(families, snapshot);
        self.state.lock().expect("catalog lock").failure = None;
        Ok(outcome)
    }

    fn publish(&self, ctx: &BuildContext, offering: Offering) -> RefreshOutcome {
        let latest = kept_for_refresh(&offering, &ctx.advertised());
        let digested = offering.digested();
        let digest = digested.digest.clone();
        let needs_build = {
            let st = self.state.lock().expect("catalog lock");
            digest != st.adopted.digest && st.candidate.as_ref().is_none_or(|c| c.digest != digest)
        };
        // Building compiles output schemas: not under the lock.
        let mut digested = Some(digested);
        let built = needs_build.then(|| build(ctx, digested.take().expect("not yet built"), 0));
        let mut st = self.state.lock().expect("catalog lock");
        st.latest = latest;
        let binding = self.ctx.binding.clone();
        let now = SystemTime::now();
        if digest == st.adopted.digest {
            st.candidate = None;
            let (generation, digest) = (st.adopted.generation, st.adopted.digest.clone());
            self.events.emit(Event::CatalogRefreshed { binding, generation, digest, at: now });
            return RefreshOutcome::Unchanged;
        }
        if let Some(c) = st.candidate.clone().filter(|c| c.digest == digest) {
            let (generation, digest) = (st.adopted.generation, st.adopted.digest.clone());
            self.events.emit(Event::CatalogRefreshed { binding, generation, digest, at: now });
            return RefreshOutcome::Candidate(c);
        }
        // Another refresh moved the generations on meanwhile.
        let mut catalog =
            built.unwrap_or_else(|| build(ctx, digested.take().expect("built, or still here to build"), 0));
        catalog.generation = st.next;
        st.next += 1;
        let catalog = Arc::new(catalog);
        st.candidate = Some(catalog.clone());
        self.events.emit(Event::CatalogCandidate {
            binding,
            generation: catalog.generation,
            digest: catalog.digest.clone(),
            adopted: st.adopted.generation,
            at: now,
        });
        RefreshOutcome::Candidate(catalog)
    }

    fn reject(&self, e: &Error, retrying: bool) {
        let mut st = self.state.lock().expect("catalog lock");
        if !retrying {
            st.failure = Some(Failure::from(e));
        }
        self.events.emit(Event::CatalogRejected {
            binding: self.ctx.binding.clone(),
            class: e.class(),
            message: e.message().to_string(),
            adopted: st.adopted.generation,
            retrying,
            at: SystemTime::now(),
        });
    }

    /// Checks a call of `raw_name` against the adopted generation: refused
    /// with `tool_schema_changed` when a waiting candidate changes the tool's
    /// schemas or removes it.
    pub(crate) fn plan_call(&self, raw_name: &str) -> Result<CallPlan, Error> {
        let st = self.state.lock().expect("catalog lock");
        let catalog = st.adopted.clone();
        let tool = catalog.tools.iter().position(|t| t.raw_name == raw_name);
        if let (Some(i), Some(candidate)) = (tool, &st.candidate) {
            let adopted = &catalog.tools[i];
            let why = match candidate.tool(raw_name) {
                None => Some("is gone from"),
                Some(c) if c.input_schema_digest != adopted.input_schema_digest => {
                    Some("has another input schema in")
                }
                Some(c) if c.output_schema_digest != adopted.output_schema_digest => {
                    Some("has another output schema in")
                }
                Some(_) => None,
            };
            if let Some(why) = why {
                return Err(Error::new(
                    FailureClass::ToolSchemaChanged,
                    format!(
                        "tool {raw_name:?} {why} candidate generation {} (adopted: {}); adopt it first",
                        candidate.generation, catalog.generation
                    ),
                ));
            }
        }
        let tool = tool.ok_or_else(|| raw_name.to_string());
        Ok(CallPlan { catalog, tool })
    }

    /// Validates a `tools/call` response's structured content against the
    /// planned tool's output schema; what a failure does follows the
    /// profile.
    pub(crate) fn check_response(&self, plan: &CallPlan, rsp: &mut McpResponse) -> Result<(), Error> {
        if let Some(hint) = server_request_hint(&plan.catalog.protocol_version, &rsp.result) {
            rsp.warn(hint);
        }
        let i = match &plan.tool {
            Ok(i) => *i,
            Err(raw_name) => {
                rsp.warn(format!(
                    "tool {raw_name:?} is not in the adopted catalog (generation {}); its result is not validated",
                    plan.catalog.generation
                ));
                return Ok(());
            }
        };
        let spec = &plan.catalog.tools[i];
        let raw_name = &spec.raw_name;
        let (Some(schema), Some(digest)) = (&spec.output_schema, &spec.output_schema_digest) else {
            return Ok(());
        };
        // An error result, or one whose structured content a limit dropped
        // (the limit already warned), has nothing to validate.
        let is_error = rsp.result.get("isError").and_then(serde_json::Value::as_bool).unwrap_or(false);
        let withheld = rsp.extensions.get::<ResultMarks>().is_some_and(|m| m.structured_dropped().is_some());
        let structured = rsp.result.get("structuredContent").filter(|v| !v.is_null());
        if is_error || (withheld && structured.is_none()) {
            return Ok(());
        }
        let problem = match structured {
            None => Some("has no structuredContent although the tool declares an output schema".to_string()),
            Some(value) => {
                let validator = self.validator(digest, schema)?;
                schema::validate(&validator, value)
                    .err()
                    .map(|e| format!("has structuredContent that fails the output schema {e}"))
            }
        };
        let Some(problem) = problem else { return Ok(()) };
        if self.ctx.profile.allows(Tolerance::StructuredContentMismatch) {
            if let Some(result) = rsp.result.as_object_mut() {
                result.remove("structuredContent");
            }
            rsp.warn(format!(
                "the result of tool {raw_name:?} {problem}; structured content dropped (structured_content_mismatch)"
            ));
            Ok(())
        } else {
            Err(Error::new(
                FailureClass::ServerProtocol,
                format!("the result of tool {raw_name:?} {problem}"),
            ))
        }
    }

    fn validator(&self, digest: &str, schema: &super::Schema) -> Result<Arc<Validator>, Error> {
        if let Some(v) = self.validators.lock().expect("validators lock").get(digest) {
            return Ok(v.clone());
        }
        // Checked when the catalog was built; a failure here would be a bug.
        let v =
            schema::compile(&schema.to_value()).map_err(|e| Error::new(FailureClass::CatalogInvalid, e))?;
        let mut cache = self.validators.lock().expect("validators lock");
        if cache.len() >= MAX_CACHED_VALIDATORS {
            cache.clear();
        }
        cache.insert(digest.to_string(), v.clone());
        Ok(v)
    }
}

/// The refresh task: waits for a change, lets the burst settle, refetches,
/// and retries a failed refetch under the refresh policy. It holds the cell
/// only while a refetch runs, never across a wait, so a dropped binding is
/// never kept alive by its own retries.
async fn run(cell: Weak<CatalogCell>, feed: Arc<ChangeFeed>, policy: RetryPolicy) {
    use tower::retry::backoff::Backoff as _;
    let policy = policy.resolved();
    loop {
        feed.wake.notified().await;
        tokio::time::sleep(REFRESH_DEBOUNCE).await;
        let started = Instant::now();
        let mut backoff = policy.backoff();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let Some(strong) = cell.upgrade() else { return };
            // Boxed: inline, a whole refresh's future made this task, which
            // every binding holds for its life, 2.5 KiB; boxed, it is
            // allocated only while a refresh runs (bench/vs-rmcp).
            let outcome = Box::pin(strong.refresh_stale()).await;
            let pause = match outcome {
                Ok(()) => break,
                Err(e) if e.class() == FailureClass::Shutdown => return,
                Err(e) => {
                    let pause = backoff.next_backoff();
                    let resume = pause.deadline();
                    let retrying = attempt < policy.attempts && resume <= started + policy.max_total;
                    strong.reject(&e, retrying);
                    if !retrying {
                        break;
                    }
                    pause
                }
            };
            drop(strong);
            pause.await;
        }
    }
}

/// The hint for an error result of a 2026-07-28 call that failed because the
/// server tried to ask through a server-initiated request (which that era
/// does not carry): the caller learns how to reach the tool on the
/// `initialize` era. Only the first few text items are read (each bounded
/// by the result limit).
fn server_request_hint(protocol_version: &str, result: &serde_json::Value) -> Option<&'static str> {
    if !crate::protocol::is_modern_version(protocol_version) || result.get("isError") != Some(&true.into()) {
        return None;
    }
    let content = result.get("content")?.as_array()?;
    content
        .iter()
        .take(4)
        .filter_map(|item| item.get("text")?.as_str())
        .find_map(crate::era::modern::server_request_hint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn counting(starts: &Arc<AtomicUsize>) -> Starter {
        let starts = starts.clone();
        Box::new(move || {
            starts.fetch_add(1, Ordering::SeqCst);
        })
    }

    #[test]
    fn the_refresh_task_starts_at_the_first_change_and_only_once() {
        let feed = ChangeFeed::new("b".into(), EventBus::new(None));
        let starts = Arc::new(AtomicUsize::new(0));
        feed.on_first_change(counting(&starts));
        assert_eq!(starts.load(Ordering::SeqCst), 0, "no change yet: no task");
        feed.list_changed(Family::Tools);
        feed.list_changed(Family::Prompts);
        assert_eq!(starts.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_change_announced_while_the_catalog_was_read_starts_it_at_once() {
        let feed = ChangeFeed::new("b".into(), EventBus::new(None));
        let snapshot = feed.snapshot();
        // Announced after the snapshot, before the task could be started.
        feed.list_changed(Family::Tools);
        feed.settle(&Family::ALL, &snapshot);
        let starts = Arc::new(AtomicUsize::new(0));
        feed.on_first_change(counting(&starts));
        assert_eq!(starts.load(Ordering::SeqCst), 1, "the change is still to be read");
        // One answered by the reading itself starts nothing.
        let feed = ChangeFeed::new("b".into(), EventBus::new(None));
        feed.list_changed(Family::Tools);
        let snapshot = feed.snapshot();
        feed.settle(&Family::ALL, &snapshot);
        let starts = Arc::new(AtomicUsize::new(0));
        feed.on_first_change(counting(&starts));
        assert_eq!(starts.load(Ordering::SeqCst), 0);
    }
}
