-- Argo CD health check for observatory.dev/ObservabilityService. Install it under
-- resource.customizations.health.observatory.dev_ObservabilityService in argocd-cm (see README.md).
-- It reads the kstatus conditions the operator writes, as kstatus itself does: a status older than
-- the spec is Progressing, Stalled=True is Degraded, Ready=True is Healthy, anything else Progressing;
-- spec.paused shows as Suspended.
local hs = { status = "Progressing", message = "Waiting for the operator to report status" }
if obj.status == nil then
  return hs
end
local generation = obj.metadata.generation or 0
if obj.status.observedGeneration == nil or obj.status.observedGeneration < generation then
  hs.message = "Waiting for the operator to observe generation " .. tostring(generation)
  return hs
end
local conditions = {}
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    conditions[c.type] = c
  end
end
local function isTrue(t)
  return conditions[t] ~= nil and conditions[t].status == "True"
end
local function message(t)
  if conditions[t] == nil or conditions[t].message == nil then
    return t
  end
  return conditions[t].message
end
if isTrue("Stalled") then
  hs.status = "Degraded"
  hs.message = message("Stalled")
  return hs
end
if isTrue("Paused") then
  hs.status = "Suspended"
  hs.message = message("Paused")
  return hs
end
if isTrue("Ready") then
  hs.status = "Healthy"
  hs.message = message("Ready")
  return hs
end
if conditions["Ready"] ~= nil then
  hs.message = message("Ready")
end
return hs
