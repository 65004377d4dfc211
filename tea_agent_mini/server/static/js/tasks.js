// The scheduled tasks panel (shown when the server has /v1/tasks): list, add, enable/disable,
// run now, recent runs, delete. A prompt task's results live in its own session.
import { h, modal, iconButton, toast, confirmBox } from "./dom.js";
import { listOf, fillPath } from "./features.js";

function when(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString() : "–";
}

export function openTasks(app) {
  const api = app.api;
  const itemPath = app.features.itemPath("/v1/tasks") || "/v1/tasks/{id}";
  const fields = app.features.bodyFields("/v1/tasks", "post");
  const list = h("ul", { class: "panel-list" });
  const name = h("input", { placeholder: "name", "aria-label": "Task name", required: true });
  const schedule = h("input", { placeholder: "daily:08:30 · interval:3600 · cron:*/5 * * * *", "aria-label": "Schedule", required: true });
  const kind = h("select", { "aria-label": "Task kind" }, h("option", { value: "prompt" }, "agent prompt"), h("option", { value: "command" }, "shell command"));
  const text = h("textarea", { rows: 2, placeholder: "What the agent should do (or the command)", "aria-label": "Task prompt or command", required: true });
  const form = h("form", { class: "panel-form" }, h("div", { class: "row" }, name, schedule, kind), text, h("div", { class: "row end" }, h("button", { class: "btn primary", type: "submit" }, "Add task")));
  const dialog = modal("Scheduled tasks", { wide: true });
  dialog.body.append(form, list);

  const act = async (promise, message) => {
    try {
      await promise;
      if (message) toast(message, "ok");
      await load();
    } catch (error) {
      toast(error.message, "error", 6000);
    }
  };

  const showRuns = async (task, box) => {
    try {
      const runs = listOf(await api.get(`${fillPath(itemPath, task.id)}/runs?limit=5`), "runs");
      box.replaceChildren(
        ...(runs.length
          ? runs.map((run) => h("div", { class: `run ${run.status}` }, `${when(run.started_at || run.scheduled_for)} · ${run.status}${run.error ? ` · ${run.error}` : ""}`))
          : [h("div", { class: "muted" }, "No runs yet.")]),
      );
    } catch (error) {
      box.textContent = error.message;
    }
  };

  // The server answers when the run has finished (a prompt task runs a whole turn), so the
  // button says so meanwhile; afterwards the task's recent runs are shown.
  const runNow = async (task, button) => {
    button.disabled = true;
    button.textContent = "Running…";
    try {
      const run = await api.post(`${fillPath(itemPath, task.id)}/run`);
      const status = (run && run.status) || "started";
      toast(`“${task.name}”: ${status}${run && run.error ? ` · ${run.error}` : ""}`, ["ok", "started", "running"].includes(status) ? "ok" : "error", 6000);
      await load();
      const box = list.querySelector(`[data-id="${task.id}"] .runs`);
      if (box) await showRuns(task, box);
    } catch (error) {
      toast(error.message, "error", 6000);
      button.disabled = false;
      button.textContent = "Run now";
    }
  };

  const row = (task) => {
    const runs = h("div", { class: "runs" });
    return h(
      "li",
      { class: task.enabled ? "panel-item" : "panel-item disabled", dataset: { id: task.id } },
      h(
        "div",
        { class: "panel-text" },
        h("strong", {}, task.name),
        h("span", { class: "tag" }, task.schedule),
        h("div", { class: "muted" }, task.prompt || task.command || "", ` · next: ${when(task.next_run_at)}`),
        runs,
      ),
      h(
        "div",
        { class: "panel-actions" },
        h("button", { type: "button", class: "btn small", onclick: () => act(api.patch(fillPath(itemPath, task.id), { enabled: !task.enabled })) }, task.enabled ? "Disable" : "Enable"),
        h("button", { type: "button", class: "btn small", onclick: (event) => runNow(task, event.currentTarget) }, "Run now"),
        h("button", { type: "button", class: "btn small", onclick: () => showRuns(task, runs) }, "Runs"),
        iconButton("trash", "Delete task", async () => {
          if (await confirmBox(`Delete the task “${task.name}”?`)) act(api.del(fillPath(itemPath, task.id)));
        }),
      ),
    );
  };

  async function load() {
    try {
      const tasks = listOf(await api.get("/v1/tasks"), "tasks");
      list.replaceChildren(...(tasks.length ? tasks.map(row) : [h("li", { class: "list-empty" }, "No scheduled tasks.")]));
    } catch (error) {
      list.replaceChildren(h("li", { class: "form-error" }, error.message));
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { name: name.value.trim(), schedule: schedule.value.trim(), [kind.value]: text.value.trim() };
    if (!fields || fields.has("kind")) body.kind = kind.value;
    act(api.post("/v1/tasks", body), "Task added").then(() => form.reset());
  });
  load();
  return dialog;
}
