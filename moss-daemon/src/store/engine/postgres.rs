//! The PostgreSQL side of the boundary: a connection with its prepared statements, values
//! converted to and from the server's types, errors classified, and a pool manager for r2d2.

use std::cell::RefCell;
use std::collections::HashMap;
use std::error::Error as StdError;
use std::str::FromStr;
use std::time::Duration;

use bytes::BytesMut;
use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, Config, NoTls, Statement, error::SqlState};

use super::{DbError, DbErrorKind, Param, ValueRef, placeholders};
use crate::error::{Error, Result};

/// Statements a connection keeps prepared, like SQLite's statement cache: past this many, the
/// cache is emptied and fills again (statements are a few hundred distinct texts at most).
const STATEMENT_CACHE: usize = 512;

/// How long connecting may take before the daemon gives up with a message.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Parses a `postgres://` URL; the error names what is wrong with it.
pub fn config(url: &str) -> Result<Config> {
    let mut config = Config::from_str(url).map_err(|e| {
        Error::invalid_field(
            "database",
            format!(
                "{} is not a PostgreSQL URL ({e}); write it as \
                 postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
                redact(url)
            ),
        )
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("mossd");
    }
    // The server's notices ("… already exists, skipping" from the idempotent schema work) are
    // not news for the daemon's log; warnings still are.
    let options = match config.get_options() {
        Some(o) => format!("{o} -c client_min_messages=warning"),
        None => "-c client_min_messages=warning".to_string(),
    };
    config.options(&options);
    Ok(config)
}

/// `url` with its password (if any) replaced, for messages and logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((auth, host)) = rest.split_once('@') else {
        return url.to_string();
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

/// One connection to the server, with the statements it has prepared. Used from one thread at
/// a time (the writer's, or a reader's while it holds it from the pool).
pub struct PgConn {
    /// Always `Some` but while being dropped ([`Drop`] moves it off async threads).
    client: RefCell<Option<Client>>,
    statements: RefCell<HashMap<String, Statement>>,
    /// How it was opened, to open it again when the server dropped it.
    config: Config,
    /// When it last talked to the server (see [`VALIDATE_AFTER_IDLE`]).
    last_used: std::cell::Cell<std::time::Instant>,
}

/// A pooled connection idle for longer than this is tested with an empty query before a read
/// takes it; one used more recently is taken as it is. A test on every checkout cost a round
/// trip per read (fetches ran at 0.39 times SQLite's rate); a server that restarts takes longer
/// than this, so its connections are found broken and replaced before any read uses them.
pub const VALIDATE_AFTER_IDLE: std::time::Duration = std::time::Duration::from_secs(1);

impl PgConn {
    /// Connects. Callable from any thread: on one that drives async tasks (where the client's
    /// own runtime may not block) the connection is made on a short-lived thread of its own.
    pub fn connect(config: &Config) -> std::result::Result<PgConn, DbError> {
        Ok(PgConn {
            client: RefCell::new(Some(open(config)?)),
            statements: RefCell::new(HashMap::new()),
            config: config.clone(),
            last_used: std::cell::Cell::new(std::time::Instant::now()),
        })
    }

    /// Opens the connection again if the server (or the network) dropped it: a long-lived
    /// connection (the writer's, a listener's) outlives a server restart this way. Its
    /// prepared statements are prepared again as they are used.
    pub fn reconnect_if_closed(&self) -> std::result::Result<(), DbError> {
        if !self.is_closed() {
            return Ok(());
        }
        let client = open(&self.config)?;
        *self.client.borrow_mut() = Some(client);
        self.statements.borrow_mut().clear();
        Ok(())
    }

    /// The prepared statement for `sql` (written with `?N` placeholders).
    fn statement(&self, sql: &str) -> std::result::Result<Statement, DbError> {
        if let Some(stmt) = self.statements.borrow().get(sql) {
            return Ok(stmt.clone());
        }
        let stmt = self.client_mut().prepare(&placeholders::to_postgres(sql))?;
        let mut cache = self.statements.borrow_mut();
        if cache.len() >= STATEMENT_CACHE {
            cache.clear();
        }
        cache.insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }

    pub fn execute(&self, sql: &str, params: &[Param<'_>]) -> std::result::Result<u64, DbError> {
        let stmt = self.statement(sql)?;
        let refs = refs(params);
        Ok(self.client_mut().execute(&stmt, &refs)?)
    }

    pub fn query(
        &self,
        sql: &str,
        params: &[Param<'_>],
    ) -> std::result::Result<Vec<postgres::Row>, DbError> {
        let stmt = self.statement(sql)?;
        let refs = refs(params);
        Ok(self.client_mut().query(&stmt, &refs)?)
    }

    /// Rows handed to `f` as they arrive from the server; `f` returns whether to go on.
    pub fn query_each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        mut f: impl FnMut(&postgres::Row) -> std::result::Result<bool, DbError>,
    ) -> std::result::Result<(), DbError> {
        use postgres::fallible_iterator::FallibleIterator;
        let stmt = self.statement(sql)?;
        let mut client = self.client_mut();
        let mut rows = client.query_raw(&stmt, params.iter())?;
        while let Some(row) = rows.next()? {
            if !f(&row)? {
                break;
            }
        }
        Ok(())
    }

    pub fn batch(&self, sql: &str) -> std::result::Result<(), DbError> {
        Ok(self.client_mut().batch_execute(sql)?)
    }

    /// The client itself (a listener reads its notifications).
    pub fn client(&self) -> std::cell::RefMut<'_, Client> {
        self.client_mut()
    }

    fn client_mut(&self) -> std::cell::RefMut<'_, Client> {
        self.last_used.set(std::time::Instant::now());
        std::cell::RefMut::map(self.client.borrow_mut(), |c| {
            c.as_mut()
                .expect("the client is there until the connection is dropped")
        })
    }

    pub fn is_closed(&self) -> bool {
        self.client.borrow().as_ref().is_none_or(Client::is_closed)
    }
}

