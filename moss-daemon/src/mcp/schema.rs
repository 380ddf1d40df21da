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
