//! The [`Dialer`]: one connection from nothing — the transport dialed, the
//! engine started, the era chosen as the [`ProtocolChoice`] allows, and its
//! handshake run. The reconnect layer calls it again after a loss.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument as _;

use super::modern::{self, Modern, Probe};
use super::{legacy, ConnectTurns, ProtocolChoice, Turn};
use crate::compat::{Profile, Tolerance};
use crate::config::limits::DEFAULT_DISCOVER_TIMEOUT;
use crate::config::limits::DEFAULT_STARTUP_TIMEOUT;
use crate::connection::{Connection, InboundHandler};
use crate::error::{Error, FailureClass};
use crate::protocol::lifecycle::{ClientCapabilities, Implementation};
use crate::protocol::logging::LoggingLevel;
use crate::protocol::{LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION};
use crate::session::SessionInfo;
use crate::transport::{ConnectConfig, TransportFactory};
use std::sync::Mutex;

/// Makes one connection ready for requests: dials through the
/// [`TransportFactory`], starts the [`Connection`] engine over it, and runs
/// the handshake, all within one timeout. A binding dials once at start and
/// once per reconnect attempt, with the same `Dialer`.
///
/// # Choosing the era
///
/// The [`ProtocolChoice`] says which handshake runs. `Legacy` sends
/// `initialize`. `Modern` sends `server/discover` and installs the
/// 2026-07-28 era. `Auto` (the default) sends `server/discover` first: a result, or an
/// error only a modern server sends (-32020, -32021, -32022), means modern;
/// any other error, a discover result that names no supported versions (a
/// legacy server answering every method alike), a refused HTTP exchange
/// (400, 404, 405 without a modern JSON-RPC body) or no answer within the
/// discover timeout
/// (5 s) means legacy, and `initialize` follows on
/// the same connection. The verdict is kept for the dialer's later dials
/// (reconnects to the same server process or origin); a cached modern
/// verdict that a new dial finds wrong is probed again.
///
/// One exception, under `Auto` only and when the profile allows
/// [`Tolerance::LegacyEraForMrtrLessServers`] (the default profile does): a
/// modern answer from an implementation known to ask for elicitation and
/// roots only through server-initiated requests
/// (`modern::mrtr_less_implementation`, FastMCP 4) is not taken. Its tools
/// that ask would fail on 2026-07-28 and work on the `initialize` era, and
/// a user compares this client with others that speak that era to it (the
/// Inspector's default), so the dialer sends `initialize` on the same
/// connection, or on a new one when the server refuses it there (a stdio
/// server that has chosen the 2026-07-28 era keeps it), and reports the
/// tolerance as applied in the session ([`SessionInfo::transport_tolerances`],
/// then the catalog). A pinned choice (`Modern`, a version) is obeyed.
///
/// # When the dial times out
///
/// The `startup_timeout` error says what the transport knows of why
/// ([`TransportFactory::startup_hint`]): for a stdio server, what it last
/// wrote on stderr and which environment it was given.
///
/// ```
/// # use mcp_stack::era::Dialer;
/// # use mcp_stack::connection::NoInbound;
/// # use mcp_stack::transport::ConnectConfig;
/// # use std::sync::Arc;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_stack::Error> {
/// let dialer = Dialer::new(Arc::new(mcp_stack::demo::factory()), ConnectConfig::new("demo"), Arc::new(NoInbound));
/// let (connection, session) = dialer.dial().await?;
/// assert_eq!(session.server.name, "mcp-stack-demo");
/// connection.close().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Dialer {
    factory: Arc<dyn TransportFactory>,
    config: ConnectConfig,
    inbound: Arc<dyn InboundHandler>,
    capabilities: ClientCapabilities,
    client: Implementation,
    timeout: Duration,
    protocol: ProtocolChoice,
    discover_timeout: Duration,
    log_level: Option<LoggingLevel>,
    reissue_tool_calls: bool,
    /// The era the last dial found: `Some(true)` modern, `Some(false)`
    /// legacy. Shared by clones (the reconnect layer's copy).
    verdict: Arc<Mutex<Option<bool>>>,
    /// Whether the profile allows choosing `initialize` for a server known
    /// to ask only through server-initiated requests.
    legacy_for_mrtr_less: bool,
    /// Set when that choice was made: later dials go to `initialize` at once
    /// and report the tolerance too. Shared by clones.
    chose_legacy_for_mrtr_less: Arc<std::sync::atomic::AtomicBool>,
    /// The authorization flows the transport reported, through the hook of
    /// [`ConnectConfig::authenticating`].
    flows: Arc<AuthFlows>,
    /// Turns shared with other dialers ([`Dialer::take_turns`]). Shared
    /// by clones.
    turns: Arc<std::sync::OnceLock<ConnectTurns>>,
}