/// Closing a client blocks on its runtime, which a thread that drives async tasks may not do
/// (a read pool can be dropped on one): there it closes on a thread of its own.
impl Drop for PgConn {
    fn drop(&mut self) {
        if let Some(client) = self.client.get_mut().take()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            let _ = std::thread::Builder::new()
                .name("moss-pg-close".into())
                .spawn(move || drop(client));
        }
    }
}

fn open(config: &Config) -> std::result::Result<Client, DbError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(config.connect(NoTls)?);
    }
    std::thread::scope(|s| {
        s.spawn(|| config.connect(NoTls))
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
    .map_err(DbError::from)
}

fn refs<'p>(params: &'p [Param<'p>]) -> Vec<&'p (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

/// A bound value, converted to the type the server inferred for its placeholder: an integer
/// fits any integer column it is in range of (and a flag), a text any text type.
impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match *self {
            Param::Null => Ok(IsNull::Yes),
            Param::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(v)?.to_sql(ty, out),
                Type::BOOL => (v != 0).to_sql(ty, out),
                Type::FLOAT8 => (v as f64).to_sql(ty, out),
                Type::FLOAT4 => (v as f32).to_sql(ty, out),
                _ => Err(mismatch("an integer", ty)),
            },
            Param::Real(v) => match *ty {
                Type::FLOAT8 => v.to_sql(ty, out),
                Type::FLOAT4 => (v as f32).to_sql(ty, out),
                _ => Err(mismatch("a real", ty)),
            },
            Param::Text(v) => match *ty {
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    v.to_sql(ty, out)
                }
                Type::JSON | Type::JSONB => {
                    // Sent as text: JSONB's binary form is a version byte and the text.
                    if *ty == Type::JSONB {
                        out.extend_from_slice(&[1]);
                    }
                    out.extend_from_slice(v.as_bytes());
                    Ok(IsNull::No)
                }
                _ => Err(mismatch("a text", ty)),
            },
            Param::Blob(v) => match *ty {
                Type::BYTEA => v.to_sql(ty, out),
                _ => Err(mismatch("a blob", ty)),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn mismatch(what: &str, ty: &Type) -> Box<dyn StdError + Sync + Send> {
    format!("{what} cannot be bound where PostgreSQL expects {ty}").into()
}

/// A column's raw bytes, whatever its type, for [`value`].
struct Raw<'a>(&'a [u8]);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(
        _: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn StdError + Sync + Send>> {
        Ok(Raw(raw))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// Column `i` of `row` as one of SQLite's storage classes.
pub(super) fn value<'r>(
    row: &'r postgres::Row,
    i: usize,
) -> std::result::Result<ValueRef<'r>, String> {
    let ty = row
        .columns()
        .get(i)
        .ok_or_else(|| format!("nothing (the row has {} columns)", row.len()))?
        .type_()
        .clone();
    let raw: Option<Raw<'r>> = row.try_get(i).map_err(|e| e.to_string())?;
    let Some(Raw(bytes)) = raw else {
        return Ok(ValueRef::Null);
    };
    let bad = |e: Box<dyn StdError + Sync + Send>| format!("an unreadable {ty} ({e})");
    Ok(match ty {
        Type::INT8 => ValueRef::Int(i64::from_sql(&ty, bytes).map_err(bad)?),
        Type::INT4 => ValueRef::Int(i32::from_sql(&ty, bytes).map_err(bad)?.into()),
        Type::INT2 => ValueRef::Int(i16::from_sql(&ty, bytes).map_err(bad)?.into()),
        Type::BOOL => ValueRef::Int(bool::from_sql(&ty, bytes).map_err(bad)?.into()),
        Type::FLOAT8 => ValueRef::Real(f64::from_sql(&ty, bytes).map_err(bad)?),
        Type::FLOAT4 => ValueRef::Real(f32::from_sql(&ty, bytes).map_err(bad)?.into()),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::JSON | Type::UNKNOWN => {
            ValueRef::Text(<&str>::from_sql(&Type::TEXT, bytes).map_err(bad)?)
        }
        Type::JSONB => ValueRef::Text(
            std::str::from_utf8(bytes.get(1..).unwrap_or_default())
                .map_err(|e| format!("an unreadable jsonb ({e})"))?,
        ),
        Type::BYTEA => ValueRef::Blob(bytes),
        other => {
            return Err(format!(
                "a {other}, which the store does not read (cast it in the query: \
                 ::bigint, ::double precision or ::text)"
            ));
        }
    })
}

pub(super) fn kind(e: &postgres::Error) -> DbErrorKind {
    if e.is_closed() {
        return DbErrorKind::ConnectionLost;
    }
    let Some(code) = e.code() else {
        return DbErrorKind::Other;
    };
    match *code {
        SqlState::UNIQUE_VIOLATION => DbErrorKind::UniqueViolation,
        SqlState::FOREIGN_KEY_VIOLATION => DbErrorKind::ForeignKeyViolation,
        SqlState::DISK_FULL => DbErrorKind::DiskFull,
        SqlState::T_R_SERIALIZATION_FAILURE | SqlState::T_R_DEADLOCK_DETECTED => {
            DbErrorKind::Conflict
        }
        SqlState::ADMIN_SHUTDOWN
        | SqlState::CONNECTION_EXCEPTION
        | SqlState::CONNECTION_DOES_NOT_EXIST
        | SqlState::CONNECTION_FAILURE => DbErrorKind::ConnectionLost,
        _ => DbErrorKind::Other,
    }
}

/// Opens connections for an r2d2 pool of readers (or any pool of [`PgConn`]).
#[derive(Debug, Clone)]
pub struct Manager {
    config: Config,
}

impl Manager {
    pub fn new(config: Config) -> Manager {
        Manager { config }
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = PgConn;
    type Error = DbError;

    fn connect(&self) -> std::result::Result<PgConn, DbError> {
        PgConn::connect(&self.config)
    }

    fn is_valid(&self, conn: &mut PgConn) -> std::result::Result<(), DbError> {
        if conn.last_used.get().elapsed() < VALIDATE_AFTER_IDLE {
            return Ok(());
        }
        Ok(conn.client_mut().simple_query("").map(|_| ())?)
    }

    fn has_broken(&self, conn: &mut PgConn) -> bool {
        conn.is_closed()
    }
}

/// A scratch schema on the test server (`MOSS_TEST_POSTGRES`), dropped with the value.
#[cfg(test)]
pub mod testing {
    use super::*;

    pub struct Scratch {
        pub config: Config,
        admin: Config,
        schema: String,
    }

    impl Scratch {
        /// A new empty schema, made the connections' search path; `None` (a skip) outside CI
        /// when `MOSS_TEST_POSTGRES` is unset.
        pub fn new() -> Option<Scratch> {
            let url = match std::env::var("MOSS_TEST_POSTGRES")
                .ok()
                .filter(|v| !v.is_empty())
            {
                Some(url) => url,
                None if std::env::var_os("CI").is_some() => panic!(
                    "MOSS_TEST_POSTGRES must name a PostgreSQL server under CI (see .ci/run)"
                ),
                None => {
                    eprintln!("MOSS_TEST_POSTGRES is unset: skipping a PostgreSQL test");
                    return None;
                }
            };
            let admin = config(&url).expect("MOSS_TEST_POSTGRES is a PostgreSQL URL");
            let schema = format!("t_{}", ulid::Ulid::generate().to_string().to_lowercase());
            std::thread::scope(|s| {
                s.spawn(|| {
                    PgConn::connect(&admin)
                        .and_then(|c| c.batch(&format!("CREATE SCHEMA {schema}")))
                        .expect("the test server takes a new schema")
                })
                .join()
                .unwrap()
            });
            let mut config = admin.clone();
            config.options(&format!("-c search_path={schema}"));
            Some(Scratch {
                config,
                admin,
                schema,
            })
        }

        pub fn connect(&self) -> PgConn {
            PgConn::connect(&self.config).expect("connecting to the test server")
        }

        /// The scratch schema's name.
        pub fn schema(&self) -> &str {
            &self.schema
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            std::thread::scope(|s| {
                s.spawn(|| {
                    if let Ok(c) = PgConn::connect(&self.admin) {
                        let _ = c.batch(&format!("DROP SCHEMA {} CASCADE", self.schema));
                    }
                });
            });
        }
    }
}
