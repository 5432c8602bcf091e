//! Assembly and lifecycle: a binding built from its definition (dial and
//! handshake, the stack with the user layers, discovery through it, the
//! front with the checks; the order is in the [module docs](super)), and
//! what keeps it serving over its life — the one task that reads the
//! reconnect layer's reports, and what a new session needs before it serves
//! as the first did.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::SystemTime;
use tokio::sync::broadcast;
use tower::layer::util::Identity;
use tower::{Layer, ServiceBuilder};

use super::builder::{CustomStack, UserLayer, UserLayers};
use crate::era::ConnectTurns;

use super::*;

tokio::task_local! {
    /// The turns the bindings connected on this task redial in, once ready
    /// (a host's connect turns; see [`redialing_in`]). A task-local rather
    /// than a field of what a host's connector is given, so that any
    /// connector calling [`Binding::connect`] in its future passes it on
    /// unchanged.
    static CONNECT_TURNS: ConnectTurns;
}

/// Runs `connect` so that a binding it connects redials in `turns` once
/// it is ready (see [`crate::host`]).
pub(crate) fn redialing_in<F: std::future::Future>(
    turns: ConnectTurns,
    connect: F,
) -> impl std::future::Future<Output = F::Output> {
    CONNECT_TURNS.scope(turns, connect)
}

impl Binding {
    /// Connects to the server `definition` describes, runs the handshake
    /// within `Timeouts::startup`, and returns the ready binding, which
    /// reconnects under `Definition::reconnect` when its connection is lost.
    pub async fn connect(definition: Definition, handlers: Handlers) -> Result<Binding, Error> {
        Binding::builder(definition).handlers(handlers).connect().await
    }

    /// A builder for a binding with the host's handlers and user layers
    /// (see [`BindingBuilder`] and [User layers](crate::Binding#user-layers)).
    pub fn builder(definition: Definition) -> BindingBuilder {
        BindingBuilder::new(definition)
    }

