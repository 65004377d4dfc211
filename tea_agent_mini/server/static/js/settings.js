// Settings: theme and accent (remembered in localStorage), the model profile, tool approval, the
// API key.
import { h, modal, toast } from "./dom.js";
import { prefs, setTheme, setAccent, DEFAULT_ACCENT } from "./prefs.js";
import { openSetup, editProfile } from "./setup.js";

const ACCENTS = ["#3b82f6", "#10b981", "#8b5cf6", "#f59e0b", "#ef4444", "#ec4899", "#14b8a6"];

export function toggleTheme() {
  const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
  setTheme(next);
  return next;
}

function section(title, ...children) {
  return h("section", { class: "settings-section" }, h("h3", {}, title), ...children);
}

function appearance() {
  const current = document.documentElement.dataset.theme;
  const radios = ["light", "dark"].map((theme) =>
    h(
      "label",
      { class: "seg" },
      h("input", { type: "radio", name: "theme", value: theme, checked: current === theme, onchange: () => setTheme(theme) }),
      h("span", {}, theme === "dark" ? "Dark" : "Light"),
    ),
  );
  const color = h("input", { type: "color", value: prefs.get("accent", DEFAULT_ACCENT), "aria-label": "Accent colour", oninput: (e) => setAccent(e.target.value) });
  const swatches = ACCENTS.map((value) =>
    h("button", {
      type: "button",
      class: "swatch",
      title: value,
      "aria-label": `Accent ${value}`,
      style: `background:${value}`,
      onclick: () => {
        setAccent(value);
        color.value = value;
      },
    }),
  );
  return section("Appearance", h("div", { class: "segmented", role: "radiogroup", "aria-label": "Theme" }, radios), h("div", { class: "row swatches" }, swatches, color));
}

async function profiles(app, close) {
  const select = h("select", { "aria-label": "Model profile", class: "profile-select" });
  const info = h("p", { class: "muted" });
  const editable = new Set(); // profiles with a valid file of their own
  const edit = h("button", { type: "button", class: "btn", title: "Change the selected profile", onclick: () => { close(); editProfile(app, select.value); } }, "Edit…");
  const add = h("button", { type: "button", class: "btn", onclick: () => { close(); openSetup(app); } }, "Add a profile…");
  const box = section("Model profile", h("div", { class: "row" }, select, edit, add), info);
  try {
    const list = await app.api.get("/v1/profiles");
    for (const profile of list.data) {
      const label = profile.model_name ? `${profile.name} — ${profile.model_name}` : profile.error ? `${profile.name} (invalid)` : profile.name;
      select.append(h("option", { value: profile.name, selected: profile.active, disabled: Boolean(profile.error) }, label));
      if (profile.file !== false && !profile.error) editable.add(profile.name);
    }
  } catch (error) {
    info.textContent = error.message;
  }
  const updateEdit = () => {
    edit.disabled = !editable.has(select.value);
  };
  updateEdit();
  const config = app.config;
  if (config) {
    const main = config.config.main_model;
    info.textContent = config.model_configured ? `Active: ${config.profile} · ${main.model_name} at ${main.api_url}` : "No model configured in the active profile.";
  }
  select.addEventListener("change", async () => {
    try {
      await app.api.post("/v1/config/switch", { profile: select.value });
      await app.loadConfig();
      toast(`Switched to “${select.value}”`, "ok");
      info.textContent = `Active: ${select.value} · ${app.config.config.main_model.model_name || "no model"}`;
    } catch (error) {
      toast(error.message, "error", 6000);
      select.value = app.config ? app.config.profile : select.value;
    }
    updateEdit();
  });
  return box;
}

const APPROVALS = [
  ["auto", "Run freely", "Tools run without asking"],
  ["ask", "Ask me first", "Writing files or running commands waits for your click"],
  [
    "never",
    "Read-only",
    "Files and commands are refused; the conversation, memories, todos and plans are still saved",
  ],
];

// agent.approval for this server run: whether tools that write files or run commands need a click.
function approval(app) {
  const current = app.config ? app.config.config.agent.approval : "auto";
  const radios = APPROVALS.map(([value, label, hint]) =>
    h(
      "label",
      { class: "seg", title: hint },
      h("input", {
        type: "radio",
        name: "approval",
        value,
        checked: current === value,
        onchange: async () => {
          try {
            await app.api.patch("/v1/config", { agent: { approval: value } });
            await app.loadConfig();
            toast(`Tools: ${label.toLowerCase()}`, "ok");
          } catch (error) {
            toast(error.message, "error", 6000);
          }
        },
      }),
      h("span", {}, label),
    ),
  );
  return section(
    "Tools that change things",
    h("div", { class: "segmented", role: "radiogroup", "aria-label": "Tool approval" }, radios),
    h("p", { class: "muted" }, "Writing files and running commands: without asking, after your Allow, or never. Until the server restarts."),
  );
}

function apiKey(app) {
  const input = h("input", { type: "password", value: app.api.key, placeholder: "not set", "aria-label": "API key", autocomplete: "off" });
  const required = app.config && app.config.auth_required;
  return section(
    "API key",
    h("p", { class: "muted" }, required ? "This server needs a key; it is kept in this browser." : "This server does not ask for a key."),
    h(
      "div",
      { class: "row" },
      input,
      h("button", { type: "button", class: "btn", onclick: () => { app.api.setKey(input.value.trim()); toast("Key saved", "ok"); } }, "Save"),
      h("button", { type: "button", class: "btn", onclick: () => { app.api.setKey(""); input.value = ""; toast("Key forgotten", "ok"); } }, "Forget"),
    ),
  );
}

export async function openSettings(app) {
  const dialog = modal("Settings");
  dialog.dialog.classList.add("settings-dialog");
  dialog.body.append(appearance(), await profiles(app, dialog.close), approval(app), apiKey(app), h("p", { class: "muted" }, h("a", { href: "/docs", target: "_blank", rel: "noopener" }, "API documentation")));
  return dialog;
}

// Asked when the server answers 401: resolves to the key, or null when dismissed. `wrong`: the
// request carried a key and the server refused it.
export function askApiKey({ wrong = false } = {}) {
  return new Promise((resolve) => {
    let key = null;
    const dialog = modal("API key needed", { onclose: () => resolve(key) });
    const input = h("input", { type: "password", "aria-label": "API key", autocomplete: "off", required: true });
    const form = h(
      "form",
      { class: "key-form" },
      h("p", {}, "This server asks for an API key (server.api_key or --api-key). It is kept in this browser."),
      wrong ? h("p", { class: "form-error", role: "alert" }, "Wrong key: the server refused it. Check it and try again.") : null,
      input,
      h("div", { class: "row end" }, h("button", { type: "submit", class: "btn primary" }, "Continue")),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      key = input.value.trim() || null;
      dialog.close();
    });
    dialog.body.append(form);
    input.focus();
  });
}
