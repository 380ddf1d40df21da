-- session.lua: remembers what the current session works on.
-- An editor or client hook sends `memory_event {event = "file_opened", data = {file = …}}`;
-- with a session, the memory lasts as long as that session.
moss.on("file_opened", function(ev)
  if ev and ev.file then
    store("Working on " .. ev.file, {context = ev.file, weight = 0.5})
  end
end)