    async fn connect_with(
        (definition, handlers, layers, custom): (Definition, Handlers, UserLayers, Option<CustomStack>),
    ) -> Result<Binding, Error> {
        // The steps, in order: dial and handshake, the stack (with the user
        // layers), discovery through it, the front with the checks.
        definition.validate()?;
        let name = definition.name.clone();
        let limits = definition.limits;
        let timeouts = definition.timeouts;
        let events = EventBus::new(handlers.event.clone());
        let progress = ProgressRouter::new(name.clone());
        let origin = definition.transport.redacted_origin().to_string();
        let transport_kind = definition.transport.kind();
        emit_state(&events, &name, State::Configured, State::Starting);

        let feed = ChangeFeed::new(name.clone(), events.clone());
        let advertised = definition.declare(client_capabilities(definition.capabilities, &handlers));
        // What the server is told of this client may change what it lists,
        // so it is part of whom cached results are shared with.
        let declared = serde_json::json!({
            "capabilities": serde_json::to_value(&advertised).unwrap_or_default(),
            "client": [&definition.client.name, &definition.client.version],
        });
        let cache = CacheState::new(&definition.caching, definition.transport.endpoint_digest(), &declared);
        let app_store = super::apps::AppStore::new(&definition);
        let tasks = Arc::new(crate::tasks::TaskFeed::default());
        let server_side = ServerSide {
            binding: &name,
            allowed: definition.capabilities,
            log_level: definition.log_level,
            exchange_per_request: definition.transport.exchange_per_request(),
            cache: &cache,
            tasks: &tasks,
        };
        let inbound = Arc::new(BindingInbound::new(
            &server_side,
            &handlers,
            limits,
            timeouts,
            events.clone(),
            progress.clone(),
            feed.clone(),
        ));
        let mut config = ConnectConfig::new(name.clone());
        config.max_frame_bytes = limits.max_frame_bytes;
        config.max_body_bytes = limits.max_body_bytes;
        config.diagnostics = Some(inbound.clone().diagnostics_sink());
        let auth_phase = authenticating::AuthPhase::new(events.clone(), name.clone());
        config.authenticating = Some(auth_phase.hook());
        let dialer = Dialer::new(definition.transport.clone(), config, inbound.clone())
            .capabilities(advertised)
            .client_info(definition.client.to_implementation())
            .timeout(timeouts.startup)
            .protocol(definition.protocol.clone())
            .compat(&definition.compat)
            .discover_timeout(timeouts.discover)
            .reissue_lost_tool_calls(definition.reissue_lost_tool_calls)
            .log_level(handlers.log.is_some().then_some(definition.log_level));

        let (connection, session) = match dialer.dial().await {
            Ok(started) => started,
            Err(e) => {
                emit_state(&events, &name, State::Starting, State::Failed);
                return Err(e.with_binding(&name).with_op("connect"));
            }
        };
        let first_era = connection.era();
        let lifecycle = Arc::new(Lifecycle::ready(name.clone(), events.clone(), session.clone()));
        // What the reconnect layer reports (a lost and restored connection,
        // a renewed session) is read by the binding's task once the binding
        // exists (`follow_reports`); taken before the layer is applied to
        // the connection (whose end starts the supervisor), so that none is
        // missed.
        let follower = Arc::new(Follower::default());
        let redials = dialer.clone();
        let layer = ReconnectLayer::new(dialer, definition.reconnect).on_report(follower.hook());
        let reports = layer.reports();
        let reconnect = layer.layer(connection);
        let retry = match !definition.reconnect.enabled || !definition.retry_requests {
            true => SafeRetry::never(),
            false => {
                let (events, binding) = (events.clone(), name.clone());
                SafeRetry::new(&definition.reconnect.retry).on_retry(Arc::new(move |notice| {
                    events.emit(Event::RequestRetried {
                        binding: binding.clone(),
                        method: notice.method,
                        attempt: notice.attempt,
                        class: notice.class,
                        http_status: notice.http_status,
                        delay_ms: notice.delay.as_millis().min(u128::from(u64::MAX)) as u64,
                        at: std::time::SystemTime::now(),
                    })
                }))
            }
        };
        inbound.set_protocol_version(&session.protocol_version);
        cache.set_session(&session);

        // The order, and why, is in the module docs. Below the deadline, one
        // stack serves the host's calls and the catalog's reads.
        let parts = StackParts::new(
            limits,
            definition.allow_parallel_calls,
            progress.clone(),
            retry,
            reconnect.clone(),
            CacheLayer::new(cache.clone()),
        );
        let entry = BindingBuilder::<Identity>::build_stack(layers, custom, parts);
        // The catalog reads the server's whole offering below the filter and
        // the call checks: the digest describes the server, not this host's
        // policy, and the catalog applies the filter to what it shows.
        let trace = definition.trace_context.clone();
        let catalog_service =
            Trace::new(Deadline::new(entry.clone(), timeouts.request), &name, None, trace.clone());
        auth_phase.set_phase(State::Discovering);
        let catalog =
            discover_at_connect(&definition, &session, catalog_service, feed, &events, timeouts).await;
        let catalog = match catalog {
            Ok(catalog) => catalog,
            Err(e) => {
                reconnect.close().await;
                return Err(e.with_binding(&name).with_op("connect"));
            }
        };
        let adopted = catalog.clone();
        let model_names: ModelNames =
            Arc::new(move |raw: &str| adopted.adopted().tool(raw).map(|t| t.model_name.clone()));
        auth_phase.attach(&lifecycle);
        let repeatable = Arc::new(definition.repeatable_tools.clone());
        let front = ServiceBuilder::new()
            .layer_fn(|inner| Trace::new(inner, &name, Some(model_names.clone()), trace.clone()))
            .layer(ToolFilterLayer::new(definition.tool_filter.clone()))
            .layer(DeadlineLayer::new(timeouts.request))
            .layer_fn(|inner| CatalogGuard::new(inner, catalog.clone(), repeatable.clone()))
            .layer(SamplingDepthLayer::new(inbound.depth().clone()))
            .service(entry);
        let binding = Binding {
            inner: Arc::new(Inner {
                service: BindingService::new(front, &name),
                name,
                limits,
                timeouts,
                transport_kind,
                carries_headers: definition.transport.carries_headers(),
                origin,
                session,
                reconnect,
                lifecycle,
                progress,
                catalog,
                inbound,
                cache,
                tasks,
                task_store: definition.task_store.clone(),
                declares_tasks: definition.capabilities.tasks,
                subscriptions: std::sync::Mutex::new(BTreeSet::new()),
                log_level: definition.log_level,
                era: std::sync::Mutex::new(first_era),
                listen: std::sync::Mutex::new(None),
                listened_tasks: Default::default(),
                app_fingerprints: Default::default(),
                app_store,
                listen_refused: Default::default(),
            }),
        };
        follower.install(Arc::downgrade(&binding.inner), reports);
        binding.configure_session().await;
        // Ready: a host that connected the binding (in its turn) has its
        // redials take turns too; not before, or a redial during this
        // connect would wait for the turn the connect holds.
        if let Ok(turns) = CONNECT_TURNS.try_with(ConnectTurns::clone) {
            redials.take_turns(turns);
        }
        Ok(binding)
    }

