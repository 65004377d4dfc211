// Learned skills (/v1/skills/learned), each with where it came from and, where recorded, its uses
// and outcomes: view (the instructions rendered, the older versions), edit the whole SKILL.md,
// promote it to the user's own skills, delete it.
import { h, iconButton, smallButton, toast, confirmBox } from "./dom.js";
import { listOf } from "./features.js";
import { renderMarkdown } from "./markdown.js";

const path = (name) => `/v1/skills/learned/${encodeURIComponent(name)}`;
// the instructions: the text after the YAML front matter
const bodyOf = (text) => text.replace(/^---\r?\n[\s\S]*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/, "");

function facts(skill) {
  const used = skill.uses === null ? "" : `${skill.uses} uses · ${skill.successes} ok · ${skill.failures} failed`;
  return [skill.learned_at && `learned ${skill.learned_at}`, used, skill.tools.join(", ")].filter(Boolean).join(" · ");
}

export function learnedSkills(app) {
  const api = app.api;
  const list = h("ul", { class: "panel-list learned" });

  const act = async (question, action, work, done) => {
    if (!(await confirmBox(question, action))) return;
    try {
      await work();
      toast(done, "ok");
      load();
    } catch (error) {
      toast(error.message, "error", 6000);
    }
  };

  async function detail(skill) {
    const data = await api.get(path(skill.name));
    const shown = h("div", { class: "markdown skill-body" });
    renderMarkdown(shown, bodyOf(data.text));
    const text = h("textarea", { class: "skill-text", rows: 16, spellcheck: false, "aria-label": "SKILL.md" });
    const problem = h("div", { class: "form-error" });
    const editing = (on) => {
      form.hidden = !on;
      shown.hidden = on;
    };
    const form = h("form", { class: "panel-form", hidden: true }, text, problem, h("div", { class: "row end" }, smallButton("Cancel", () => editing(false)), h("button", { type: "submit", class: "btn small primary" }, "Save")));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const saved = await api.put(path(skill.name), { text: text.value });
        toast(`Saved ${skill.name} as version ${saved.version}`, "ok");
        load(skill.name);
      } catch (error) {
        problem.textContent = error.message;
      }
    });
    const edit = smallButton("Edit", () => {
      text.value = data.text;
      editing(true);
      text.focus();
    });
    const versions = data.versions.map((old) => h("details", { class: "skill-version" }, h("summary", {}, `Version ${old.version}`), h("pre", { class: "skill-text" }, old.text)));
    return h("div", { class: "skill-detail" }, h("div", { class: "row" }, edit), shown, form, versions);
  }

  const toggle = async (skill, item, button) => {
    const open = item.querySelector(".skill-detail");
    if (open) {
      open.remove();
      button.textContent = "View";
      return;
    }
    try {
      item.append(await detail(skill));
      button.textContent = "Hide";
    } catch (error) {
      toast(error.message, "error", 6000);
    }
  };

  const row = (skill) => {
    const item = h("li", { class: "panel-item learned-skill", dataset: { name: skill.name } });
    const view = smallButton("View", () => toggle(skill, item, view));
    const promote = smallButton("Promote", () =>
      act(`Make “${skill.name}” your own skill? It moves to your skills and is no longer updated from new tasks.`, "Promote", () => api.post(`${path(skill.name)}/promote`), `${skill.name} is your own skill now`),
    );
    const remove = iconButton("trash", "Delete skill", () => act(`Delete the learned skill “${skill.name}” and its older versions?`, "Delete", () => api.del(path(skill.name)), `Deleted ${skill.name}`));
    item.append(
      h(
        "div",
        { class: "panel-text" },
        h("strong", {}, skill.name),
        h("span", { class: "tag" }, `v${skill.version}`),
        skill.score ? h("span", { class: "tag" }, `score ${skill.score}/5`) : null,
        skill.retired ? h("span", { class: "tag" }, "retired") : null,
        h("div", {}, skill.description),
        skill.problem ? h("div", { class: "form-error" }, skill.problem) : null,
        h("div", { class: "muted" }, facts(skill)),
      ),
      h("div", { class: "panel-actions" }, view, promote, remove),
    );
    return item;
  };

  // reopen: the name of a skill whose details to show again
  async function load(reopen = null) {
    try {
      const skills = listOf(await api.get("/v1/skills/learned"));
      list.replaceChildren(...(skills.length ? skills.map(row) : [h("li", { class: "list-empty" }, "No learned skills yet: they come from tasks that went well.")]));
      const item = reopen && list.querySelector(`[data-name="${CSS.escape(reopen)}"]`);
      if (item) item.querySelector(".panel-actions .btn").click();
    } catch (error) {
      list.replaceChildren(h("li", { class: "form-error" }, error.message));
    }
  }
  load();
  return list;
}
