// The flow runs panel (shown when the server has /v1/flows/runs): the saved runs of flows and
// workflows, newest first; "Details" shows a run's finished steps and its trace (steps, agents,
// waits) as a timeline, each span a bar placed by its start and length within the run.
import { h, modal, smallButton, toast, localTime } from "./dom.js";
import { listOf } from "./features.js";

const seconds = (value) => (typeof value !== "number" ? "" : value < 1 ? `${Math.round(value * 1000)} ms` : `${value.toFixed(value < 10 ? 2 : 1)} s`);

function timeline(run) {
  const spans = run.trace || [];
  const start = run.started || Math.min(...spans.map((s) => s.started));
  const end = Math.max(run.finished || 0, ...spans.map((s) => s.finished || s.started), start + 0.001);
  const bar = (span) => {
    const el = h("span", { class: "span-bar" });
    el.style.marginLeft = `${((span.started - start) / (end - start)) * 100}%`;
    el.style.width = `${Math.max(0.5, ((span.duration || 0) / (end - start)) * 100)}%`;
    return h("div", { class: "span-track" }, el);
  };
  return h(
    "ul",
    { class: "trace" },
    spans.map((span) =>
      h(
        "li",
        { class: `span ${span.kind} ${span.ok === false ? "failed" : "ok"}`, title: span.error || "" },
        h("div", { class: "span-line" }, h("span", { class: "tag" }, span.kind), h("b", {}, span.name), span.step && span.step !== span.name ? h("span", { class: "muted" }, `in ${span.step}`) : null, h("span", { class: "span-time" }, span.finished ? seconds(span.duration) : "running"), span.error ? h("div", { class: "span-error" }, span.error) : null),
        bar(span),
      ),
    ),
  );
}

function details(run) {
  const steps = (run.steps || []).map((step) => h("li", {}, h("b", {}, step.name), step.trigger ? ` ← ${step.trigger}` : "", ` · ${seconds(step.finished - step.started)}`));
  return h(
    "div",
    { class: "flow-detail" },
    h("div", { class: "label" }, "Steps"),
    steps.length ? h("ol", { class: "flow-steps" }, steps) : h("div", { class: "muted" }, "No finished steps."),
    run.failed_step ? h("div", { class: "form-error" }, `Failed in ${run.failed_step}`) : null,
    h("div", { class: "label" }, "Trace"),
    run.trace && run.trace.length ? timeline(run) : h("div", { class: "muted" }, "No trace."),
  );
}

export function openFlows(app) {
  const api = app.api;
  const list = h("ul", { class: "panel-list" });
  const dialog = modal("Flow runs", { wide: true });
  dialog.body.append(h("div", { class: "row" }, smallButton("Refresh", () => load())), list);

  const toggle = async (run, item, button) => {
    const open = item.querySelector(".flow-detail");
    if (open) {
      open.remove();
      button.textContent = "Details";
      return;
    }
    try {
      item.append(details(await api.get(`/v1/flows/runs/${encodeURIComponent(run.run_id)}`)));
      button.textContent = "Hide";
    } catch (error) {
      toast(error.message, "error", 6000);
    }
  };

  const row = (run) => {
    const item = h("li", { class: `panel-item flow-run ${run.status}`, dataset: { run: run.run_id } });
    const took = run.finished ? ` · ${seconds(run.finished - run.started)}` : "";
    const button = smallButton("Details", () => toggle(run, item, button));
    item.append(
      h(
        "div",
        { class: "panel-text" },
        h("strong", {}, run.flow),
        h("span", { class: "tag" }, run.kind),
        h("span", { class: `status ${run.status}` }, run.status),
        h("div", { class: "muted" }, `${localTime(run.started)} · ${run.steps} step${run.steps === 1 ? "" : "s"}${took}`),
        run.error ? h("div", { class: "form-error" }, run.error) : null,
      ),
      h("div", { class: "panel-actions" }, button),
    );
    return item;
  };

  async function load() {
    try {
      const runs = listOf(await api.get("/v1/flows/runs?limit=100"));
      list.replaceChildren(...(runs.length ? runs.map(row) : [h("li", { class: "list-empty" }, "No flow runs yet.")]));
    } catch (error) {
      list.replaceChildren(h("li", { class: "form-error" }, error.message));
    }
  }
  load();
  return dialog;
}