/// What the transport's authorization layer reported: how many flows run
/// now, and how many ever started.
#[derive(Debug, Default)]
struct AuthFlows {
    active: AtomicUsize,
    started: AtomicU64,
}

impl AuthFlows {
    fn record(&self, active: bool) {
        if active {
            self.started.fetch_add(1, Ordering::SeqCst);
            self.active.fetch_add(1, Ordering::SeqCst);
        } else {
            let _ = self.active.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        }
    }

    /// Whether a flow runs now or started since `started` was read.
    fn ran_since(&self, started: u64) -> bool {
        self.active.load(Ordering::SeqCst) > 0 || self.started.load(Ordering::SeqCst) != started
    }
}

impl fmt::Debug for Dialer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dialer")
            .field("transport", &self.factory.kind())
            .field("origin", &self.factory.redacted_origin())
            .field("config", &self.config)
            .field("client", &self.client.name)
            .field("timeout", &self.timeout)
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

impl Dialer {
    /// A dialer through `factory` with `config`, delivering what servers send
    /// on their own to `inbound`; it advertises no optional capabilities,
    /// names the client `mcp-stack`, and allows
    /// 30 s per dial.
    pub fn new(
        factory: Arc<dyn TransportFactory>,
        mut config: ConnectConfig,
        inbound: Arc<dyn InboundHandler>,
    ) -> Self {
        // The dialer watches the authorization flows too (see `handshake`),
        // and passes every report on to the hook it was given.
        let flows = Arc::new(AuthFlows::default());
        let given = config.authenticating.take();
        let watch = flows.clone();
        config.authenticating = Some(Arc::new(move |active| {
            watch.record(active);
            if let Some(given) = &given {
                given(active);
            }
        }));
        Dialer {
            factory,
            config,
            inbound,
            capabilities: ClientCapabilities::default(),
            client: crate::session::client_identity(),
            timeout: DEFAULT_STARTUP_TIMEOUT,
            protocol: ProtocolChoice::default(),
            discover_timeout: DEFAULT_DISCOVER_TIMEOUT,
            log_level: None,
            reissue_tool_calls: false,
            verdict: Arc::default(),
            legacy_for_mrtr_less: Profile::default().allows(Tolerance::LegacyEraForMrtrLessServers),
            chose_legacy_for_mrtr_less: Arc::default(),
            flows,
            turns: Arc::default(),
        }
    }

    /// From now on, each dial by this dialer and its clones first waits
    /// for its turn in `turns`, held until the dial ends (its timeout
    /// counts from then); the first call wins. A host gives the dialer of
    /// a binding it connected its connect turns once the binding is ready
    /// (see [`crate::host`]): set any earlier, a redial during the
    /// binding's own connect would wait for the turn that connect holds.
    /// Handshakes of renewed sessions take no turn: one runs on the path
    /// of a call, which should not wait behind other bindings' connects.
    pub(crate) fn take_turns(&self, turns: ConnectTurns) {
        let _ = self.turns.set(turns);
    }

    /// Waits for a turn, when [`Dialer::take_turns`] gave any.
    async fn turn(&self) -> Option<Turn> {
        Some(self.turns.get()?.take().await)
    }

    /// Sets the compatibility profile the dial follows (the default
    /// profile unless set): whether it allows
    /// [`Tolerance::LegacyEraForMrtrLessServers`].
    pub fn compat(mut self, profile: &Profile) -> Self {
        self.legacy_for_mrtr_less = profile.allows(Tolerance::LegacyEraForMrtrLessServers);
        self
    }

