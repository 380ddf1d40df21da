-- toml.lua: static knowledge from .moss/memory.toml, e.g.
--   [[memory]]
--   content = "User prefers tabs"
--   context = "formatting"
--   slot = "preferences"
if not fs.exists(".moss/memory.toml") then
  return
end
local data = toml.parse(".moss/memory.toml")
for _, item in ipairs(data.memory or {}) do
  store(item.content, {
    context = item.context,
    slot = item.slot,
    weight = item.weight or 1.0,
  })
end
