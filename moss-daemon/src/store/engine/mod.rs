//! The storage engine boundary: what family code asks of a database, the same for SQLite (the
//! embedded default) and PostgreSQL (several daemons on one database).
//!
//! A statement is written once, with SQLite's numbered placeholders (`?1`); on PostgreSQL it is
//! rewritten to `$1` ([`placeholders`]) and kept prepared per connection, as SQLite's statement
//! cache keeps it. Where the dialects differ (full-text search, JSON functions, upserts that
//! name SQLite's `OR IGNORE`), the caller picks the text by [`Db::engine`]. Values cross the
//! boundary as [`Param`] (bound) and [`ValueRef`] (read), with SQLite's five storage classes:
//! both engines' columns are declared so that these hold them (`BIGINT` for integers and flags,
//! `DOUBLE PRECISION`, `TEXT`, `BYTEA`).
//!
//! Errors keep the engine's own ([`DbError`]) and say what kind of failure they are
//! ([`DbErrorKind`]), so a family tells a unique-key conflict or a full disk apart without
//! knowing the engine.

pub mod listener;
pub mod placeholders;
pub mod postgres;
pub mod queues;
pub mod search;
pub mod tsquery;

use std::fmt;

use crate::error::Error;

/// Which engine a connection belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    /// The engine's name, as configuration and messages spell it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }
}

/// A value bound to a statement's placeholder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Param<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Param::Int(v)
    }
}

impl From<i32> for Param<'_> {
    fn from(v: i32) -> Self {
        Param::Int(v.into())
    }
}

impl From<u32> for Param<'_> {
    fn from(v: u32) -> Self {
        Param::Int(v.into())
    }
}

impl From<u64> for Param<'_> {
    fn from(v: u64) -> Self {
        Param::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Param<'_> {
    fn from(v: usize) -> Self {
        Param::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Param<'_> {
    fn from(v: bool) -> Self {
        Param::Int(v.into())
    }
}

impl From<f64> for Param<'_> {
    fn from(v: f64) -> Self {
        Param::Real(v)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(v: &'a str) -> Self {
        Param::Text(v)
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(v: &'a String) -> Self {
        Param::Text(v)
    }
}

impl<'a> From<&'a [u8]> for Param<'a> {
    fn from(v: &'a [u8]) -> Self {
        Param::Blob(v)
    }
}

impl<'a, T: Into<Param<'a>>> From<Option<T>> for Param<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Param::Null, Into::into)
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef as Sq};
        Ok(ToSqlOutput::Borrowed(match *self {
            Param::Null => Sq::Null,
            Param::Int(v) => Sq::Integer(v),
            Param::Real(v) => Sq::Real(v),
            Param::Text(v) => Sq::Text(v.as_bytes()),
            Param::Blob(v) => Sq::Blob(v),
        }))
    }
}

/// An owned value, for parameters gathered before the statement runs (a filter built term by
/// term); bound through [`Value::param`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub fn param(&self) -> Param<'_> {
        match self {
            Value::Null => Param::Null,
            Value::Int(v) => Param::Int(*v),
            Value::Real(v) => Param::Real(*v),
            Value::Text(v) => Param::Text(v),
            Value::Blob(v) => Param::Blob(v),
        }
    }

    /// `values` as the parameters of a statement.
    pub fn params(values: &[Value]) -> Vec<Param<'_>> {
        values.iter().map(Value::param).collect()
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Int(v.into())
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_owned())
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<rusqlite::types::Value> for Value {
    fn from(v: rusqlite::types::Value) -> Self {
        use rusqlite::types::Value as Sq;
        match v {
            Sq::Null => Value::Null,
            Sq::Integer(v) => Value::Int(v),
            Sq::Real(v) => Value::Real(v),
            Sq::Text(v) => Value::Text(v),
            Sq::Blob(v) => Value::Blob(v),
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef as Sq};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => Sq::Null,
            Value::Int(v) => Sq::Integer(*v),
            Value::Real(v) => Sq::Real(*v),
            Value::Text(v) => Sq::Text(v.as_bytes()),
            Value::Blob(v) => Sq::Blob(v),
        }))
    }
}

impl<'a> From<&'a Value> for Param<'a> {
    fn from(v: &'a Value) -> Self {
        v.param()
    }
}

/// The parameters of one statement: `db_params![a, b]` turns each into a [`Param`].
#[macro_export]
macro_rules! db_params {
    () => { &[] as &[$crate::store::engine::Param<'_>] };
    ($($p:expr),+ $(,)?) => { &[$($crate::store::engine::Param::from($p)),+] as &[_] };
}

/// A value read from a row, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRef<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

impl ValueRef<'_> {
    fn kind(&self) -> &'static str {
        match self {
            ValueRef::Null => "NULL",
            ValueRef::Int(_) => "an integer",
            ValueRef::Real(_) => "a real",
            ValueRef::Text(_) => "a text",
            ValueRef::Blob(_) => "a blob",
        }
    }
}