    /// What a new session (after a reconnect, or a renewed HTTP session)
    /// needs before it serves as the old one did: the inbound side learns
    /// the negotiated version, the catalog looks again (a change becomes a
    /// candidate, not a surprise; within `Timeouts::startup`), the restore
    /// is reported ([`Event::ConnectionRestored`] with the generation found,
    /// then the state moves to `ready`), the log level is set again, and
    /// every subscription is renewed. Failures are warning events; the
    /// binding stays usable.
    async fn after_new_session(self, restore: transitions::Restore) {
        {
            let binding = self;
            let session = binding.current_session();
            let inner = &binding.inner;
            inner.inbound.set_protocol_version(&session.protocol_version);
            inner.cache.set_session(&session);
            inner.catalog.set_connection(session.clone());
            let generation =
                match tokio::time::timeout(inner.timeouts.startup, inner.catalog.refresh_all()).await {
                    Ok(Ok(crate::catalog::RefreshOutcome::Unchanged)) => inner.catalog.adopted().generation,
                    Ok(Ok(crate::catalog::RefreshOutcome::Candidate(candidate))) => candidate.generation,
                    Ok(Err(e)) => {
                        binding.warn(format!("could not read the catalog over the new connection: {e}"));
                        0
                    }
                    Err(_) => {
                        binding.warn(format!(
                            "could not read the catalog over the new connection within {:?}",
                            inner.timeouts.startup
                        ));
                        0
                    }
                };
            inner.lifecycle.finish_restore(restore, generation, inner.catalog.adopted().generation);
            binding.configure_session().await;
            for (uri, e) in binding.resubscribe_all().await {
                binding.warn(format!("could not renew the subscription to {uri:?}: {e}"));
            }
        }
    }

    /// Turns the server's logs on, at the definition's level, when a log
    /// handler is installed and the server advertises logging. A failure is
    /// a warning event, never the end of the binding.
    async fn configure_session(&self) {
        let era = self.era();
        if era.change_style() == ChangeStyle::ListenStream {
            // A new session: its server may offer the stream.
            self.inner.listen_refused.store(false, std::sync::atomic::Ordering::Relaxed);
            self.start_listening();
        }
        if !self.inner.inbound.has_log_handler() || self.current_session().capabilities.logging.is_none() {
            return;
        }
        if !era.sets_log_level() {
            // Logs are request-scoped (2026-07-28): every request already
            // asks for them at the definition's level.
            return;
        }
        if let Err(e) = self.set_log_level(self.inner.log_level).await {
            self.warn(format!("could not turn the server's logs on: {e}"));
        }
    }
}

impl<L: UserLayer> BindingBuilder<L> {
    /// Connects (see [`Binding::connect`]).
    pub async fn connect(self) -> Result<Binding, Error> {
        Binding::connect_with(self.into_parts()).await
    }
}

/// Starts the binding's task over its reconnect layer's reports
/// ([`follow_reports`]) at the first report, not at connect: most
/// connections are never lost, and spawning a task cost a connect about
/// 12 µs on one CPU (`bench/vs-rmcp`, `connect`: a worker woken, switched
/// to and back), and an idle binding the task's memory. A report sent while the binding
/// is still being made starts it as soon as the binding exists.
#[derive(Default)]
struct Follower(std::sync::Mutex<Following>);

#[derive(Default)]
enum Following {
    /// The binding is being made; nothing reported yet.
    #[default]
    Connecting,
    /// A report came while the binding was being made.
    Reported,
    /// The binding exists; nothing reported yet.
    Ready(std::sync::Weak<Inner>, broadcast::Receiver<Report>),
    Started,
}

impl Follower {
    /// What the reconnect layer calls after each report. It holds the
    /// follower, which holds the binding only weakly: no cycle.
    fn hook(self: &Arc<Self>) -> Arc<dyn Fn() + Send + Sync> {
        let follower = self.clone();
        Arc::new(move || follower.start(None))
    }

    /// The binding exists: the task starts now if a report came already.
    fn install(&self, binding: std::sync::Weak<Inner>, reports: broadcast::Receiver<Report>) {
        self.start(Some((binding, reports)));
    }

