// The learning panel: what the agent learned from its work, one tab each for what the server
// offers — evaluations of finished tasks with the lessons drawn (/v1/evaluations, /v1/lessons),
// learned skills (skills.js) and the versions of its guidelines (prompt.js).
import { h, icon, modal, iconButton, smallButton, toast, confirmBox, localTime } from "./dom.js";
import { listOf } from "./features.js";
import { learnedSkills } from "./skills.js";
import { promptVersions } from "./prompt.js";

export const hasLearning = (features) => ["/v1/evaluations", "/v1/skills/learned", "/v1/prompts"].some((path) => features.has(path));

function evaluations(app) {
  const api = app.api;
  const outcome = h("select", { "aria-label": "Outcome", onchange: () => load() }, ["", "success", "partial", "failed"].map((v) => h("option", { value: v }, v || "all outcomes")));
  const list = h("ul", { class: "panel-list evaluations" });
  const lessons = h("ul", { class: "panel-list lessons" });

  const row = (e) =>
    h(
      "li",
      { class: `panel-item evaluation ${e.outcome}`, dataset: { id: e.id } },
      h(
        "div",
        { class: "panel-text" },
        h("span", { class: `status ${e.outcome}` }, e.outcome),
        h("span", { class: "tag" }, `quality ${e.quality}/5`),
        h("span", { class: "tag" }, e.source),
        e.rating ? h("span", { class: `rating ${e.rating}`, title: `you rated it ${e.rating}` }, icon(e.rating), e.comment || "") : null,
        h("div", { class: "eval-request" }, e.user_text),
        e.tools.length ? h("div", { class: "muted mono" }, e.tools.join(" → ")) : null,
        h("div", { class: "muted" }, `${localTime(e.created)}${e.reason ? ` · ${e.reason}` : ""}`),
      ),
      h("div", { class: "panel-actions" }, h("a", { class: "btn small", href: "#", dataset: { session: e.session_id } }, "Open")),
    );

  const lessonRow = (lesson) =>
    h(
      "li",
      { class: "panel-item lesson", dataset: { id: lesson.id } },
      h("div", { class: "panel-text" }, h("span", { class: "tag" }, lesson.category), ` ${lesson.mistake}`, h("div", { class: "muted" }, `Instead: ${lesson.instead}`)),
      iconButton("trash", "Delete lesson", async () => {
        if (!(await confirmBox("Forget this lesson?"))) return;
        try {
          await api.del(`/v1/lessons/${lesson.id}`);
          load();
        } catch (error) {
          toast(error.message, "error");
        }
      }),
    );

  const fill = async (target, path, make, empty) => {
    try {
      const items = listOf(await api.get(path));
      target.replaceChildren(...(items.length ? items.map(make) : [h("li", { class: "list-empty" }, empty)]));
    } catch (error) {
      target.replaceChildren(h("li", { class: "form-error" }, error.message));
    }
  };
  function load() {
    const filter = outcome.value ? `&outcome=${outcome.value}` : "";
    fill(list, `/v1/evaluations?limit=50${filter}`, row, "No evaluated tasks yet.");
    if (app.features.has("/v1/lessons")) fill(lessons, "/v1/lessons?limit=50", lessonRow, "No lessons yet.");
  }
  load();
  return h("div", {}, h("div", { class: "row" }, outcome, smallButton("Refresh", load)), list, h("h3", {}, "Lessons"), lessons);
}

export function openLearning(app) {
  const tabs = [
    ["Evaluations", "/v1/evaluations", evaluations],
    ["Skills", "/v1/skills/learned", learnedSkills],
    ["Prompt", "/v1/prompts", promptVersions],
  ].filter(([, path]) => app.features.has(path));
  const pane = h("div", { class: "learning-pane" });
  const dialog = modal("Learning", { wide: true });
  const radios = tabs.map(([label, , make], index) =>
    h("label", { class: "seg" }, h("input", { type: "radio", name: "learning-tab", checked: index === 0, onchange: () => pane.replaceChildren(make(app)) }), h("span", {}, label)),
  );
  dialog.body.append(h("div", { class: "segmented", role: "radiogroup", "aria-label": "What to show" }, radios), pane);
  if (tabs.length) pane.append(tabs[0][2](app));
  return dialog;
}