/// A Rust type a column's value is read into.
pub trait FromValue: Sized {
    fn from_value(v: ValueRef<'_>) -> Option<Self>;
    /// What the type is, for the error when a value does not fit.
    const WHAT: &'static str;
}

impl FromValue for i64 {
    const WHAT: &'static str = "an integer";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        match v {
            ValueRef::Int(v) => Some(v),
            _ => None,
        }
    }
}

impl FromValue for u32 {
    const WHAT: &'static str = "an integer from 0 to 4294967295";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        i64::from_value(v).and_then(|v| u32::try_from(v).ok())
    }
}

impl FromValue for i32 {
    const WHAT: &'static str = "a 32-bit integer";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        i64::from_value(v).and_then(|v| i32::try_from(v).ok())
    }
}

impl FromValue for u64 {
    const WHAT: &'static str = "a non-negative integer";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        i64::from_value(v).and_then(|v| u64::try_from(v).ok())
    }
}

impl FromValue for usize {
    const WHAT: &'static str = "a non-negative integer";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        i64::from_value(v).and_then(|v| usize::try_from(v).ok())
    }
}

impl FromValue for Value {
    const WHAT: &'static str = "a value";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        Some(match v {
            ValueRef::Null => Value::Null,
            ValueRef::Int(v) => Value::Int(v),
            ValueRef::Real(v) => Value::Real(v),
            ValueRef::Text(v) => Value::Text(v.to_owned()),
            ValueRef::Blob(v) => Value::Blob(v.to_vec()),
        })
    }
}

impl FromValue for bool {
    const WHAT: &'static str = "a flag (an integer)";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        i64::from_value(v).map(|v| v != 0)
    }
}

impl FromValue for f64 {
    const WHAT: &'static str = "a number";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        match v {
            ValueRef::Real(v) => Some(v),
            ValueRef::Int(v) => Some(v as f64),
            _ => None,
        }
    }
}

impl FromValue for String {
    const WHAT: &'static str = "a text";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        match v {
            ValueRef::Text(v) => Some(v.to_owned()),
            _ => None,
        }
    }
}

impl FromValue for Vec<u8> {
    const WHAT: &'static str = "a blob";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        match v {
            ValueRef::Blob(v) => Some(v.to_vec()),
            _ => None,
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    const WHAT: &'static str = T::WHAT;
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        match v {
            ValueRef::Null => Some(None),
            v => T::from_value(v).map(Some),
        }
    }
}

/// One row of a result, from either engine.
pub enum Row<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Postgres(&'r ::postgres::Row),
}

impl Row<'_> {
    /// Column `i` (from 0) as a `T`; a value that does not fit is an error naming the column.
    pub fn get<T: FromValue>(&self, i: usize) -> Result<T, DbError> {
        let value = match self {
            Row::Sqlite(row) => row.get_ref(i).map(|v| match v {
                rusqlite::types::ValueRef::Null => Ok(ValueRef::Null),
                rusqlite::types::ValueRef::Integer(v) => Ok(ValueRef::Int(v)),
                rusqlite::types::ValueRef::Real(v) => Ok(ValueRef::Real(v)),
                rusqlite::types::ValueRef::Text(v) => std::str::from_utf8(v)
                    .map(ValueRef::Text)
                    .map_err(|_| "a text that is not UTF-8".to_string()),
                rusqlite::types::ValueRef::Blob(v) => Ok(ValueRef::Blob(v)),
            })?,
            Row::Postgres(row) => postgres::value(row, i),
        };
        let value = value.map_err(|why| DbError::Decode {
            column: i,
            why: why.to_string(),
        })?;
        T::from_value(value).ok_or_else(|| DbError::Decode {
            column: i,
            why: format!("{} where {} was expected", value.kind(), T::WHAT),
        })
    }
}

/// Why a statement failed, in the engine's own words.
#[derive(Debug)]
pub enum DbError {
    Sqlite(rusqlite::Error),
    Postgres(::postgres::Error),
    /// A column's value is not what the caller reads it as.
    Decode {
        column: usize,
        why: String,
    },
    /// A query that must return a row returned none.
    NoRow,
}

/// What kind of failure a [`DbError`] is, whatever the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbErrorKind {
    /// A unique key (or primary key) already holds the value.
    UniqueViolation,
    /// A foreign key points nowhere.
    ForeignKeyViolation,
    /// The disk or quota is full.
    DiskFull,
    /// A transaction lost a race with another and may be retried.
    Conflict,
    /// The connection to the database is gone.
    ConnectionLost,
    Other,
}