    /// Sets which era or version the handshake may choose.
    pub fn protocol(mut self, protocol: ProtocolChoice) -> Self {
        self.protocol = protocol;
        self
    }

    /// Bounds how long the automatic choice waits for `server/discover`
    /// before it takes the server for a legacy one.
    pub fn discover_timeout(mut self, timeout: Duration) -> Self {
        self.discover_timeout = timeout;
        self
    }

    /// The log level every modern request asks for (`None`: no logs).
    pub fn log_level(mut self, level: Option<LoggingLevel>) -> Self {
        self.log_level = level;
        self
    }

    /// Whether a modern `tools/call` whose reply was lost is sent again
    /// (see [`Definition::reissue_lost_tool_calls`]). Off by default.
    ///
    /// [`Definition::reissue_lost_tool_calls`]: crate::Definition::reissue_lost_tool_calls
    pub fn reissue_lost_tool_calls(mut self, reissue: bool) -> Self {
        self.reissue_tool_calls = reissue;
        self
    }

    /// The era the last dial found, if any: `Some(true)` for modern.
    pub fn verdict(&self) -> Option<bool> {
        *self.verdict.lock().expect("verdict lock")
    }

    /// Sets the capabilities the handshake advertises.
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Sets what the handshake says the client is.
    pub fn client_info(mut self, client: Implementation) -> Self {
        self.client = client;
        self
    }

    /// Bounds each dial (connect plus handshake).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The factory dialed through.
    pub fn factory(&self) -> &Arc<dyn TransportFactory> {
        &self.factory
    }

    /// What `initialize` declares: the capabilities without the extensions
    /// only 2026-07-28 has (the Tasks extension; that era's tasks are not
    /// the 2025-11-25 ones).
    fn legacy_capabilities(&self) -> ClientCapabilities {
        let mut capabilities = self.capabilities.clone();
        if let Some(extensions) = &mut capabilities.extensions {
            extensions.remove(crate::protocol::lifecycle::TASKS_EXTENSION);
            if extensions.is_empty() {
                capabilities.extensions = None;
            }
        }
        capabilities
    }

    /// Runs the `initialize` handshake again on `connection` (a session the
    /// server forgot), within the dial timeout.
    pub(crate) async fn initialize(&self, connection: &Connection) -> Result<SessionInfo, Error> {
        let handshake = legacy::initialize_version(
            connection,
            self.legacy_version(),
            self.legacy_capabilities(),
            self.client.clone(),
        );
        let mut session = tokio::time::timeout(self.timeout, handshake).await.unwrap_or_else(|_| {
            Err(Error::new(
                FailureClass::StartupTimeout,
                format!(
                    "the handshake of a renewed session did not finish within {}",
                    crate::error::for_people(self.timeout)
                ),
            ))
        })?;
        if self.chose_legacy_for_mrtr_less.load(Ordering::SeqCst) {
            session.transport_tolerances.push(Tolerance::LegacyEraForMrtrLessServers);
        }
        Ok(session)
    }

