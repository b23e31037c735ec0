-- Argo CD health check for apps.kruise.io/SidecarSet (docs/gitops.md).
-- It reads the kstatus conditions the controller writes (src/core/status/status-conditions.ts):
--   Stalled=True -> Degraded, Reconciling=True -> Progressing, Ready=True -> Healthy,
--   Ready=False with reason Paused (updateStrategy.paused) -> Suspended.
-- Conditions written for an older generation do not count: until the controller has seen the
-- current spec, the SidecarSet is Progressing. Without the conditions (a controller older than
-- them) the status counts decide. Lua 5.1, as Argo CD's interpreter (gopher-lua).
local hs = { status = "Progressing", message = "Waiting for the controller to report a status" }
local generation = nil
if obj.metadata ~= nil then
  generation = obj.metadata.generation
end
local status = obj.status
if status == nil then
  return hs
end
if generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
  hs.message = "Waiting for the controller to observe generation " .. generation
  return hs
end

local current = {}
if status.conditions ~= nil then
  for _, c in ipairs(status.conditions) do
    if generation == nil or c.observedGeneration == nil or c.observedGeneration >= generation then
      current[c.type] = c
    end
  end
end
local function say(c)
  return c.message or c.reason or ""
end

local stalled, reconciling, ready = current["Stalled"], current["Reconciling"], current["Ready"]
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = say(stalled)
  return hs
end
if reconciling ~= nil and reconciling.status == "True" then
  hs.message = say(reconciling)
  return hs
end
if ready ~= nil then
  if ready.status == "True" then
    hs.status = "Healthy"
  elseif ready.reason == "Paused" then
    hs.status = "Suspended"
  end
  hs.message = say(ready)
  return hs
end

-- No conditions: every matched pod updated and ready is healthy, anything else in progress.
local matched = status.matchedPods or 0
local updated = status.updatedPods or 0
local updatedReady = status.updatedReadyPods or 0
hs.message = updated .. " of " .. matched .. " pods updated, " .. updatedReady .. " updated and ready"
if updated == matched and updatedReady == matched then
  hs.status = "Healthy"
end
return hs
