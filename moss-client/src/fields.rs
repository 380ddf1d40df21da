//! Request field groups, written once.
//!
//! Many requests share a run of fields with the same names, types, serde attributes and docs:
//! the output caps of every bounded read, the paging of every list-like read, the run a capsule
//! belongs to, how a capsule or a reasoning document is addressed, the step a task mutation
//! applies to. `#[serde(flatten)]` cannot carry them: it does not combine with
//! `deny_unknown_fields` (which every request needs, so a misspelt argument is an error), and it
//! changes the JSON Schema agents read. [`wire_struct!`] instead writes the group's fields into
//! the struct itself, where the group is named, so the struct, its serde behaviour and its
//! schema are exactly those of the struct written out by hand.
//!
//! ```text
//! crate::fields::wire_struct! {
//!     /// `branchmind_log`: a branch's entries across all its documents, newest first.
//!     #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
//!     #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
//!     #[serde(deny_unknown_fields)]
//!     pub struct LogRequest {
//!         pub workspace: String,
//!         /// Only this kind.
//!         #[serde(default, skip_serializing_if = "Option::is_none")]
//!         pub kind: Option<String>,
//!         ..page(limit: "1-200 (default 20)."),
//!         ..caps,
//!     }
//! }
//! ```
//!
//! expands to the struct with its attributes as given and, in place of `..page(…)` and
//! `..caps`, the fields `cursor` and `limit` (with that doc) and `max_chars`, `max_bytes`,
//! `max_lines`, each `#[serde(default, skip_serializing_if = "Option::is_none")]`.
//!
//! Every entry ends with a comma: a field (`name: Type,`, with its attributes and docs) or a
//! group. The groups, each field `Option<_>` and absent when `None`:
//!
//! | group | fields | optional docs |
//! | --- | --- | --- |
//! | `..caps` | `max_chars`, `max_bytes`, `max_lines`: `i64` | `(max_chars: "…")` |
//! | `..page(limit: "…")` | `cursor`, `limit`: `i64` | `(cursor: "…", limit: "…")` |
//! | `..run(T)` | `run_id`: `T`, `phase`, `role`: `String` | `(T, run_id: "…", phase: "…", role: "…")` |
//! | `..capsule_filter` | `workspace`, `tag`, `name_prefix`: `String`, then `..run(RunIds)` | |
//! | `..capsule_ref` | `id`, `workspace`, `name`: `String` | `(id: "…", workspace: "…", name: "…")` |
//! | `..doc_ref(doc, …)` | `target`, `branch`, then each document field named: `String` | |
//!
//! A doc given to a group becomes that field's doc comment (and its schema description); the
//! docs of `..run` may each be left out.
//! `..step` is the step a task mutation applies to: `task: String` (required), then `step_id`
//! and `path`, both `Option<String>`.

