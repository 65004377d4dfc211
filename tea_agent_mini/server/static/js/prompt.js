// The versions of the agent's guidelines (/v1/prompts), each with how the turns that ran with it
// ended: evolve (the model proposes a revision, shown as a diff to accept or leave), roll back,
// use an older version, or set a text of one's own. A change applies from the next turn.
import { h, smallButton, toast, localTime } from "./dom.js";
import { listOf } from "./features.js";

const KINDS = [["+", "add"], ["-", "del"], ["@@", "hunk"]];

export function diffView(text) {
  const kind = (line) => (line.startsWith("+++") || line.startsWith("---") ? "" : (KINDS.find(([mark]) => line.startsWith(mark)) || [])[1] || "");
  return h("pre", { class: "diff" }, text.split("\n").map((line) => h("span", { class: kind(line) }, `${line}\n`)));
}

const turns = (t) => (t.total ? `${t.total} turns: ${t.completed} completed · ${t.stopped} stopped · ${t.failed} failed` : "no turns yet");

export function promptVersions(app) {
  const api = app.api;
  const current = h("p", { class: "muted prompt-current" });
  const list = h("ul", { class: "panel-list prompt-versions" });
  const proposal = h("div", { class: "proposal", hidden: true });
  const text = h("textarea", { class: "skill-text", rows: 10, spellcheck: false, "aria-label": "Guidelines" });
  const note = h("input", { "aria-label": "Note", placeholder: "What changed (optional)" });
  const problem = h("div", { class: "form-error" });
  const form = h("form", { class: "panel-form" }, text, h("div", { class: "row" }, note, h("button", { type: "submit", class: "btn small primary" }, "Set")), problem);

  // run a change, say what is in use now, and show the list again
  const change = async (work) => {
    try {
      const active = await work();
      toast(`Version ${active.version} is in use from the next turn`, "ok");
      await load();
      return true;
    } catch (error) {
      toast(error.message, "error", 8000);
      return false;
    }
  };
  const accept = (version) => change(() => api.post(`/v1/prompts/${version}/accept`));

  const row = (v) => {
    const shown = h("pre", { class: "skill-text", hidden: true }, v.text);
    return h(
      "li",
      { class: `panel-item prompt-version ${v.status}`, dataset: { version: v.version } },
      h(
        "div",
        { class: "panel-text" },
        h("strong", {}, `Version ${v.version}`),
        h("span", { class: "tag" }, v.source),
        h("span", { class: `status ${v.status}` }, v.in_use ? "in use" : v.status),
        v.note ? h("div", {}, v.note) : null,
        h("div", { class: "muted" }, `${v.created_at ? `${localTime(v.created_at)} · ` : ""}${turns(v.turns)}`),
        shown,
      ),
      h(
        "div",
        { class: "panel-actions" },
        smallButton("Text", () => (shown.hidden = !shown.hidden)),
        v.status === "proposed" ? smallButton("Accept", () => accept(v.version)) : null,
        v.status === "retired" && !v.in_use ? smallButton("Use", () => change(() => api.post("/v1/prompts/rollback", { to: v.version }))) : null,
      ),
    );
  };

  async function evolve(button) {
    button.disabled = true;
    button.textContent = "Asking the model…";
    try {
      const made = await api.post("/v1/prompts/evolve", {});
      const number = made.proposal.version;
      const take = h("button", { type: "button", class: "btn small primary", onclick: async () => (proposal.hidden = await accept(number)) }, "Accept");
      proposal.replaceChildren(h("div", {}, h("strong", {}, `Proposed version ${number}`), ` (${made.summary})`), diffView(made.diff), h("div", { class: "row end" }, smallButton("Leave it", () => (proposal.hidden = true)), take));
      proposal.hidden = false;
      await load();
    } catch (error) {
      toast(error.message, "error", 8000);
    } finally {
      button.disabled = false;
      button.textContent = "Evolve";
    }
  }

  async function load() {
    try {
      const page = await api.get("/v1/prompts?limit=50");
      current.textContent = `In use: version ${page.current.version} (${page.current.source}) · ${turns(page.current.turns)}`;
      if (!text.value) text.value = page.current.text;
      list.replaceChildren(...listOf(page).map(row));
    } catch (error) {
      list.replaceChildren(h("li", { class: "form-error" }, error.message));
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    try {
      const added = await api.post("/v1/prompts", { text: text.value, note: note.value.trim() });
      toast(`Version ${added.version} is in use from the next turn`, "ok");
      note.value = "";
      await load();
    } catch (error) {
      problem.textContent = error.message;
    }
  });
  const evolveButton = smallButton("Evolve", () => evolve(evolveButton), "The model proposes a revision from evaluations, lessons and your instructions");
  load();
  return h(
    "div",
    {},
    current,
    h("div", { class: "row" }, evolveButton, smallButton("Roll back", () => change(() => api.post("/v1/prompts/rollback", {}))), smallButton("Refresh", load)),
    proposal,
    list,
    h("details", { class: "prompt-set" }, h("summary", {}, "Set your own guidelines"), form),
  );
}