    /// Connects and runs the handshake. Fails with `startup_timeout` when
    /// that takes longer than the timeout, or with what went wrong; a
    /// connection whose handshake failed is closed.
    pub async fn dial(&self) -> Result<(Connection, SessionInfo), Error> {
        let start = async {
            let transport = self.factory.connect(&self.config).await?;
            let connection = Connection::start(transport, self.inbound.clone());
            let outcome = self.handshake(&connection).await;
            let (connection, outcome) = match outcome {
                Ok(Handshake::Ready(session)) => return Ok((connection, session)),
                Ok(Handshake::Redial) => {
                    // The server keeps the era it chose on this connection:
                    // `initialize` goes on a new one.
                    connection.close().await;
                    let transport = self.factory.connect(&self.config).await?;
                    let connection = Connection::start(transport, self.inbound.clone());
                    let outcome = self.legacy_handshake(&connection).await;
                    (connection, outcome)
                }
                Err(e) => (connection, Err(e)),
            };
            match outcome {
                Ok(session) => Ok((connection, session)),
                Err(e) => {
                    connection.close().await;
                    Err(e)
                }
            }
        };
        // The handshake's requests are the connection's own, below any
        // stack: this span (crate::layer::trace, DEBUG like every request
        // that is not a tool call) is theirs.
        let span = tracing::debug_span!(
            target: "mcp_stack::request",
            "mcp.connect",
            mcp.binding = self.config.binding.as_str(),
            mcp.transport = self.factory.kind(),
            jsonrpc.request.id = tracing::field::Empty,
            mcp.protocol.version = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let _turn = self.turn().await;
        // On timeout the half-made connection is dropped with the future,
        // which closes its transport.
        let dialed =
            tokio::time::timeout(self.timeout, start).instrument(span.clone()).await.unwrap_or_else(|_| {
                let mut message = format!(
                    "connect and handshake did not finish within {}",
                    crate::error::for_people(self.timeout)
                );
                if let Some(hint) = self.factory.startup_hint() {
                    message.push_str("; ");
                    message.push_str(&hint);
                }
                Err(Error::new(FailureClass::StartupTimeout, message))
            });
        let _entered = span.enter();
        match &dialed {
            Ok((_, session)) => {
                span.record("mcp.protocol.version", session.protocol_version.as_str());
                tracing::debug!(target: "mcp_stack::request", "connected");
            }
            Err(e) => {
                span.record("error.type", e.class().as_str());
                tracing::debug!(target: "mcp_stack::request", "connect failed");
            }
        }
        dialed
    }
}

impl Dialer {
    fn legacy_version(&self) -> &str {
        match self.protocol.pinned() {
            Some(v) if self.protocol.allows_legacy() => v,
            _ => LATEST_LEGACY_VERSION,
        }
    }

    fn modern_era(&self) -> Modern {
        let version = match self.protocol.pinned() {
            Some(v) if self.protocol.allows_modern() => v,
            _ => LATEST_MODERN_VERSION,
        };
        // Over HTTP a dropped request is cancelled by closing its stream.
        let by_notice = !self.factory.exchange_per_request();
        Modern::new(version, &self.capabilities, &self.client, self.log_level)
            .cancel_by_notice(by_notice)
            .reissue_tool_calls(self.reissue_tool_calls)
    }

    /// The `initialize` handshake, reporting the tolerance when it was
    /// chosen for a server known to ask only through server-initiated
    /// requests.
    async fn legacy_handshake(&self, connection: &Connection) -> Result<SessionInfo, Error> {
        let mut session = legacy::initialize_version(
            connection,
            self.legacy_version(),
            self.legacy_capabilities(),
            self.client.clone(),
        )
        .await?;
        if self.chose_legacy_for_mrtr_less.load(Ordering::SeqCst) {
            session.transport_tolerances.push(Tolerance::LegacyEraForMrtrLessServers);
        }
        if self.protocol.allows_modern() {
            *self.verdict.lock().expect("verdict lock") = Some(false);
        }
        Ok(session)
    }

    /// The handshake the protocol choice asks for (see the type's docs).
    async fn handshake(&self, connection: &Connection) -> Result<Handshake, Error> {
        let cached = self.verdict();
        let try_modern = self.protocol.allows_modern() && cached != Some(false);
        let mut unanswered = false;
        if try_modern {
            match self.probe(connection).await? {
                Probed::Modern(session) => return self.modern_answer(connection, session).await,
                Probed::Legacy { timed_out } => unanswered = timed_out,
            }
        }
        match self.legacy_handshake(connection).await {
            // A dual-era server slow to start (`npx` or `uvx` fetching it)
            // reads the unanswered `server/discover` first, chooses
            // 2026-07-28 for the connection, and refuses `initialize`
            // offering it: the server is modern after all, and is asked
            // again (once), now that it runs.
            Err(e) if unanswered && offers_modern(&e) => {
                tracing::debug!(target: "mcp_stack::era", "a late server/discover answer: probing again");
                match self.probe(connection).await? {
                    Probed::Modern(session) => self.modern_answer(connection, session).await,
                    Probed::Legacy { .. } => Err(e),
                }
            }
            outcome => outcome.map(Handshake::Ready),
        }
    }