/// Declares a struct whose body may name field groups; see the [module docs](self).
macro_rules! wire_struct {
    (
        $(#[$($attr:tt)*])*
        $vis:vis struct $name:ident { $($body:tt)* }
    ) => {
        $crate::fields::wire_struct!(@fields [$(#[$($attr)*])* $vis struct $name] [] $($body)*);
    };

    // Every entry read: the struct.
    (@fields [$($head:tt)*] [$($field:tt)*]) => {
        $($head)* { $($field)* }
    };

    // The output caps of a bounded read.
    (@fields $head:tt [$($field:tt)*]
        ..caps $((max_chars: $chars:tt))?, $($rest:tt)*
    ) => {
        $crate::fields::wire_struct!(@fields $head [$($field)*
            $(#[doc = $chars])?
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub max_chars: Option<i64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub max_bytes: Option<i64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub max_lines: Option<i64>,
        ] $($rest)*);
    };

    // The paging of a list-like read.
    (@fields $head:tt [$($field:tt)*]
        ..page($(cursor: $cursor:tt,)? limit: $limit:tt), $($rest:tt)*
    ) => {
        $crate::fields::wire_struct!(@fields $head [$($field)*
            $(#[doc = $cursor])?
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cursor: Option<i64>,
            #[doc = $limit]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub limit: Option<i64>,
        ] $($rest)*);
    };

    // The run a capsule belongs to: `T` is `String` on a capsule, `RunIds` in a filter.
    (@fields $head:tt [$($field:tt)*]
        ..run($run:ty $(, run_id: $run_doc:tt)? $(, phase: $phase_doc:tt)? $(, role: $role_doc:tt)? $(,)?),
        $($rest:tt)*
    ) => {
        $crate::fields::wire_struct!(@fields $head [$($field)*
            $(#[doc = $run_doc])?
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub run_id: Option<$run>,
            $(#[doc = $phase_doc])?
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub phase: Option<String>,
            $(#[doc = $role_doc])?
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub role: Option<String>,
        ] $($rest)*);
    };

    // The filter of the operations over many capsules: workspace, tag, name prefix and run
    // (`RunIds` must be in scope where it is used, as for any type a field names).
    (@fields $head:tt [$($field:tt)*]
        ..capsule_filter, $($rest:tt)*
    ) => {
        $crate::fields::wire_struct!(@fields $head [$($field)*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub workspace: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub tag: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub name_prefix: Option<String>,
        ] ..run(RunIds), $($rest)*);
    };

    // A capsule by `id`, or by `workspace` + `name`.
    (@fields $head:tt [$($field:tt)*]
        ..capsule_ref $((id: $id_doc:tt, workspace: $ws_doc:tt, name: $name_doc:tt $(,)?))?,
        $($rest:tt)*
    ) => {
        $crate::fields::wire_struct!(@fields $head [$($field)*
            $(#[doc = $id_doc])?
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub id: Option<String>,
            $(#[doc = $ws_doc])?
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub workspace: Option<String>,
            $(#[doc = $name_doc])?
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub name: Option<String>,
        ] $($rest)*);
    };

    // Where a reasoning read or write goes: a target (with its branch), or documents on a
    // branch. The document fields are named: `doc`, or a card's `trace_doc` and `graph_doc`.
    (@fields $head:tt [$($field:tt)*]
        ..doc_ref($($doc:ident),*), $($rest:tt)*
    ) => {
        $crate::fields::wire_struct!(@fields $head [$($field)*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub target: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub branch: Option<String>,
            $(
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $doc: Option<String>,
            )*
        ] $($rest)*);
    };

    // The step of a task a mutation applies to: by id or by path.
    (@fields $head:tt [$($field:tt)*]
        ..step, $($rest:tt)*
    ) => {
        $crate::fields::wire_struct!(@fields $head [$($field)*
            pub task: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub step_id: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub path: Option<String>,
        ] $($rest)*);
    };

    // A field written out.
    (@fields $head:tt [$($field:tt)*]
        $(#[$($fattr:tt)*])* $fvis:vis $fname:ident: $fty:ty, $($rest:tt)*
    ) => {
        $crate::fields::wire_struct!(@fields $head [$($field)*
            $(#[$($fattr)*])* $fvis $fname: $fty,
        ] $($rest)*);
    };

    (@fields $head:tt [$($field:tt)*] $($rest:tt)*) => {
        compile_error!(concat!(
            "wire_struct!: expected a field (`name: Type,`) or a group (`..caps,`, ",
            "`..page(limit: \"…\"),`, `..run(T),`, `..capsule_filter,`, `..capsule_ref,`, `..doc_ref(doc),`, `..step,`), ",
            "each ending with a comma, at: ",
            stringify!($($rest)*)
        ));
    };
}

pub(crate) use wire_struct;

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use crate::capsule::RunIds;

    wire_struct! {
        /// A request.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(deny_unknown_fields)]
        struct Grouped {
            workspace: String,
            ..run(RunIds),
            ..page(cursor: "Below this.", limit: "1-200."),
            /// Only this kind.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            kind: Option<String>,
            ..caps(max_chars: "The cap."),
        }
    }

    /// A request.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[serde(deny_unknown_fields)]
    struct Written {
        workspace: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_id: Option<RunIds>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        /// Below this.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<i64>,
        /// 1-200.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<i64>,
        /// Only this kind.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
        /// The cap.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_chars: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_bytes: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_lines: Option<i64>,
    }

    #[test]
    fn a_grouped_struct_reads_and_writes_as_the_one_written_out() {
        let full = serde_json::json!({
            "workspace": "w", "run_id": "r1,r2", "phase": "p", "role": "r", "cursor": 9,
            "limit": 5, "kind": "k", "max_chars": 100, "max_bytes": 200, "max_lines": 3,
        });
        let grouped: Grouped = serde_json::from_value(full.clone()).unwrap();
        let written: Written = serde_json::from_value(full.clone()).unwrap();
        assert_eq!(serde_json::to_value(&grouped).unwrap(), full);
        assert_eq!(serde_json::to_value(&written).unwrap(), full);

        let bare = serde_json::json!({"workspace": "w"});
        let grouped: Grouped = serde_json::from_value(bare.clone()).unwrap();
        assert_eq!(grouped.max_lines, None);
        assert_eq!(serde_json::to_value(&grouped).unwrap(), bare);

        // The error lists the expected fields in order: the same names, in the same places.
        let typo = serde_json::json!({"workspace": "w", "max_char": 1});
        let grouped = serde_json::from_value::<Grouped>(typo.clone()).unwrap_err();
        let written = serde_json::from_value::<Written>(typo).unwrap_err();
        assert!(
            grouped.to_string().contains("unknown field `max_char`"),
            "{grouped}"
        );
        assert_eq!(grouped.to_string(), written.to_string());
    }

    #[cfg(feature = "schema")]
    #[test]
    fn a_grouped_struct_has_the_schema_of_the_one_written_out() {
        let schema = |mut s: serde_json::Value| {
            s.as_object_mut().unwrap().remove("title");
            s
        };
        let grouped = schema(schemars::schema_for!(Grouped).to_value());
        let written = schema(schemars::schema_for!(Written).to_value());
        assert_eq!(grouped, written);
        assert_eq!(grouped["properties"]["limit"]["description"], "1-200.");
        // Same properties in the same order.
        let names = |s: &serde_json::Value| -> Vec<String> {
            s["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(names(&grouped), names(&written));
    }
}
