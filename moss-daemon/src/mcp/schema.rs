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
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
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
}
