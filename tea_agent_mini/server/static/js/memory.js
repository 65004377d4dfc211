// The memory panel (shown when the server has /v1/memory): list, search, add, change priority,
// pin, delete.
import { h, modal, iconButton, toast, debounce, confirmBox } from "./dom.js";
import { listOf, fillPath } from "./features.js";

const PRIORITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW"];
const CATEGORIES = ["general", "instruction", "preference", "fact", "reminder"];

function priorityIndex(value) {
  if (typeof value === "number") return value;
  const index = PRIORITIES.indexOf(String(value || "").toUpperCase());
  return index < 0 ? 2 : index;
}

function prioritySelect(value, onchange) {
  return h(
    "select",
    { class: "priority", "aria-label": "Priority", onchange },
    PRIORITIES.map((name, index) => h("option", { value: String(index), selected: priorityIndex(value) === index }, name.toLowerCase())),
  );
}

export function openMemory(app) {
  const api = app.api;
  const itemPath = app.features.itemPath("/v1/memory") || "/v1/memory/{id}";
  const list = h("ul", { class: "panel-list" });
  const search = h("input", { type: "search", placeholder: "Search memories…", "aria-label": "Search memories" });
  const content = h("textarea", { rows: 2, placeholder: "Something to remember…", "aria-label": "New memory", required: true });
  const category = h("select", { "aria-label": "Category" }, CATEGORIES.map((name) => h("option", { value: name }, name)));
  const priority = prioritySelect(2);
  const form = h("form", { class: "panel-form" }, content, h("div", { class: "row" }, priority, category, h("button", { class: "btn primary", type: "submit" }, "Add")));
  const dialog = modal("Memory", { wide: true });
  dialog.body.append(form, search, list);

  const change = async (memory, body) => {
    try {
      await api.patch(fillPath(itemPath, memory.id), body);
      await load();
    } catch (error) {
      toast(error.message, "error");
    }
  };

  const row = (memory) =>
    h(
      "li",
      { class: memory.pinned ? "panel-item pinned" : "panel-item", dataset: { id: memory.id } },
      h("div", { class: "panel-text" }, memory.content, memory.category ? h("span", { class: "tag" }, memory.category) : null),
      h(
        "div",
        { class: "panel-actions" },
        prioritySelect(memory.priority, (event) => change(memory, { priority: Number(event.target.value) })),
        h("button", { type: "button", class: "btn small", onclick: () => change(memory, { pinned: !memory.pinned }) }, memory.pinned ? "Unpin" : "Pin"),
        iconButton("trash", "Delete memory", async () => {
          if (!(await confirmBox("Delete this memory?"))) return;
          try {
            await api.del(fillPath(itemPath, memory.id));
            await load();
          } catch (error) {
            toast(error.message, "error");
          }
        }),
      ),
    );

  async function load() {
    const query = search.value.trim();
    try {
      const found = listOf(await api.get(`/v1/memory${query ? `?q=${encodeURIComponent(query)}` : ""}`), "memories", "items");
      list.replaceChildren(...(found.length ? found.map(row) : [h("li", { class: "list-empty" }, "No memories.")]));
    } catch (error) {
      list.replaceChildren(h("li", { class: "form-error" }, error.message));
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!content.value.trim()) return;
    const body = { content: content.value.trim(), priority: Number(priority.value), category: category.value };
    try {
      await api.post("/v1/memory", body);
      content.value = "";
      await load();
    } catch (error) {
      toast(error.message, "error");
    }
  });
  search.addEventListener("input", debounce(load, 200));
  load();
  return dialog;
}
