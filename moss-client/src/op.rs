//! Operations, declared once per family.
//!
//! Each family's wire module holds one `ops!` table: for every operation its
//! tool name, HTTP method and path, request and response types, the client method's name, and
//! the description agents read (the entry's doc comment). From that table come:
//!
//! - a zero-sized type per operation implementing [`Op`] (`tasks::TasksCreate`), from which the
//!   daemon builds the MCP tool and, for the `POST /<family>/<op>` families, the documented REST
//!   route;
//! - the family's list of [`OpSpec`]s (`tasks::OPS`), which the CLI and the tests walk;
//! - the client handle's method (`client.tasks().create(&req)`), sent by [`Op::SPEC`]'s method
//!   and path. An entry marked `manual` has a hand-written method instead (a capsule addressed
//!   by id or by name picks its route from the request); the table checks that it exists.
//!
//! A new operation is one table entry, its wire types and its domain function.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The HTTP method an operation is served with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
}

impl Method {
    /// The method's name as HTTP writes it (`POST`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// What the table says of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpSpec {
    /// The MCP tool's name, which is also the REST operation id (`tasks_create`).
    pub tool: &'static str,
    pub method: Method,
    /// The REST path (`/tasks/create`); a resource-shaped operation's main path.
    pub path: &'static str,
    /// The description agents read: what it does, its limits, its errors.
    pub doc: &'static str,
    /// The client handle's method (`create` for `client.tasks().create`).
    pub client_method: &'static str,
}

impl OpSpec {
    /// The description's first sentence: a one-line summary.
    pub fn summary(&self) -> &'static str {
        first_sentence(self.doc)
    }
}

/// The text up to the first ". " that ends a sentence (not "e.g. "), without the period.
fn first_sentence(text: &str) -> &str {
    let mut from = 0;
    while let Some(at) = text[from..].find(". ") {
        let end = from + at;
        if !["e.g", "i.e", "etc"]
            .iter()
            .any(|a| text[..end].ends_with(a))
        {
            return &text[..end];
        }
        from = end + 2;
    }
    text.trim_end_matches('.')
}

/// One operation: where it is served and what it takes and answers.
pub trait Op {
    const SPEC: OpSpec;
    type Request: Serialize + DeserializeOwned + Send + Sync + 'static;
    type Response: Serialize + DeserializeOwned + Send + 'static;
}

/// Joins a doc comment's lines into one paragraph (`///` lines start with a space).
#[doc(hidden)]
pub const fn doc_text(joined: &'static str) -> &'static str {
    joined.trim_ascii()
}

/// Declares a family's operations. Each entry:
///
/// ```text
/// /// The description agents read (may span lines; they join into one paragraph).
/// TypeName: tool_name, Post "/family/op", Request => Response, client_method;
/// ```
///
/// followed by `(manual)` before the `;` when the client method is written by hand.
macro_rules! ops {
    (
        $(#[$table_meta:meta])*
        table $table:ident, handle $handle:ident;
        $(
            $(#[doc = $doc:literal])*
            $op:ident: $tool:ident, $method:ident $path:literal, $req:ty => $resp:ty, $fname:ident $(($manual:ident))?;
        )*
    ) => {
        $(
            #[doc = concat!("`", stringify!($tool), "`: `", stringify!($method), " ", $path, "`, description:")]
            #[doc = "```text"]
            $(#[doc = $doc])*
            #[doc = "```"]
            #[derive(Debug, Clone, Copy)]
            pub struct $op;

            impl $crate::op::Op for $op {
                const SPEC: $crate::op::OpSpec = $crate::op::OpSpec {
                    tool: stringify!($tool),
                    method: $crate::op::Method::$method,
                    path: $path,
                    doc: $crate::op::doc_text(concat!($($doc),*)),
                    client_method: stringify!($fname),
                };
                type Request = $req;
                type Response = $resp;
            }
        )*

        $(#[$table_meta])*
        pub const $table: &[$crate::op::OpSpec] = &[$(<$op as $crate::op::Op>::SPEC),*];

        #[cfg(feature = "http")]
        impl $crate::client::$handle<'_> {
            $(
                $crate::op::ops!(@method $handle $op $tool $fname $req => $resp $(, $manual)?);
            )*
        }

        $(
            $crate::op::ops!(@check $handle $fname $(, $manual)?);
        )*
    };
    (@method $handle:ident $op:ident $tool:ident $fname:ident $req:ty => $resp:ty) => {
        #[doc = concat!("`", stringify!($tool), "`: see [`", stringify!($op), "`].")]
        pub async fn $fname(&self, req: &$req) -> Result<$resp, $crate::ClientError> {
            self.client.call::<$op>(req).await
        }
    };
    // Written by hand in the client module.
    (@method $handle:ident $op:ident $tool:ident $fname:ident $req:ty => $resp:ty, manual) => {};
    (@check $handle:ident $fname:ident) => {};
    // Naming the hand-written method fails the build if it is missing.
    (@check $handle:ident $fname:ident, manual) => {
        #[cfg(feature = "http")]
        const _: () = {
            let _ = $crate::client::$handle::$fname;
        };
    };
}

pub(crate) use ops;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_is_the_first_sentence() {
        let spec = |doc| OpSpec {
            tool: "t",
            method: Method::Post,
            path: "/t",
            doc,
            client_method: "t",
        };
        assert_eq!(
            spec("Store a capsule: a handoff. More.").summary(),
            "Store a capsule: a handoff"
        );
        assert_eq!(spec("One line.").summary(), "One line");
        assert_eq!(spec("e.g. x").summary(), "e.g. x");
        assert_eq!(
            spec("Filter (e.g. a run). Then").summary(),
            "Filter (e.g. a run)"
        );
    }
}
