// Adding or changing a model profile: the first-run setup (the server starts without a model),
// "Add a profile" and "Edit" in the settings. Before anything is saved, POST /v1/profiles/test
// tries the endpoint (GET {api_url}/models, a few seconds at most) and fills a model picker from
// its list; a profile that fails the test is saved only after "Save anyway". POST /v1/profiles
// creates (then POST /v1/config/switch uses it), PATCH /v1/profiles/{name} changes only the
// fields edited: an empty key field keeps the stored key, which the page never sees.
import { h, modal, toast } from "./dom.js";

function field(label, input, hint) {
  return h("label", { class: "field" }, h("span", { class: "field-label" }, label), input, hint ? h("small", {}, hint) : null);
}

function newProfile(values) {
  const main = { api_url: values.api_url, model_name: values.model_name };
  if (values.api_key) main.api_key = values.api_key;
  const context = parseInt(values.max_context_tokens, 10);
  if (context > 0) main.max_context_tokens = context;
  return { main_model: main };
}

// The main_model keys the user changed ({} when none); a cleared context window is removed.
function changedFields(values, initial) {
  const main = {};
  for (const key of ["api_url", "model_name"]) if (values[key] !== initial[key]) main[key] = values[key];
  if (values.api_key) main.api_key = values.api_key;
  if (values.max_context_tokens !== initial.max_context_tokens) {
    const context = parseInt(values.max_context_tokens, 10);
    main.max_context_tokens = context > 0 ? context : null;
  }
  return main;
}

function keyHint(mainModel) {
  const masked = mainModel && mainModel.api_key;
  return masked ? `stored key ${masked} kept unless you type a new one` : "none stored; optional for local servers";
}

// Opens the editor for an existing profile (its file's settings, keys masked).
export async function editProfile(app, name) {
  try {
    const profile = await app.api.get(`/v1/profiles/${encodeURIComponent(name)}`);
    return openSetup(app, { edit: profile });
  } catch (error) {
    toast(error.message, "error", 6000);
    return null;
  }
}

