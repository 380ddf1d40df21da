-- git.lua: learns from the project's git history. Fix commits become memories attached to
-- the files they touched.
if not git.is_repo() then
  return
end
for commit in git.log({limit = 100}) do
  if commit.message:lower():match("fix") then
    store(commit.message, {
      context = commit.files,
      weight = 0.7,
    })
  end
end
