// The scheduled tasks panel (shown when the server has /v1/tasks): list, add, enable/disable,
// run now, recent runs, delete. While a schedule is typed, GET /v1/tasks/preview shows its next
// fire times (or the parser's complaint). "Run now" starts the run in the background
// (?wait=false) and follows it in the task's recent runs until it ends. A prompt task's results
// live in its own session.
import { h, modal, iconButton, toast, confirmBox, debounce } from "./dom.js";
import { listOf, fillPath } from "./features.js";

const POLL_MS = 1000;
const PREVIEW_COUNT = 3;
const SCHEDULE_HELP = "once:2026-12-24T18:00 · interval:3600 (seconds) · hourly:15 · daily:08:30 · weekly:mon,fri:09:00 · cron:*/15 9-17 * * mon-fri · add tz=Europe/Berlin for a zone";
const KINDS = {
  prompt: {
    label: "agent prompt",
    help: "Each run is an agent turn in the task's own session; the answer is kept there.",
    placeholder: "What the agent should do, e.g. Summarise the news",
  },
  command: {
    label: "shell command",
    help: "Runs in the workspace; its output and exit code are kept with the run.",
    placeholder: "The command, e.g. df -h",
  },
};

function when(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString() : "–";
}

function shortTime(iso) {
  return new Date(iso).toLocaleString([], { weekday: "short", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

function runLine(run) {
  const took = typeof run.duration === "number" ? ` · ${run.duration.toFixed(1)} s` : "";
  return h(
    "div",
    { class: `run ${run.status}`, dataset: { run: run.id } },
    run.status === "running" ? h("span", { class: "spinner", title: "running" }) : null,
    `${when(run.started_at || run.scheduled_for)} · ${run.status}${took}${run.error ? ` · ${run.error}` : ""}`,
  );
}

// The schedule field with its formats and a live preview of the next fire times.
function scheduleField(api) {
  const input = h("input", { name: "schedule", placeholder: "e.g. daily:08:30", "aria-label": "Schedule", required: true, autocomplete: "off", title: SCHEDULE_HELP });
  const preview = h("div", { class: "schedule-preview", "aria-live": "polite" });
  let ticket = 0;
  const show = debounce(async () => {
    const text = input.value.trim();
    const mine = ++ticket;
    if (!text) {
      preview.replaceChildren();
      preview.className = "schedule-preview";
      return;
    }
    let answer;
    try {
      answer = await api.get(`/v1/tasks/preview?count=${PREVIEW_COUNT}&schedule=${encodeURIComponent(text)}`);
    } catch (error) {
      if (mine !== ticket) return;
      preview.className = "schedule-preview error";
      preview.replaceChildren(error.message);
      return;
    }
    if (mine !== ticket) return;
    preview.className = "schedule-preview ok";
    preview.replaceChildren(`${answer.description} — next: ${answer.next.map(shortTime).join(" · ")}`);
  }, 300);
  input.addEventListener("input", show);
  const el = h("label", { class: "field" }, h("span", { class: "field-label" }, "Schedule"), input, h("small", {}, SCHEDULE_HELP), preview);
  return { el, input, reset: () => { input.value = ""; show(); } };
}

export function openTasks(app) {
  const api = app.api;
  const itemPath = app.features.itemPath("/v1/tasks") || "/v1/tasks/{id}";
  const fields = app.features.bodyFields("/v1/tasks", "post");
  const list = h("ul", { class: "panel-list" });
  const runsShown = new Map(); // task id -> its recent runs, kept open across reloads of the list
  const name = h("input", { placeholder: "e.g. morning news", "aria-label": "Task name", required: true, autocomplete: "off" });
  const schedule = scheduleField(api);
  const kind = h("select", { "aria-label": "Task kind", title: "What a run does" }, Object.entries(KINDS).map(([value, k]) => h("option", { value, title: k.help }, k.label)));
  const kindHelp = h("small", { class: "muted kind-help" });
  const text = h("textarea", { rows: 2, "aria-label": "Task prompt or command", required: true });
  const showKind = () => {
    kindHelp.textContent = KINDS[kind.value].help;
    text.placeholder = KINDS[kind.value].placeholder;
  };
  kind.addEventListener("change", showKind);
  showKind();
  const form = h(
    "form",
    { class: "panel-form" },
    h("div", { class: "row" }, h("label", { class: "field grow" }, h("span", { class: "field-label" }, "Name"), name), h("label", { class: "field" }, h("span", { class: "field-label" }, "Kind"), kind)),
    schedule.el,
    h("label", { class: "field" }, h("span", { class: "field-label" }, "What to do"), text, kindHelp),
    h("div", { class: "row end" }, h("button", { class: "btn primary", type: "submit" }, "Add task")),
  );
  const dialog = modal("Scheduled tasks", { wide: true });
  dialog.body.append(form, list);

  // true when it worked; what went wrong is shown
  const act = async (promise, message) => {
    try {
      await promise;
    } catch (error) {
      toast(error.message, "error", 6000);
      return false;
    }
    if (message) toast(message, "ok");
    await load();
    return true;
  };

  const renderRuns = (taskId) => {
    const box = list.querySelector(`[data-id="${taskId}"] .runs`);
    const runs = runsShown.get(taskId);
    if (!box || !runs) return;
    box.replaceChildren(...(runs.length ? runs.map(runLine) : [h("div", { class: "muted" }, "No runs yet.")]));
  };

  const fetchRuns = async (task) => {
    try {
      runsShown.set(task.id, listOf(await api.get(`${fillPath(itemPath, task.id)}/runs?limit=5`), "runs"));
      renderRuns(task.id);
    } catch (error) {
      toast(error.message, "error", 6000);
    }
    return runsShown.get(task.id) || [];
  };

  // Starts the run and returns at once; the run's line follows it until it has ended.
  const runNow = async (task, button) => {
    button.disabled = true;
    button.textContent = "Running…";
    let run;
    try {
      run = await api.post(`${fillPath(itemPath, task.id)}/run?wait=false`);
    } catch (error) {
      toast(error.message, "error", 6000);
      button.disabled = false;
      button.textContent = "Run now";
      return;
    }
    runsShown.set(task.id, [run, ...(runsShown.get(task.id) || []).filter((r) => r.id !== run.id)]);
    renderRuns(task.id);
    let current = run;
    while (current.status === "running" && dialog.dialog.open) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      current = (await fetchRuns(task)).find((r) => r.id === run.id) || { ...current, status: "unknown" };
    }
    if (!dialog.dialog.open) return;
    const good = current.status === "ok";
    toast(`“${task.name}”: ${current.status}${current.error ? ` · ${current.error}` : ""}`, good ? "ok" : "error", 6000);
    await load();
  };

  const row = (task) => {
    const running = Boolean(task.running);
    return h(
      "li",
      { class: task.enabled ? "panel-item" : "panel-item disabled", dataset: { id: task.id } },
      h(
        "div",
        { class: "panel-text" },
        h("strong", {}, task.name),
        h("span", { class: "tag", title: task.description || "" }, task.schedule),
        h("div", { class: "muted" }, task.prompt || task.command || "", ` · next: ${when(task.next_run_at)}`),
        h("div", { class: "runs" }),
      ),
      h(
        "div",
        { class: "panel-actions" },
        h("button", { type: "button", class: "btn small", title: task.enabled ? "Stop running it on its schedule" : "Run it on its schedule again", onclick: () => act(api.patch(fillPath(itemPath, task.id), { enabled: !task.enabled })) }, task.enabled ? "Disable" : "Enable"),
        h("button", { type: "button", class: "btn small", title: "Run it once now, whatever its schedule", disabled: running, onclick: (event) => runNow(task, event.currentTarget) }, running ? "Running…" : "Run now"),
        h("button", { type: "button", class: "btn small", title: "Its last five runs", onclick: () => fetchRuns(task) }, "Runs"),
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
      for (const task of tasks) renderRuns(task.id);
    } catch (error) {
      list.replaceChildren(h("li", { class: "form-error" }, error.message));
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { name: name.value.trim(), schedule: schedule.input.value.trim(), [kind.value]: text.value.trim() };
    if (!fields || fields.has("kind")) body.kind = kind.value;
    act(api.post("/v1/tasks", body), "Task added").then((added) => {
      if (!added) return; // what was typed stays, to be corrected
      form.reset();
      schedule.reset();
      showKind();
    });
  });
  load();
  return dialog;
}