    /// One `server/discover` probe, as the protocol choice asks (see the
    /// type's docs).
    async fn probe(&self, connection: &Connection) -> Result<Probed, Error> {
        let pinned = self.protocol.pinned().map(str::to_string);
        let allowed = move |v: &str| pinned.as_deref().is_none_or(|p| p == v);
        let probing = self.protocol == ProtocolChoice::Auto;
        let probe = modern::discover(connection, self.modern_era(), allowed, probing);
        let flows = self.flows.started.load(Ordering::SeqCst);
        let mut timed_out = false;
        let outcome = match self.protocol {
            // Only the automatic choice falls back when nothing answers.
            ProtocolChoice::Auto => {
                let mut probe = std::pin::pin!(probe);
                match tokio::time::timeout(self.discover_timeout, &mut probe).await {
                    Ok(outcome) => outcome,
                    // An authorization ran during the probe: the time was
                    // the person's (or the authorization server's), not a
                    // silent server's, and falling back would drop the
                    // flow and ask again. The dial's own timeout bounds it.
                    Err(_) if self.flows.ran_since(flows) => probe.await,
                    Err(_) => {
                        connection.reset_era();
                        timed_out = true;
                        Ok(Probe::Legacy(Error::new(
                            FailureClass::StartupTimeout,
                            format!(
                                "server/discover had no answer within {}",
                                crate::error::for_people(self.discover_timeout)
                            ),
                        )))
                    }
                }
            }
            _ => probe.await,
        };
        match outcome? {
            Probe::Modern(session) => Ok(Probed::Modern(session)),
            Probe::Legacy(why) if !self.protocol.allows_legacy() => Err(Error::new(
                FailureClass::UnsupportedProtocol,
                format!(
                    "the server does not speak the 2026-07-28 protocol this binding is limited to: {}",
                    why.message()
                ),
            )
            .with_op("server/discover")),
            Probe::Legacy(why) => {
                tracing::debug!(target: "mcp_stack::era", "falling back to initialize: {}", why.message());
                Ok(Probed::Legacy { timed_out })
            }
        }
    }

    /// What a modern answer to `server/discover` leads to: the session, or,
    /// for a server known to ask only through server-initiated requests,
    /// the `initialize` era (see the type's docs).
    async fn modern_answer(&self, connection: &Connection, session: SessionInfo) -> Result<Handshake, Error> {
        let auto = self.protocol == ProtocolChoice::Auto && self.legacy_for_mrtr_less;
        if let Some(name) = modern::mrtr_less_implementation(&session).filter(|_| auto) {
            tracing::debug!(
                target: "mcp_stack::era",
                "{name} asks only through server-initiated requests: speaking initialize to it \
                 (legacy_era_for_mrtr_less_servers)"
            );
            self.chose_legacy_for_mrtr_less.store(true, Ordering::SeqCst);
            connection.reset_era();
            return match self.legacy_handshake(connection).await {
                Ok(session) => Ok(Handshake::Ready(session)),
                // A refusal, or a connection the server ended.
                Err(e) if e.class() != FailureClass::StartupTimeout => {
                    tracing::debug!(target: "mcp_stack::era", "initialize refused here: {}", e.message());
                    Ok(Handshake::Redial)
                }
                Err(e) => Err(e),
            };
        }
        *self.verdict.lock().expect("verdict lock") = Some(true);
        Ok(Handshake::Ready(session))
    }
}

/// Whether `e` is an `initialize` refused with -32022 offering a modern
/// version.
fn offers_modern(e: &Error) -> bool {
    super::rpc_error(e).is_some_and(|rpc| {
        rpc.code == crate::protocol::jsonrpc::codes::UNSUPPORTED_PROTOCOL_VERSION
            && super::supported_versions(rpc).iter().any(|v| crate::protocol::is_modern_version(v))
    })
}

/// How a probe ended.
// One per dial, moved once: boxing the session would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Probed {
    /// The server is modern.
    Modern(SessionInfo),
    /// `initialize` follows; `timed_out` when nothing answered in time.
    Legacy {
        /// The probe had no answer within the discover timeout.
        timed_out: bool,
    },
}

/// How a handshake on one connection ended.
#[allow(clippy::large_enum_variant)] // as `Probed`
enum Handshake {
    /// The session is ready.
    Ready(SessionInfo),
    /// `initialize` must run on a new connection: the server refused it on
    /// this one after a modern answer the dialer did not take.
    Redial,
}