impl DbError {
    pub fn kind(&self) -> DbErrorKind {
        match self {
            DbError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => match f.extended_code {
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => DbErrorKind::UniqueViolation,
                rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => DbErrorKind::ForeignKeyViolation,
                _ if f.code == rusqlite::ErrorCode::DiskFull => DbErrorKind::DiskFull,
                _ if f.code == rusqlite::ErrorCode::DatabaseBusy => DbErrorKind::Conflict,
                _ => DbErrorKind::Other,
            },
            DbError::Postgres(e) => postgres::kind(e),
            _ => DbErrorKind::Other,
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Sqlite(e) => e.fmt(f),
            DbError::Postgres(e) => match e.as_db_error() {
                // The server's own message, with its detail: the bare Display says only "db error".
                Some(db) => match db.detail() {
                    Some(detail) => write!(f, "{}: {detail}", db.message()),
                    None => f.write_str(db.message()),
                },
                // A client-side failure (a value that does not fit, a lost connection): its
                // cause is in the source.
                None => match std::error::Error::source(e) {
                    Some(cause) => write!(f, "{e}: {cause}"),
                    None => e.fmt(f),
                },
            },
            DbError::Decode { column, why } => write!(f, "column {column} holds {why}"),
            DbError::NoRow => f.write_str("the query returned no row"),
        }
    }
}

impl std::error::Error for DbError {}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        match e {
            rusqlite::Error::QueryReturnedNoRows => DbError::NoRow,
            e => DbError::Sqlite(e),
        }
    }
}

impl From<::postgres::Error> for DbError {
    fn from(e: ::postgres::Error) -> Self {
        DbError::Postgres(e)
    }
}

impl From<DbError> for Error {
    fn from(e: DbError) -> Self {
        match e.kind() {
            DbErrorKind::DiskFull => Error::storage_full("writing to the database", e),
            DbErrorKind::ConnectionLost => Error::new(
                moss_client::ErrorCode::Unavailable,
                format!("the database connection was lost ({e}); retry in a moment"),
            ),
            _ => Error::internal("accessing the database", e),
        }
    }
}

/// A connection of either engine, as a family's code uses it: statements with placeholders,
/// rows read through [`Row::get`].
#[derive(Clone, Copy)]
pub enum Db<'c> {
    Sqlite(&'c rusqlite::Connection),
    Postgres(&'c postgres::PgConn),
}

impl Db<'_> {
    pub fn engine(&self) -> Engine {
        match self {
            Db::Sqlite(_) => Engine::Sqlite,
            Db::Postgres(_) => Engine::Postgres,
        }
    }

    /// Runs one statement; returns how many rows it changed.
    pub fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<u64, DbError> {
        match self {
            Db::Sqlite(conn) => {
                Ok(conn.prepare_cached(sql)?.execute(params_sqlite(params))? as u64)
            }
            Db::Postgres(conn) => conn.execute(sql, params),
        }
    }

    /// The first row of a query mapped by `f`, or `None` when it returns none.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: impl FnOnce(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<Option<T>, DbError> {
        match self {
            Db::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let mut rows = stmt.query(params_sqlite(params))?;
                match rows.next()? {
                    Some(row) => f(&Row::Sqlite(row)).map(Some),
                    None => Ok(None),
                }
            }
            Db::Postgres(conn) => match conn.query(sql, params)?.first() {
                Some(row) => f(&Row::Postgres(row)).map(Some),
                None => Ok(None),
            },
        }
    }

    /// The first row of a query mapped by `f`; no row is [`DbError::NoRow`].
    pub fn query_one<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: impl FnOnce(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        self.query_opt(sql, params, f)?.ok_or(DbError::NoRow)
    }

    /// Every row of a query, each mapped by `f`.
    pub fn query_map<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        mut f: impl FnMut(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<Vec<T>, DbError> {
        match self {
            Db::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let mut rows = stmt.query(params_sqlite(params))?;
                let mut out = Vec::new();
                while let Some(row) = rows.next()? {
                    out.push(f(&Row::Sqlite(row))?);
                }
                Ok(out)
            }
            Db::Postgres(conn) => conn
                .query(sql, params)?
                .iter()
                .map(|row| f(&Row::Postgres(row)))
                .collect(),
        }
    }

    /// Every row of a query, each handed to `f` as it arrives (not gathered first: for scans
    /// of a whole table); `f` returns whether to go on.
    pub fn query_each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        mut f: impl FnMut(&Row<'_>) -> Result<bool, DbError>,
    ) -> Result<(), DbError> {
        match self {
            Db::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let mut rows = stmt.query(params_sqlite(params))?;
                while let Some(row) = rows.next()? {
                    if !f(&Row::Sqlite(row))? {
                        break;
                    }
                }
                Ok(())
            }
            Db::Postgres(conn) => conn.query_each(sql, params, |row| f(&Row::Postgres(row))),
        }
    }

    /// Runs statements separated by `;`, without parameters (schema changes, transaction
    /// control).
    pub fn batch(&self, sql: &str) -> Result<(), DbError> {
        match self {
            Db::Sqlite(conn) => Ok(conn.execute_batch(sql)?),
            Db::Postgres(conn) => conn.batch(sql),
        }
    }
}

fn params_sqlite<'p>(params: &'p [Param<'p>]) -> rusqlite::ParamsFromIter<&'p [Param<'p>]> {
    rusqlite::params_from_iter(params)
}

#[cfg(test)]
mod tests;
