//! Input schemas of MCP tools, generated from the request types of `moss-client`.

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde_json::Value;

/// The JSON Schema of a request type, with subschemas inlined (some clients do not follow $ref).
pub fn schema_of<T: JsonSchema>() -> JsonObject {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).expect("schemas serialize");
    drop_null_types(&mut value);
    objects_for_any(&mut value);
    lean(&mut value);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        // The request type's own doc comment: the tool's description says it.
        obj.remove("description");
        obj.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// A field of any JSON value (e.g. `meta`) has the schema `true`, which JSON Schema allows but
/// MCP does not: a property's schema must be an object (the TypeScript SDK refuses the whole tool
/// list otherwise). `{}` means the same.
fn objects_for_any(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match (key.as_str(), child) {
                    ("properties", Value::Object(props)) => {
                        for p in props.values_mut() {
                            if p.is_boolean() {
                                *p = Value::Object(Default::default());
                            }
                            objects_for_any(p);
                        }
                    }
                    ("items", c) if c.is_boolean() => *c = Value::Object(Default::default()),
                    (_, c) => objects_for_any(c),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(objects_for_any),
        _ => {}
    }
}

/// Drops what a client does not need to call a tool, keeping every name, type, enum, limit and
/// `additionalProperties: false`:
///
/// - `format` (`int64`, `double`): the JSON type says it;
/// - the description of an array's items when the array has its own (the field's doc comment
///   already says what the items are);
/// - a `oneOf` whose branches are each one string constant becomes `enum` (the field's doc
///   comment says what the values mean);
/// - line breaks of doc comments, which become spaces.
fn lean(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.get("format").is_some_and(Value::is_string) {
                map.remove("format");
            }
            if map.contains_key("description")
                && let Some(Value::Object(items)) = map.get_mut("items")
            {
                items.remove("description");
            }
            if let Some(values) = map.get("oneOf").and_then(string_constants) {
                map.remove("oneOf");
                map.insert("type".into(), Value::from("string"));
                map.insert("enum".into(), Value::Array(values));
            }
            if let Some(Value::String(d)) = map.get_mut("description") {
                *d = d.replace('\n', " ");
            }
            for (key, child) in map.iter_mut() {
                match (key.as_str(), child) {
                    // Property names are no keywords: `format` may be a field.
                    ("properties", Value::Object(props)) => props.values_mut().for_each(lean),
                    (_, c) => lean(c),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(lean),
        _ => {}
    }
}

/// The values of a `oneOf` whose every branch is `{"const": <string>, "type": "string"}`
/// (with at most a description), in order; `None` for any other `oneOf`.
fn string_constants(one_of: &Value) -> Option<Vec<Value>> {
    one_of
        .as_array()?
        .iter()
        .map(|branch| {
            let b = branch.as_object()?;
            let only_const = b
                .keys()
                .all(|k| matches!(k.as_str(), "const" | "type" | "description"));
            let is_string = b.get("type").is_none_or(|t| t == "string");
            match b.get("const") {
                Some(c @ Value::String(_)) if only_const && is_string => Some(c.clone()),
                _ => None,
            }
        })
        .collect()
}

/// Optional fields are simply not required: `"type": ["string", "null"]` becomes `"string"`
/// and `anyOf: [X, {"type": "null"}]` becomes `X`. Some MCP clients reject null in type arrays,
/// and omitting a field is how a client leaves it unset (an explicit null is still accepted).
fn drop_null_types(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(any)) = map.get("anyOf") {
                let rest: Vec<Value> = any
                    .iter()
                    .filter(|s| s.get("type") != Some(&Value::from("null")))
                    .cloned()
                    .collect();
                if rest.len() == 1 && rest.len() < any.len() {
                    map.remove("anyOf");
                    if let Value::Object(inner) = rest.into_iter().next().expect("one") {
                        for (k, val) in inner {
                            map.entry(k).or_insert(val);
                        }
                    }
                }
            }
            for child in map.values_mut() {
                drop_null_types(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_types),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every property schema of every tool, at any depth, is an object (MCP requires it).
    #[test]
    fn property_schemas_are_objects() {
        fn check(tool: &str, v: &Value, path: &str) {
            match v {
                Value::Object(map) => {
                    for (k, child) in map {
                        if k == "properties" {
                            for (name, p) in child.as_object().expect("properties is an object") {
                                assert!(p.is_object(), "{tool}: {path}.{name} is {p}");
                            }
                        }
                        check(tool, child, &format!("{path}.{k}"));
                    }
                }
                Value::Array(items) => items.iter().for_each(|i| check(tool, i, path)),
                _ => {}
            }
        }
        for (_, t) in crate::family::tools() {
            check(t.name, &Value::Object((*(t.schema)()).clone()), "");
        }
    }

    /// No `format`, no root description, enums of string constants, items described once;
    /// names, types, limits and `additionalProperties: false` kept.
    #[test]
    fn schemas_carry_no_bulk_a_client_does_not_need() {
        #[derive(schemars::JsonSchema, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        /// Arguments of a tool.
        struct Req {
            /// How many, 1-10.
            #[schemars(range(min = 1, max = 10))]
            limit: Option<i64>,
            /// What to do: `a` or `b`.
            mode: Option<Mode>,
            /// The parts.
            parts: Vec<Part>,
            /// A field named like a keyword.
            format: String,
        }
        #[derive(schemars::JsonSchema, serde::Deserialize)]
        #[serde(rename_all = "lowercase")]
        #[allow(dead_code)]
        enum Mode {
            /// The first.
            A,
            /// The second.
            B,
        }
        #[derive(schemars::JsonSchema, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        /// One part, described at length.
        struct Part {
            /// Its text.
            text: String,
        }
        let s = Value::Object(schema_of::<Req>());
        let text = s.to_string();
        assert!(
            !text.contains("int64") && !text.contains("\"$schema\""),
            "{s}"
        );
        assert_eq!(s.get("description"), None, "{s}");
        let p = &s["properties"];
        assert_eq!(p["limit"]["type"], "integer", "{s}");
        assert_eq!(
            (&p["limit"]["minimum"], &p["limit"]["maximum"]),
            (&1.into(), &10.into())
        );
        assert_eq!(p["mode"]["enum"], serde_json::json!(["a", "b"]), "{s}");
        assert_eq!(p["mode"]["type"], "string", "{s}");
        assert_eq!(p["mode"].get("oneOf"), None, "{s}");
        assert_eq!(p["parts"]["items"].get("description"), None, "{s}");
        assert_eq!(p["parts"]["items"]["additionalProperties"], false, "{s}");
        assert_eq!(
            p["parts"]["items"]["properties"]["text"]["description"],
            "Its text."
        );
        assert_eq!(
            p["format"]["type"], "string",
            "a property named format stays: {s}"
        );
        assert_eq!(s["additionalProperties"], false, "{s}");
    }
}
