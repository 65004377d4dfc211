// Adding a model profile: the first-run setup (the server starts without a model) and "Add a
// profile" in the settings. POST /v1/profiles validates and saves, POST /v1/config/switch uses it.
import { h, modal, toast } from "./dom.js";

function field(label, input, hint) {
  return h("label", { class: "field" }, h("span", { class: "field-label" }, label), input, hint ? h("small", {}, hint) : null);
}

function profileConfig(values) {
  const main = { api_url: values.api_url.trim(), model_name: values.model_name.trim() };
  if (values.api_key.trim()) main.api_key = values.api_key.trim();
  const context = parseInt(values.max_context_tokens, 10);
  if (context > 0) main.max_context_tokens = context;
  return { main_model: main };
}

export function openSetup(app, { firstRun = false } = {}) {
  const inputs = {
    name: h("input", { name: "name", required: true, value: firstRun ? "default" : "", autocomplete: "off" }),
    api_url: h("input", { name: "api_url", required: true, type: "url", placeholder: "http://127.0.0.1:8000/v1", autocomplete: "off" }),
    api_key: h("input", { name: "api_key", type: "password", placeholder: "optional for local servers", autocomplete: "off" }),
    model_name: h("input", { name: "model_name", required: true, placeholder: "e.g. qwen2.5-7b-instruct", autocomplete: "off" }),
    max_context_tokens: h("input", { name: "max_context_tokens", type: "number", min: "0", step: "1024", placeholder: "auto" }),
  };
  const overwrite = h("input", { type: "checkbox", name: "overwrite" });
  const overwriteRow = h("label", { class: "check", hidden: true }, overwrite, " Replace the existing profile of that name");
  const status = h("p", { class: "form-error", role: "alert", hidden: true });
  const submit = h("button", { class: "btn primary", type: "submit" }, "Save and use");
  const form = h(
    "form",
    { class: "setup-form", novalidate: false },
    firstRun
      ? h("p", { class: "lead" }, "No model is configured yet. Point tea-agent-mini at any OpenAI-compatible server (llama.cpp, Ollama, vLLM, a cloud API).")
      : null,
    field("Profile name", inputs.name, firstRun ? "“default” is used when the server starts." : "letters, digits, - _ ."),
    field("API base URL", inputs.api_url),
    field("API key", inputs.api_key),
    field("Model name", inputs.model_name),
    field("Context window (tokens)", inputs.max_context_tokens),
    overwriteRow,
    status,
    h("div", { class: "row end" }, submit),
  );
  const dialog = modal(firstRun ? "Welcome — set up a model" : "Add a model profile", {});
  dialog.dialog.classList.add("setup-dialog");
  dialog.body.append(form);
  inputs[firstRun ? "api_url" : "name"].focus();

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(Object.entries(inputs).map(([k, input]) => [k, input.value]));
    status.hidden = true;
    submit.disabled = true;
    try {
      const name = values.name.trim();
      await app.api.post("/v1/profiles", { name, config: profileConfig(values), overwrite: overwrite.checked });
      await app.api.post("/v1/config/switch", { profile: name });
      dialog.close();
      toast(`Using profile “${name}” (${values.model_name.trim()})`, "ok");
      await app.loadConfig();
    } catch (error) {
      status.textContent = error.message;
      status.hidden = false;
      if (error.status === 409 && /exists/.test(error.message)) overwriteRow.hidden = false;
    } finally {
      submit.disabled = false;
    }
  });
  return dialog;
}