export function openSetup(app, { firstRun = false, edit = null } = {}) {
  const stored = (edit && edit.config && edit.config.main_model) || {};
  const initial = {
    api_url: stored.api_url || "",
    model_name: stored.model_name || "",
    max_context_tokens: stored.max_context_tokens ? String(stored.max_context_tokens) : "",
  };
  const inputs = {
    name: h("input", { name: "name", required: true, value: edit ? edit.name : firstRun ? "default" : "", readonly: Boolean(edit), autocomplete: "off" }),
    api_url: h("input", { name: "api_url", required: true, type: "url", value: initial.api_url, placeholder: "http://127.0.0.1:8000/v1", autocomplete: "off" }),
    api_key: h("input", { name: "api_key", type: "password", placeholder: edit ? "unchanged" : "optional for local servers", autocomplete: "off" }),
    model_name: h("input", { name: "model_name", required: true, value: initial.model_name, placeholder: "e.g. qwen2.5-7b-instruct", autocomplete: "off" }),
    max_context_tokens: h("input", { name: "max_context_tokens", type: "number", min: "0", step: "1024", value: initial.max_context_tokens, placeholder: "auto" }),
  };
  const testButton = h("button", { type: "button", class: "btn small", title: "Ask the server for its models (GET …/models)" }, "Test connection");
  const probeLine = h("p", { class: "probe", role: "status", hidden: true });
  const picker = h("select", { name: "model_pick", class: "model-pick", "aria-label": "Models offered by the server", hidden: true });
  const overwrite = h("input", { type: "checkbox", name: "overwrite" });
  const overwriteRow = h("label", { class: "check", hidden: true }, overwrite, " Replace the existing profile of that name");
  const status = h("p", { class: "form-error", role: "alert", hidden: true });
  const anyway = h("button", { class: "btn", type: "button", hidden: true }, "Save anyway");
  const submit = h("button", { class: "btn primary", type: "submit" }, edit ? "Test and save" : "Test, save and use");
  const form = h(
    "form",
    { class: "setup-form" },
    firstRun
      ? h("p", { class: "lead" }, "No model is configured yet. Point tea-agent-mini at any OpenAI-compatible server (llama.cpp, Ollama, vLLM, a cloud API).")
      : null,
    field("Profile name", inputs.name, edit ? null : firstRun ? "“default” is used when the server starts." : "letters, digits, - _ ."),
    field("API base URL", inputs.api_url, "the model server's address, usually ending in /v1"),
    field("API key", inputs.api_key, edit ? keyHint(stored) : null),
    h("div", { class: "row probe-row" }, testButton, probeLine),
    field("Model name", inputs.model_name),
    picker,
    field("Context window (tokens)", inputs.max_context_tokens),
    overwriteRow,
    status,
    h("div", { class: "row end" }, anyway, submit),
  );
  const title = edit ? `Edit profile “${edit.name}”` : firstRun ? "Welcome — set up a model" : "Add a model profile";
  const dialog = modal(title, {});
  dialog.dialog.classList.add("setup-dialog");
  dialog.body.append(form);
  inputs[edit || firstRun ? "api_url" : "name"].focus();

  const values = () => Object.fromEntries(Object.entries(inputs).map(([k, input]) => [k, input.value.trim()]));
  const endpointOf = () => JSON.stringify([inputs.api_url.value.trim(), inputs.api_key.value.trim()]);
  let tested = null; // {endpoint, result} of the last test

  const showProbe = (result) => {
    probeLine.hidden = false;
    probeLine.className = result.ok ? "probe ok" : "probe error";
    if (!result.ok) {
      probeLine.textContent = result.error;
      picker.hidden = true;
      return;
    }
    const models = result.models || [];
    probeLine.textContent = models.length ? `Connected: ${models.length} model(s) offered.` : "Connected, but the server lists no models; type the model name.";
    picker.replaceChildren(h("option", { value: "" }, `Pick one of the ${models.length} model(s)…`), ...models.map((id) => h("option", { value: id }, id)));
    picker.hidden = models.length === 0;
    if (!inputs.model_name.value.trim() && models.length) inputs.model_name.value = models[0];
    picker.value = models.includes(inputs.model_name.value.trim()) ? inputs.model_name.value.trim() : "";
  };

  const runTest = async () => {
    const body = { api_url: inputs.api_url.value.trim() };
    const key = inputs.api_key.value.trim();
    if (key) body.api_key = key;
    else if (edit) body.profile = edit.name; // the stored key, for the stored address only
    probeLine.hidden = false;
    probeLine.className = "probe";
    probeLine.textContent = "Testing the connection…";
    const endpoint = endpointOf();
    let result;
    try {
      result = await app.api.post("/v1/profiles/test", body);
    } catch (error) {
      result = { ok: false, models: [], error: error.message };
    }
    tested = { endpoint, result };
    showProbe(result);
    return result;
  };

  const save = async () => {
    const given = values();
    status.hidden = true;
    anyway.hidden = true;
    submit.disabled = true;
    try {
      if (edit) {
        const main = changedFields(given, initial);
        if (Object.keys(main).length) {
          await app.api.patch(`/v1/profiles/${encodeURIComponent(edit.name)}`, { config: { main_model: main } });
          toast(`Saved profile “${edit.name}”`, "ok");
        }
      } else {
        await app.api.post("/v1/profiles", { name: given.name, config: newProfile(given), overwrite: overwrite.checked });
        await app.api.post("/v1/config/switch", { profile: given.name });
        toast(`Using profile “${given.name}” (${given.model_name})`, "ok");
      }
      dialog.close();
      await app.loadConfig();
    } catch (error) {
      status.textContent = error.message;
      status.hidden = false;
      if (error.status === 409 && /exists/.test(error.message)) overwriteRow.hidden = false;
    } finally {
      submit.disabled = false;
    }
  };

  testButton.addEventListener("click", async () => {
    if (!inputs.api_url.reportValidity()) return;
    testButton.disabled = true;
    try {
      await runTest();
    } finally {
      testButton.disabled = false;
    }
  });
  // a change answers what the last save attempt said
  const changed = () => {
    anyway.hidden = true;
    status.hidden = true;
  };
  picker.addEventListener("change", () => {
    if (picker.value) inputs.model_name.value = picker.value;
    changed();
  });
  for (const input of [inputs.api_url, inputs.api_key, inputs.model_name]) input.addEventListener("input", changed);
  anyway.addEventListener("click", save);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.hidden = true;
    anyway.hidden = true;
    submit.disabled = true;
    let result;
    try {
      result = tested && tested.endpoint === endpointOf() ? tested.result : await runTest();
    } finally {
      submit.disabled = false;
    }
    const model = inputs.model_name.value.trim();
    const models = result.models || [];
    let problem = null;
    if (!result.ok) problem = "The connection test failed (see above)."; // the reason is shown there
    else if (models.length && !models.includes(model)) problem = `The server does not offer the model “${model}”.`;
    if (problem) {
      status.textContent = `${problem} Check the settings, or save anyway.`;
      status.hidden = false;
      anyway.hidden = false;
      anyway.scrollIntoView({ block: "nearest" });
      return;
    }
    await save();
  });
  return dialog;
}