    fn start(&self, made: Option<(std::sync::Weak<Inner>, broadcast::Receiver<Report>)>) {
        let mut state = self.0.lock().expect("follower lock");
        let (binding, reports) = match (std::mem::take(&mut *state), made) {
            (Following::Connecting, None) => {
                *state = Following::Reported;
                return;
            }
            (Following::Connecting, Some((binding, reports))) => {
                *state = Following::Ready(binding, reports);
                return;
            }
            (Following::Reported, Some(made)) | (Following::Ready(_, _), Some(made)) => made,
            (Following::Ready(binding, reports), None) => (binding, reports),
            (Following::Reported, None) => {
                *state = Following::Reported;
                return;
            }
            (Following::Started, _) => {
                *state = Following::Started;
                return;
            }
        };
        *state = Following::Started;
        tokio::spawn(follow_reports(binding, reports));
    }
}

/// The binding's one task over its reconnect layer's reports: each moves
/// the lifecycle (state, status, events) at once, in order; a new session
/// is then made to serve as the first did (`Binding::after_new_session`),
/// on a task of its own, so that the reports behind it are not held up. It
/// holds the binding weakly, and ends when the binding is dropped.
async fn follow_reports(weak: std::sync::Weak<Inner>, mut reports: broadcast::Receiver<Report>) {
    loop {
        let report = match reports.recv().await {
            Ok(report) => report,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                let Some(inner) = weak.upgrade() else { return };
                Binding { inner }.warn(format!(
                    "missed {missed} reconnect reports; the binding's status may lag until the next"
                ));
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(inner) = weak.upgrade() else { return };
        let binding = Binding { inner };
        let adopted = binding.inner.catalog.adopted().generation;
        if let Some(restore) = binding.inner.lifecycle.on_report(&report, adopted) {
            tokio::spawn(binding.after_new_session(restore));
        }
    }
}

fn emit_state(events: &EventBus, binding: &str, from: State, to: State) {
    events.emit(Event::StateChanged { binding: binding.to_string(), from, to, at: SystemTime::now() });
}

/// Discovers the catalog at connect (state `discovering`), within
/// `Timeouts::startup`, and adopts it as generation 1.
async fn discover_at_connect(
    definition: &Definition,
    session: &SessionInfo,
    service: CatalogService,
    feed: Arc<ChangeFeed>,
    events: &EventBus,
    timeouts: Timeouts,
) -> Result<Arc<CatalogCell>, Error> {
    let name = &definition.name;
    emit_state(events, name, State::Starting, State::Discovering);
    let ctx = BuildContext {
        binding: name.clone(),
        session: session.clone(),
        profile: definition.compat.clone(),
        limits: definition.limits,
        filter: definition.tool_filter.clone(),
        always_load: definition.always_load.clone(),
        http: definition.transport.carries_headers(),
        declarations: definition.declarations.clone(),
        warned: Default::default(),
        events: Some(events.clone()),
    };
    let discovery = CatalogCell::discover(ctx, service, feed, events.clone(), definition.refresh);
    let outcome = match tokio::time::timeout(timeouts.startup, discovery).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Error::new(
            FailureClass::StartupTimeout,
            format!("catalog discovery did not finish within {}", crate::error::for_people(timeouts.startup)),
        )),
    };
    match &outcome {
        Ok(_) => emit_state(events, name, State::Discovering, State::Ready),
        Err(_) => emit_state(events, name, State::Discovering, State::Failed),
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(follower: &Follower) -> &'static str {
        match &*follower.0.lock().unwrap() {
            Following::Connecting => "connecting",
            Following::Reported => "reported",
            Following::Ready(..) => "ready",
            Following::Started => "started",
        }
    }

    #[tokio::test]
    async fn the_reports_task_starts_at_the_first_report_even_one_made_while_connecting() {
        let (tx, _) = broadcast::channel::<Report>(4);
        // A report after the binding exists, and after the connect that
        // made the follower has returned: the hook alone holds it.
        let follower = Arc::new(Follower::default());
        let hook = follower.hook();
        follower.install(std::sync::Weak::new(), tx.subscribe());
        assert_eq!(state(&follower), "ready", "no report: no task");
        let kept = Arc::downgrade(&follower);
        drop(follower);
        hook();
        let follower = kept.upgrade().expect("the reconnect layer's hook keeps the follower");
        assert_eq!(state(&follower), "started");
        hook();
        assert_eq!(state(&follower), "started");
        // A report while the binding was being made.
        let follower = Arc::new(Follower::default());
        let hook = follower.hook();
        hook();
        assert_eq!(state(&follower), "reported");
        follower.install(std::sync::Weak::new(), tx.subscribe());
        assert_eq!(state(&follower), "started");
    }
}
