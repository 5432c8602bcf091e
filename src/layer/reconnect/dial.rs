use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::config::limits::DEFAULT_STARTUP_TIMEOUT;
use crate::connection::{Connection, InboundHandler};
use crate::era::legacy;
use crate::error::{Error, FailureClass};
use crate::protocol::lifecycle::{ClientCapabilities, Implementation};
use crate::session::SessionInfo;
use crate::transport::{ConnectConfig, TransportFactory};

/// Makes one connection ready for requests: dials through the
/// [`TransportFactory`], starts the [`Connection`] engine over it, and runs
/// the handshake, all within one timeout. A binding dials once at start and
/// once per reconnect attempt, with the same `Dialer`.
///
/// ```
/// # use mcp_stack::layer::Dialer;
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
}

impl fmt::Debug for Dialer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dialer")
            .field("transport", &self.factory.kind())
            .field("origin", &self.factory.redacted_origin())
            .field("config", &self.config)
            .field("client", &self.client.name)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Dialer {
    /// A dialer through `factory` with `config`, delivering what servers send
    /// on their own to `inbound`; it advertises no optional capabilities,
    /// names the client `mcp-stack`, and allows
    /// [`DEFAULT_STARTUP_TIMEOUT`] per dial.
    pub fn new(
        factory: Arc<dyn TransportFactory>,
        config: ConnectConfig,
        inbound: Arc<dyn InboundHandler>,
    ) -> Self {
        Dialer {
            factory,
            config,
            inbound,
            capabilities: ClientCapabilities::default(),
            client: crate::session::client_identity(),
            timeout: DEFAULT_STARTUP_TIMEOUT,
        }
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

    /// Runs the `initialize` handshake again on `connection` (a session the
    /// server forgot), within the dial timeout.
    pub(crate) async fn initialize(&self, connection: &Connection) -> Result<SessionInfo, Error> {
        let handshake = legacy::initialize(connection, self.capabilities.clone(), self.client.clone());
        tokio::time::timeout(self.timeout, handshake).await.unwrap_or_else(|_| {
            Err(Error::new(
                FailureClass::StartupTimeout,
                format!("the handshake of a renewed session did not finish within {:?}", self.timeout),
            ))
        })
    }

    /// Connects and runs the handshake. Fails with `startup_timeout` when
    /// that takes longer than the timeout, or with what went wrong; a
    /// connection whose handshake failed is closed.
    pub async fn dial(&self) -> Result<(Connection, SessionInfo), Error> {
        let start = async {
            let transport = self.factory.connect(&self.config).await?;
            let connection = Connection::start(transport, self.inbound.clone());
            match legacy::initialize(&connection, self.capabilities.clone(), self.client.clone()).await {
                Ok(session) => Ok((connection, session)),
                Err(e) => {
                    connection.close().await;
                    Err(e)
                }
            }
        };
        // On timeout the half-made connection is dropped with the future,
        // which closes its transport.
        tokio::time::timeout(self.timeout, start).await.unwrap_or_else(|_| {
            Err(Error::new(
                FailureClass::StartupTimeout,
                format!("connect and handshake did not finish within {:?}", self.timeout),
            ))
        })
    }
}
